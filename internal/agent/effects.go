package agent

import (
	"regexp"
	"strings"
)

// Effect is how much an action changes outside the page.
type Effect int

const (
	// NoEffect: reading, typing into a field, following a link.
	NoEffect Effect = iota
	// SideEffect: it sends something to a site (a form submitted, a
	// POST): a resumed run never repeats one whose outcome was not
	// recorded without asking the person, and confirm "always" asks
	// before each.
	SideEffect
	// Commit: a side effect a person would want to approve: paying,
	// ordering, deleting, submitting, confirming (by the element's
	// name). confirm "side-effects", the default, asks before each.
	Commit
)

// String names the effect as events and checkpoints show it.
func (e Effect) String() string {
	switch e {
	case SideEffect:
		return "side-effect"
	case Commit:
		return "commit"
	}
	return "none"
}

// commitWords are names of buttons whose click commits the person: the
// words of purchase, payment, deletion and final submission in English,
// German, French, Spanish, Italian, Portuguese and Dutch, matched as whole
// words (letters of any script count as word characters, so "confirmar"
// is its own word, not "confirm" plus letters).
var commitWords = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])(` +
	// English
	`buy|pay|payment|purchase|order|checkout|check out|delete|remove|erase|destroy|submit|confirm|transfer|send money|subscribe|book|donate|unsubscribe|close account|` +
	// German
	`kaufen|jetzt kaufen|bezahlen|zahlen|bestellen|zahlungspflichtig bestellen|kasse|löschen|entfernen|absenden|senden|bestätigen|überweisen|abonnieren|buchen|spenden|kündigen|` +
	// French
	`acheter|payer|commander|valider la commande|supprimer|effacer|envoyer|soumettre|confirmer|valider|virement|s'abonner|réserver|faire un don|` +
	// Spanish and Portuguese
	`comprar|pagar|pedido|realizar pedido|finalizar compra|eliminar|borrar|excluir|apagar|enviar|confirmar|transferir|suscribirse|assinar|reservar|donar|doar|` +
	// Italian
	`acquista|paga|ordina|elimina|cancella|invia|conferma|prenota|dona|` +
	// Dutch
	`kopen|betalen|afrekenen|verwijderen|verzenden|bevestigen|boeken|doneren` +
	`)(?:$|[^\p{L}\p{N}])`)

// commitWordsCJK are the same words in Chinese, Japanese and Korean, whose
// scripts do not separate words: matched anywhere in the name. (Japanese
// 確認, "review", often leads to a confirmation screen and is left out;
// 確定 commits.)
var commitWordsCJK = regexp.MustCompile(`购买|購買|支付|付款|下单|下單|提交订单|提交訂單|删除|刪除|提交|确认|確認付款|转账|轉帳|订阅|訂閱|预订|預訂|捐赠|捐贈|` +
	`購入|支払|注文|削除|送信|確定|予約|寄付|` +
	`구매|결제|주문|삭제|제출|송금|구독|예약|기부`)

// isCommitName reports whether a button's name reads as a commitment.
func isCommitName(name string) bool {
	return commitWords.MatchString(name) || commitWordsCJK.MatchString(name)
}

// Element is what Classify knows of the element an action targets.
type Element struct {
	// Tag is the lower-case tag name; Type the input/button type.
	Tag, Type string
	// Name is the text a person reads on it (label, value, text).
	Name string
	// Submits says a click on it submits a form (a submit button of a
	// form); FormMethod is that form's method in lower case.
	Submits    bool
	FormMethod string
	// InForm says the element is inside a form (Enter in a field of one
	// submits it).
	InForm bool
	// Pays says the form takes a payment card (snapshot.Described.Pays):
	// sending it is a Commit whatever its button reads.
	Pays bool
}

// Classify says what a click (or Enter pressed in a field: pressEnter)
// on el does to the world. A click on a button whose name reads as a
// purchase, deletion or final submission (commitWords), or on a button of
// a form that takes a payment card, is a Commit, and so is Enter in a
// field of such a form; any other submission of a POST form (including
// Enter in one of its fields) is a SideEffect; the rest is NoEffect:
// links and GET forms only read (a search), fields change nothing until
// sent. A script's button may still post, which the name rule catches
// when it reads as one.
func Classify(action string, el Element, pressEnter bool) Effect {
	post := el.FormMethod == "post"
	switch action {
	case Click:
		button := el.Tag == "button" || (el.Tag == "input" && (el.Type == "submit" || el.Type == "button" || el.Type == "image")) || el.Submits
		if button && (isCommitName(el.Name) || (el.InForm && el.Pays)) {
			return Commit
		}
		if el.Submits && post {
			return SideEffect
		}
	case Press:
		if pressEnter && el.InForm && el.Pays {
			return Commit
		}
		if pressEnter && el.InForm && post {
			return SideEffect
		}
	}
	return NoEffect
}

// IsEnter reports whether key is the Enter key.
func IsEnter(key string) bool { return strings.EqualFold(strings.TrimSpace(key), "enter") }

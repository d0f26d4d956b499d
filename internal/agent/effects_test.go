package agent

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		action string
		el     Element
		enter  bool
		want   Effect
	}{
		{Click, Element{Tag: "button", Name: "Place order", Submits: true, InForm: true, FormMethod: "post"}, false, Commit},
		{Click, Element{Tag: "button", Type: "button", Name: "Delete account"}, false, Commit},
		{Click, Element{Tag: "input", Type: "submit", Name: "Pay now", Submits: true, InForm: true, FormMethod: "post"}, false, Commit},
		{Click, Element{Tag: "button", Name: "Sign in", Submits: true, InForm: true, FormMethod: "post"}, false, SideEffect},
		{Click, Element{Tag: "button", Name: "Search", Submits: true, InForm: true, FormMethod: "get"}, false, NoEffect},
		{Click, Element{Tag: "a", Name: "Your orders"}, false, NoEffect},
		{Click, Element{Tag: "button", Name: "Next", Submits: true, InForm: true, FormMethod: "get"}, false, NoEffect},
		{Press, Element{Tag: "input", InForm: true, FormMethod: "post"}, true, SideEffect},
		{Press, Element{Tag: "input", InForm: true, FormMethod: "post"}, false, NoEffect},
		{Fill, Element{Tag: "input", Name: "Order note", InForm: true, FormMethod: "post"}, false, NoEffect},
		// other languages: whole words of any script
		{Click, Element{Tag: "button", Name: "Zahlungspflichtig bestellen", Submits: true, InForm: true, FormMethod: "post"}, false, Commit},
		{Click, Element{Tag: "button", Name: "Überweisen", Submits: true, InForm: true, FormMethod: "post"}, false, Commit},
		{Click, Element{Tag: "button", Name: "Valider la commande"}, false, Commit},
		{Click, Element{Tag: "button", Name: "Confirmar pedido"}, false, Commit},
		{Click, Element{Tag: "button", Name: "Acquista ora"}, false, Commit},
		{Click, Element{Tag: "button", Name: "提交订单"}, false, Commit},
		{Click, Element{Tag: "button", Name: "注文を確定する"}, false, Commit},
		{Click, Element{Tag: "button", Name: "결제하기"}, false, Commit},
		{Click, Element{Tag: "button", Name: "確認画面へ", Submits: true, InForm: true, FormMethod: "get"}, false, NoEffect},
		{Click, Element{Tag: "button", Name: "Bookmarks"}, false, NoEffect},
		{Click, Element{Tag: "button", Name: "Payload viewer"}, false, NoEffect},
		{Click, Element{Tag: "button", Name: "Weiter", Submits: true, InForm: true, FormMethod: "get"}, false, NoEffect},
		// a form that takes a card commits whatever its button says
		{Click, Element{Tag: "button", Name: "Weiter", Submits: true, InForm: true, FormMethod: "post", Pays: true}, false, Commit},
		{Click, Element{Tag: "button", Name: "→", Submits: true, InForm: true, FormMethod: "get", Pays: true}, false, Commit},
		{Press, Element{Tag: "input", InForm: true, FormMethod: "post", Pays: true}, true, Commit},
		{Click, Element{Tag: "a", Name: "Terms", InForm: true, Pays: true}, false, NoEffect},
	} {
		if got := Classify(c.action, c.el, c.enter); got != c.want {
			t.Errorf("%s %+v: %v, want %v", c.action, c.el, got, c.want)
		}
	}
}

func TestReplayStepsUseSelectorsAndAskAgain(t *testing.T) {
	done := []Done{
		{Action: Action{Action: Fill, Ref: "e1", Value: "ada"}, Selector: "#name", OK: true},
		{Action: Action{Action: Click, Ref: "e9"}, Selector: "#gone", OK: false},
		{Action: Action{Action: AskPerson, Ref: "e2", Question: "Code?", Secret: true}, Selector: "#code", OK: true},
		{Action: Action{Action: Click, Ref: "e3"}, Selector: "#pay", Confirmed: true, ConfirmMessage: "Pay?", OK: true, WaitText: "Paid"},
		{Action: Action{Action: AskPerson, Question: "Solve it", Takeover: true}, OK: true},
	}
	got := ReplaySteps(done, map[string]string{"total": "#total", "note": ""}, []string{"note", "total"})
	var parts []string
	for _, s := range got {
		parts = append(parts, s["action"].(string))
	}
	if strings.Join(parts, ",") != "type,ask,confirm,click,wait_for,takeover,extract" {
		t.Fatalf("steps %v", got)
	}
	if got[1]["secret"] != true || got[1]["selector"] != "#code" || got[6]["name"] != "total" {
		t.Fatalf("steps %v", got)
	}
}

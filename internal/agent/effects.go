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
// words of purchase, payment, deletion and final submission, in English.
var commitWords = regexp.MustCompile(`(?i)\b(buy|pay|payment|purchase|order|checkout|check out|delete|remove|erase|destroy|submit|confirm|transfer|send money|subscribe|book|donate|unsubscribe|close account)\b`)

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
}

// Classify says what a click (or Enter pressed in a field: pressEnter)
// on el does to the world. A click on a button whose name reads as a
// purchase, deletion or final submission is a Commit; any other
// submission of a POST form (including Enter in one of its fields) is a
// SideEffect; the rest is NoEffect: links and GET forms only read (a
// search), fields change nothing until sent. A script's button may still
// post, which the name rule catches when it reads as one.
func Classify(action string, el Element, pressEnter bool) Effect {
	post := el.FormMethod == "post"
	switch action {
	case Click:
		button := el.Tag == "button" || (el.Tag == "input" && (el.Type == "submit" || el.Type == "button" || el.Type == "image")) || el.Submits
		if button && commitWords.MatchString(el.Name) {
			return Commit
		}
		if el.Submits && post {
			return SideEffect
		}
	case Press:
		if pressEnter && el.InForm && post {
			return SideEffect
		}
	}
	return NoEffect
}

// IsEnter reports whether key is the Enter key.
func IsEnter(key string) bool { return strings.EqualFold(strings.TrimSpace(key), "enter") }

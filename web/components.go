package web

import (
	"fmt"
	"strings"

	"github.com/a-h/templ"
)

// liveTrigger is the run page's refresh: every second, except while the
// person types in an answer form's field (a half-typed answer is never
// swapped away). A focused button does not pause it: the browser focuses
// a button it clicks, and a page that stopped refreshing whenever Done or
// Yes kept the focus would show a finished run as waiting for good if the
// answer's reply ever went missing.
const liveTrigger = "every 1s [!(document.activeElement && document.activeElement.matches('form.answer input, form.answer textarea'))]"

// statusLabel is a status as people read it.
func statusLabel(s string) string {
	return strings.ReplaceAll(s, "_", " ")
}

// widthStyle is a bar segment's width; pct is an int the handler computed,
// so the CSS is known to be safe.
func widthStyle(pct int) templ.SafeCSS {
	return templ.SafeCSS(fmt.Sprintf("width:%d%%", min(max(pct, 0), 100)))
}

// orDash shows "—" for an empty value.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// orText returns s, or alt when s is empty.
func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// yesNo renders a boolean for people.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

package web

import (
	"fmt"
	"strings"

	"github.com/a-h/templ"
)

// liveTrigger is the run page's refresh: every second, except while the
// focus is in an answer form (a half-typed answer is never swapped away).
const liveTrigger = "every 1s [!(document.activeElement && document.activeElement.closest('form.answer'))]"

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

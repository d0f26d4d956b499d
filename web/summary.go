package web

import (
	"strings"
)

// maxSummary bounds the one-line input summary of the runs list (the
// whole of it is in the row's title attribute).
const maxSummary = 140

// clip cuts s to n characters, ending it with "…" when cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// contractSpelling writes "cancelled" as the contract spells it,
// "canceled", in text the dashboard shows (messages written elsewhere).
func contractSpelling(s string) string {
	return strings.NewReplacer("cancelled", "canceled", "Cancelled", "Canceled", "CANCELLED", "CANCELED").Replace(s)
}

package web

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// maxSummary bounds the one-line input summary of the runs list (the
// whole of it is in the row's title attribute).
const maxSummary = 140

// inputSummary says in one line what a run works on, from its stored
// inputs (secrets there are "***" already): the first URL of a URL list
// and how many more ("https://shop.example/ and 149 more"), the host a
// login signs in to, the step count of a scripted flow and where it
// starts, a crawl's start and page bound; for other inputs their numbers
// and booleans ("items 5 · sleepMs 250"). Strings other than URLs are
// never shown (they may be answers, notes or PINs), and URLs lose their
// user info. "" when there is nothing to say.
func inputSummary(templateID string, raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil || len(in) == 0 {
		return ""
	}
	var parts []string
	if urls, ok := in["urls"].([]any); ok && len(urls) > 0 {
		first, _ := urls[0].(string)
		s := shownURL(first)
		if n := len(urls) - 1; n > 0 {
			s += fmt.Sprintf(" and %d more", n)
		}
		parts = append(parts, s)
	}
	if steps, ok := in["steps"].([]any); ok {
		s := plural(len(steps), "step")
		if start, _ := in["startUrl"].(string); start != "" {
			s += " from " + shownURL(start)
		} else if u := firstNavigate(steps); u != "" {
			s += " from " + shownURL(u)
		}
		parts = append(parts, s)
	} else if start, _ := in["startUrl"].(string); start != "" {
		s := "from " + shownURL(start)
		if n, ok := in["maxPages"].(float64); ok {
			s += fmt.Sprintf(", up to %d pages", int(n))
		}
		parts = append(parts, s)
	}
	if u, _ := in["url"].(string); u != "" {
		if templateID == "login" {
			parts = append(parts, "log in at "+hostOf(u))
		} else {
			parts = append(parts, shownURL(u))
		}
	}
	if len(parts) == 0 {
		parts = scalarInputs(in)
	}
	return strings.Join(parts, " · ")
}

// shownURL is u without user info (which may hold a password).
func shownURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(not a URL)"
	}
	p.User = nil
	return p.String()
}

// hostOf is u's host (with its port), or u without user info when it has
// none.
func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return shownURL(u)
	}
	return p.Host
}

// firstNavigate is the URL of the first navigate step ("" when none).
func firstNavigate(steps []any) string {
	for _, s := range steps {
		st, _ := s.(map[string]any)
		if st["action"] == "navigate" {
			u, _ := st["url"].(string)
			return u
		}
	}
	return ""
}

// scalarInputs lists the number and boolean inputs, sorted by name, at
// most four ("items 5", "fail true"); the names secrets go by are left out.
func scalarInputs(in map[string]any) []string {
	var keys []string
	for k, v := range in {
		switch v.(type) {
		case float64, bool:
			if !isSecret(nil, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys[:min(len(keys), 4)] {
		out = append(out, fmt.Sprintf("%s %v", k, in[k]))
	}
	return out
}

// plural is "1 step", "12 steps".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

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

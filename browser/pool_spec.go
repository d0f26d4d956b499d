package browser

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// capacityPrefix starts a --browser list item that sets the capacity of the
// endpoint before it: "http://a:9222,capacity=4,http://b:9222,capacity=2".
//
// The capacity is its own list item, not a part of the endpoint's text
// (not "#capacity=4", not "?capacity=4"), so it cannot be confused with a
// URL's fragment, query or path: commas already separate the list's items,
// so no endpoint of the list holds one, and an item that is exactly
// "capacity=N" has no scheme and is no browser binary anyone names.
const capacityPrefix = "capacity="

// maxCapacity bounds an endpoint's capacity (tabs open at once), far above
// what one browser serves, so a typo (capacity=40000) is caught.
const maxCapacity = 10000

// Endpoint is one browser of the pool: a binary to launch, a CDP endpoint
// (ws://… or an http:// URL answering /json/version) and how many tabs it
// may have open at once across every session (Capacity; 0 = no limit).
type Endpoint struct {
	Spec     string
	Capacity int
}

// ParseBrowserList reads the items of --browser (split on commas, trimmed,
// empty items dropped): each item is an endpoint, optionally followed by a
// "capacity=N" item (1 ≤ N ≤ 10000) that caps its open tabs. Errors name
// the item and show the syntax; an empty list is the system Chromium.
func ParseBrowserList(items []string) ([]Endpoint, error) {
	var out []Endpoint
	for _, it := range items {
		rest, ok := cutPrefixFold(it, capacityPrefix)
		if !ok {
			out = append(out, Endpoint{Spec: it})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%q must follow the endpoint it applies to, e.g. http://127.0.0.1:9222,capacity=4", it)
		}
		last := &out[len(out)-1]
		if last.Capacity != 0 {
			return nil, fmt.Errorf("%q: endpoint %s already has capacity=%d; give one capacity per endpoint", it, last.Spec, last.Capacity)
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > maxCapacity {
			return nil, fmt.Errorf("%q: capacity must be a whole number of tabs from 1 to %d, e.g. %s,capacity=4", it, maxCapacity, last.Spec)
		}
		last.Capacity = n
	}
	return out, nil
}

// cutPrefixFold is strings.CutPrefix ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// endpoints is the Manager's reading of Options.Browser: ParseBrowserList,
// or, for a list it refuses (the cli checks --browser first, so only a
// program building Options by hand gets here), the endpoints without the
// capacity items, logged. An empty list is the system Chromium.
func endpoints(items []string, log *slog.Logger) []Endpoint {
	eps, err := ParseBrowserList(items)
	if err != nil {
		log.Error("browser list: capacities ignored", "err", err)
		eps = nil
		for _, it := range items {
			if _, ok := cutPrefixFold(it, capacityPrefix); !ok {
				eps = append(eps, Endpoint{Spec: it})
			}
		}
	}
	if len(eps) == 0 {
		eps = []Endpoint{{}}
	}
	return eps
}

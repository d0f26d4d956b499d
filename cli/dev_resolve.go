package cli

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// devResolver returns the URL policy's resolver for --dev-resolve (nil when
// the flag is empty: the system resolver). Listed names answer the given
// address; the others go to the system resolver. The flag needs
// --dev-templates, so a user's daemon never runs with a forged DNS answer.
func devResolver(cfg *config) (func(string) ([]netip.Addr, error), error) {
	if cfg.devResolve == "" {
		return nil, nil
	}
	if !cfg.devTemplates {
		return nil, fmt.Errorf("--dev-resolve is for tests and needs --dev-templates")
	}
	fixed := map[string]netip.Addr{}
	for _, pair := range splitList(cfg.devResolve) {
		host, ip, ok := strings.Cut(pair, "=")
		addr, err := netip.ParseAddr(ip)
		if !ok || host == "" || err != nil {
			return nil, fmt.Errorf("--dev-resolve: %q is not host=ip (example: public.test=93.184.216.34)", pair)
		}
		fixed[strings.ToLower(host)] = addr
	}
	return func(host string) ([]netip.Addr, error) {
		if a, ok := fixed[strings.ToLower(host)]; ok {
			return []netip.Addr{a}, nil
		}
		return engine.URLPolicy{}.LookupHost(host) // the system resolver
	}, nil
}

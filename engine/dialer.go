package engine

import (
	"context"
	"net"
	"net/netip"

	"github.com/browsertask/browsertask/internal/netpolicy"
)

// NewCheckedDialer returns the one checked dialer of the URL policy, used
// by the HTTP fetch path and by the egress proxy of launched browsers, so
// both connect under the same rules: every address of a host's answer
// passes CheckAddr (the daemon's own listener always; under trust
// restricted every internal address netpolicy.Classify knows) before any
// is dialled, and only a checked address is dialled.
//
// policy is called at each connection, so a deny entry added later (the
// daemon's listener once bound) applies at once. lookup resolves names;
// nil uses the policy's resolver (LookupHostContext). dial connects to a
// checked "ip:port"; nil uses a net.Dialer that checks the socket's
// address once more. Under trust restricted a host that cannot be
// resolved, or resolves to nothing, is refused (TRUST_LEVEL_NOT_ALLOWED,
// details.reason ReasonUnresolvable: its addresses cannot be checked);
// under local the lookup error is returned as is. A refusal is a
// *netpolicy.RefusedError whose Err is the *Error.
func NewCheckedDialer(policy func() URLPolicy, lookup func(ctx context.Context, host string) ([]netip.Addr, error),
	dial func(ctx context.Context, network, addr string) (net.Conn, error)) *netpolicy.Dialer {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return policy().LookupHostContext(ctx, host)
		}
	}
	return &netpolicy.Dialer{
		Lookup: lookup,
		Check:  func(host string, ap netip.AddrPort) error { return CheckAddr(policy(), host, ap) },
		LookupFailed: func(host string, err error) error {
			if !netpolicy.IsRestricted(policy().TrustLevel) {
				return nil
			}
			return Errorf(TrustLevelNotAllowed,
				"%s cannot be resolved (%v), and trust level restricted refuses hosts whose addresses it cannot check; use a host that resolves to a public address, or run the server with trust level local", host, err).
				WithDetails(map[string]any{"host": host, "reason": ReasonUnresolvable})
		},
		Dial: dial,
	}
}

package browser

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/browser/egress"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// dnsCacheTTL is how long a hostname's addresses are reused by the
// in-browser policy check (trust restricted only): one lookup per host and
// page load instead of one per request. Only answers are cached, never a
// failed lookup (that would turn into a 30 s verdict on a transient
// error). A cached answer cannot open a hole: the egress proxy resolves
// again at connect time and checks the address it connects to.
const dnsCacheTTL = 30 * time.Second

// requestPolicy applies the URL policy (engine.CheckURL: schemes, deny
// and allow lists, trust restricted's addresses) to every request the
// browser makes, with a small DNS cache for the restricted-trust check.
type requestPolicy struct {
	m   *Manager
	dns *engine.HostCache
	// own caches this machine's addresses for the policy (refused under
	// restricted), read at most once per ownAddrsTTL.
	own *netpolicy.OwnAddrs
}

// ownAddrsTTL is how long the machine's address list is reused by every
// check of this Manager's policy (one kernel read per ttl, not per request).
const ownAddrsTTL = 10 * time.Second

// restricted reports whether a trust level is netpolicy.Restricted.
func restricted(level string) bool { return netpolicy.IsRestricted(level) }

// egressArgs returns the switches that send a launched browser's
// connections through the egress proxy, starting the proxy on first use
// (it runs until Close). Errors: the Manager is closed, or the proxy
// cannot listen — the browser must not be launched then.
func (m *Manager) egressArgs() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("the browser manager is shut down")
	}
	if m.egress == nil {
		px, err := egress.Start(egress.Options{
			Policy: m.Policy,
			Dial:   m.opts.Dial,
			Logger: m.log.With("component", "egress"),
		})
		if err != nil {
			return nil, fmt.Errorf("trust restricted needs the egress proxy: %w", err)
		}
		m.egress = px
		m.log.Info("egress proxy started for trust restricted", "addr", px.Addr())
	}
	return m.egress.ChromiumArgs(), nil
}

// Policy returns the URL policy runs of this Manager are held to: trust
// level, file: URLs, the deny list (the daemon's own listener), the
// resolver of Options and the machine's addresses (cached).
func (m *Manager) Policy() engine.URLPolicy {
	return engine.URLPolicy{
		AllowFileURLs: m.opts.AllowFileURLs,
		TrustLevel:    m.opts.TrustLevel,
		DenyHosts:     m.DenyHosts(),
		Resolve:       m.opts.Resolve,
		LocalAddrs:    m.policy.own.List,
	}
}

// fetchPatterns returns the requests the browser pauses for check: all of
// them under trust restricted (any host may resolve to an internal
// address); under trust local only the requests to a port of the deny list
// (the daemon's own listener), documents and redirect hops included —
// nothing else can fail the local policy once a run's URLs passed
// CheckURL: the other schemes it refuses (javascript:, data:, chrome:,
// file:) are never network requests a page can redirect a tab to, and
// Chromium itself refuses them as redirect targets. Pausing nothing else
// keeps every page's main document and sub-resources off the interception
// path (no round trip through this process per request). The result may
// be empty: then interception is off.
func (m *Manager) fetchPatterns() []*proto.FetchRequestPattern {
	if restricted(m.opts.TrustLevel) {
		return []*proto.FetchRequestPattern{{URLPattern: "*"}}
	}
	var pats []*proto.FetchRequestPattern
	seen := map[string]bool{}
	for _, d := range m.DenyHosts() {
		_, port, err := net.SplitHostPort(d)
		if err != nil || seen[port] {
			continue
		}
		seen[port] = true
		switch port {
		case "80": // default ports do not appear in canonical URLs
			pats = append(pats, &proto.FetchRequestPattern{URLPattern: "http://*"})
		case "443":
			pats = append(pats, &proto.FetchRequestPattern{URLPattern: "https://*"})
		default:
			pats = append(pats, &proto.FetchRequestPattern{URLPattern: "*:" + port + "/*"})
		}
	}
	return pats
}

// check decides one request. It returns nil to let it through, or the
// domain error that fails the page: TRUST_LEVEL_NOT_ALLOWED for an
// internal target under trust restricted, STEP_EXECUTION_FAILED for a
// request to the daemon's own address or a refused scheme (the run's
// inputs were fine: the page itself went there).
func (rp *requestPolicy) check(raw string) *engine.Error {
	pol := rp.m.Policy()
	base := pol.Resolve
	pol.Resolve = func(host string) ([]netip.Addr, error) { return rp.dns.Resolve(host, base) }
	e := engine.AsError(engine.CheckURL(raw, pol))
	if e == nil {
		return nil
	}
	shown := raw
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	code := e.Code
	if code != engine.TrustLevelNotAllowed {
		code = engine.StepExecutionFailed
	}
	return engine.Errorf(code, "the page requested %s, which the URL policy blocks: %s", shown, e.Message).
		WithDetails(map[string]any{"blockedUrl": shown, "policy": policyReason(e)})
}

// policyReason names why CheckURL refused a URL, for details.policy.
func policyReason(e *engine.Error) string {
	switch {
	case e.Code == engine.TrustLevelNotAllowed && e.Details["reason"] == engine.ReasonUnresolvable:
		return "unresolvable"
	case e.Code == engine.TrustLevelNotAllowed:
		return "trust-restricted"
	case strings.Contains(e.Message, "own address"):
		return "daemon-address"
	default:
		return "scheme"
	}
}

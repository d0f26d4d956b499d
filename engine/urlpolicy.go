package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/browsertask/browsertask/internal/netpolicy"
)

// URLPolicy says which URLs a run may navigate to (README, "Security model").
type URLPolicy struct {
	// AllowFileURLs permits file: URLs (only with trust level "local").
	AllowFileURLs bool
	// TrustLevel is netpolicy.Local (default when empty) or
	// netpolicy.Restricted; restricted refuses every internal address
	// netpolicy.Classify knows (loopback, private, link-local, carrier-grade
	// NAT, multicast, the IPv6 forms carrying such an IPv4, …) and the
	// machine's own addresses.
	TrustLevel string
	// DenyHosts are host:port pairs that are never navigable: the daemon's
	// own listener, so a page cannot drive our API.
	DenyHosts []string
	// Resolve looks up a hostname's addresses for the restricted check; nil
	// uses the system resolver with a 2 s timeout.
	Resolve func(host string) ([]netip.Addr, error)
	// LocalAddrs lists this machine's addresses (refused under restricted;
	// under any trust, the daemon's port on them when it listens on a
	// wildcard address); nil reads the interfaces at each check. The
	// browser manager passes a netpolicy.OwnAddrs cache.
	LocalAddrs func() []netip.Addr
}

// maxURLInMessage bounds how much of a URL an error message repeats.
const maxURLInMessage = 200

// CheckURL reports whether raw may be navigated to under p. It returns nil,
// an INVALID_PARAMETER *Error (unparsable URL, a scheme other than http and
// https, file: without --allow-file-urls, the daemon's own address) or a
// TRUST_LEVEL_NOT_ALLOWED *Error (trust "restricted" and a target, literal
// or resolved, that netpolicy.Classify calls internal — loopback, private,
// link-local, carrier-grade NAT, benchmarking, multicast, the machine's own
// addresses, IPv6 forms carrying such an IPv4 —, a host that cannot be
// resolved — fail closed, details {"reason": ReasonUnresolvable} — or
// file: under restricted trust).
// Messages name the URL and the fix; details carry {"url"}.
func CheckURL(raw string, p URLPolicy) error {
	shown := raw
	if len(shown) > maxURLInMessage {
		shown = shown[:maxURLInMessage] + "…"
	}
	bad := func(code ErrorCode, format string, args ...any) *Error {
		return Errorf(code, format, args...).WithDetails(map[string]any{"url": shown})
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return bad(InvalidParameter, "%q is not a valid URL; give an absolute http:// or https:// URL", shown)
	}
	scheme := strings.ToLower(u.Scheme)
	restricted := netpolicy.IsRestricted(p.TrustLevel)
	switch scheme {
	case "http", "https":
	case "file":
		if !p.AllowFileURLs {
			return bad(InvalidParameter, "%q: file: URLs are disabled; start the server with --allow-file-urls (trust level local) or use an http(s) URL", shown)
		}
		if restricted {
			return bad(TrustLevelNotAllowed, "%q: file: URLs need trust level local; this server runs restricted", shown)
		}
		return nil
	case "":
		return bad(InvalidParameter, "%q is not an absolute URL; give an absolute http:// or https:// URL", shown)
	default:
		return bad(InvalidParameter, "%q: the %s: scheme is not allowed; only http:// and https:// URLs can be opened", shown, scheme)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return bad(InvalidParameter, "%q has no host; give an absolute http:// or https:// URL", shown)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	addr, isIP := parseHostIP(host)
	for _, d := range p.DenyHosts {
		if deniedHost(d, host, port, addr, isIP) || (isIP && p.deniedOwn(d, port, addr)) {
			return bad(InvalidParameter, "%q points at this server's own address %s, which is never navigable; use another URL", shown, d)
		}
	}
	if !restricted {
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return bad(TrustLevelNotAllowed, "%q targets localhost, which trust level restricted refuses; use a public URL or run the server with trust level local", shown)
	}
	if isIP {
		if v := p.Classify(addr); v.Internal {
			return bad(TrustLevelNotAllowed, "%q targets the internal address %s (%s), which trust level restricted refuses; use a public URL or run the server with trust level local", shown, addr, v)
		}
		return nil
	}
	addrs, err := p.LookupHost(host)
	if err != nil {
		// Fail closed: a name this process cannot resolve may still
		// resolve for the browser (its own resolver, caches, hosts
		// rules), to anything, loopback included.
		return bad(TrustLevelNotAllowed, "%q: its host %s cannot be resolved (%v), and trust level restricted refuses hosts whose addresses it cannot check; use a URL whose host resolves to a public address, or run the server with trust level local", shown, host, err).
			WithDetails(map[string]any{"reason": ReasonUnresolvable})
	}
	own := p.localAddrs()
	for _, a := range addrs {
		if v := netpolicy.Classify(a, own); v.Internal {
			return bad(TrustLevelNotAllowed, "%q resolves to the internal address %s (%s), which trust level restricted refuses; use a public URL or run the server with trust level local", shown, a, v)
		}
	}
	return nil
}

// ReasonUnresolvable is details.reason of the TRUST_LEVEL_NOT_ALLOWED
// error CheckURL returns for a host it cannot resolve, so callers can tell
// "no address to check" from "an internal address".
const ReasonUnresolvable = "unresolvable"

// LookupHost resolves host with p.Resolve, or with the system resolver
// (bounded to 2 s) when that is nil. An empty answer is an error: under
// trust restricted a host without addresses cannot be checked, so callers
// refuse it like a failed lookup.
func (p URLPolicy) LookupHost(host string) ([]netip.Addr, error) {
	resolve := p.Resolve
	if resolve == nil {
		resolve = systemResolve
	}
	addrs, err := resolve(host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no addresses for %s", host)
	}
	return addrs, nil
}

// CheckAddr reports whether a connection to ap, one of the addresses host
// resolved to, is allowed under p. It is the check the checked dialer
// (NewCheckedDialer: the HTTP fetch path and the egress proxy) applies just
// before it connects, to the very address it connects to, so no second
// DNS lookup (the browser's, or a rebinding answer) can slip in between
// check and connect. It returns nil, TRUST_LEVEL_NOT_ALLOWED (trust
// "restricted" and an address netpolicy.Classify calls internal, the
// machine's own addresses included) or INVALID_PARAMETER (the daemon's own
// address from DenyHosts, and the machine's addresses at the port of a
// wildcard deny entry, whatever the trust). Messages name host, the
// address, the range and the fix; details carry {"host", "addr"}.
func CheckAddr(p URLPolicy, host string, ap netip.AddrPort) error {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	addr := ap.Addr().WithZone("").Unmap()
	port := strconv.Itoa(int(ap.Port()))
	bad := func(code ErrorCode, format string, args ...any) *Error {
		return Errorf(code, format, args...).WithDetails(map[string]any{"host": host, "addr": ap.String()})
	}
	for _, d := range p.DenyHosts {
		if deniedHost(d, host, port, addr, false) || deniedHost(d, addr.String(), port, addr, true) {
			return bad(InvalidParameter, "%s (%s) is this server's own address %s, which is never reachable from a page; use another URL", host, ap, d)
		}
		if p.deniedOwn(d, port, addr) {
			return bad(InvalidParameter, "%s (%s) is an address of this machine, where this server listens on %s; it is never reachable from a page; use another URL", host, ap, d)
		}
	}
	if !netpolicy.IsRestricted(p.TrustLevel) {
		return nil
	}
	if v := p.Classify(addr); v.Internal {
		return bad(TrustLevelNotAllowed, "%s connects to the internal address %s (%s), which trust level restricted refuses; use a public URL or run the server with trust level local", host, ap, v)
	}
	return nil
}

// Classify is netpolicy.Classify with this policy's view of the machine's
// own addresses: the one verdict every door of trust restricted uses.
func (p URLPolicy) Classify(a netip.Addr) netpolicy.Verdict {
	return netpolicy.Classify(a, p.localAddrs())
}

// localAddrs returns the machine's addresses from LocalAddrs, or read
// from the interfaces.
func (p URLPolicy) localAddrs() []netip.Addr {
	if p.LocalAddrs != nil {
		return p.LocalAddrs()
	}
	return netpolicy.InterfaceAddrs()
}

// deniedOwn reports whether addr:port is one of this machine's addresses
// at the port of d, a wildcard deny entry (0.0.0.0, [::] or no host): a
// daemon listening there answers on every address of the machine.
func (p URLPolicy) deniedOwn(d, port string, addr netip.Addr) bool {
	dh, dp, err := net.SplitHostPort(d)
	if err != nil || dp != port {
		return false
	}
	if da, err := netip.ParseAddr(dh); dh != "" && (err != nil || !da.IsUnspecified()) {
		return false
	}
	for _, own := range p.localAddrs() {
		if own.WithZone("").Unmap() == addr.WithZone("").Unmap() {
			return true
		}
	}
	return false
}

// systemResolve resolves with the system resolver, bounded to 2 s.
func systemResolve(host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// deniedHost reports whether host:port is the deny entry d. A wildcard
// listener (0.0.0.0, [::] or an empty host) is reachable through every
// loopback name, so those match any loopback or unspecified target too.
func deniedHost(d, host, port string, addr netip.Addr, isIP bool) bool {
	dh, dp, err := net.SplitHostPort(d)
	if err != nil || dp != port {
		return false
	}
	dh = strings.TrimSuffix(strings.ToLower(dh), ".")
	if dh == host {
		return true
	}
	local := host == "localhost" || (isIP && (addr.Unmap().IsLoopback() || addr.IsUnspecified()))
	if da, err := netip.ParseAddr(dh); err == nil {
		if isIP && da.Unmap() == addr.Unmap() {
			return true
		}
		return local && (da.Unmap().IsLoopback() || da.IsUnspecified())
	}
	return local && (dh == "" || dh == "localhost")
}

// parseHostIP parses a URL host as an IP address the way browsers do,
// including the IPv4 forms WHATWG URL parsing accepts (2130706433,
// 0x7f.1, 0177.0.0.1), so such spellings cannot slip past the checks.
func parseHostIP(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, s := range parts {
		n, ok := parseIPv4Part(s)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part parses one dotted part in decimal, octal (leading 0) or
// hexadecimal (0x).
func parseIPv4Part(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}

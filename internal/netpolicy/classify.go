package netpolicy

import (
	"fmt"
	"net/netip"
)

// Verdict is what Classify decided about one address, with the words an
// error message needs.
type Verdict struct {
	// Internal is true when trust restricted refuses the address.
	Internal bool
	// Range names the block that matched, e.g. "loopback 127.0.0.0/8", or
	// "an address of this machine".
	Range string
	// Form names the IPv6 form that carried an IPv4 address, e.g. "NAT64
	// 64:ff9b::/96"; empty when the address itself decided.
	Form string
	// Carried is the IPv4 address the IPv6 form carried (valid only when
	// Form is set).
	Carried netip.Addr
}

// String says why, e.g. "loopback 127.0.0.0/8" or "127.0.0.1 (carried by
// NAT64 64:ff9b::/96) is loopback 127.0.0.0/8".
func (v Verdict) String() string {
	if !v.Internal {
		return "public"
	}
	if v.Form != "" {
		return fmt.Sprintf("%s (carried by %s) is %s", v.Carried, v.Form, v.Range)
	}
	return v.Range
}

// block is one range trust restricted refuses.
type block struct {
	prefix netip.Prefix
	name   string
}

func v4(a, b, c, d byte, bits int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{a, b, c, d}), bits)
}

func v6(head []byte, bits int) netip.Prefix {
	var b [16]byte
	copy(b[:], head)
	return netip.PrefixFrom(netip.AddrFrom16(b), bits)
}

// v4Blocks are the IPv4 ranges that lead into a machine, its networks or
// nowhere public (IANA's special-purpose registry, RFC 6890, minus what is
// globally reachable). The documentation blocks 192.0.2.0/24,
// 198.51.100.0/24 and 203.0.113.0/24 are deliberately absent: they are
// never routed on the Internet, so reaching one is harmless, and the test
// fixtures present loopback servers as public hosts under them. The table
// is read-only.
var v4Blocks = [...]block{
	// "This network": 0.0.0.0 reaches the local host on Linux.
	{v4(0, 0, 0, 0, 8), "this-network 0.0.0.0/8"},
	// The host itself.
	{v4(127, 0, 0, 0, 8), "loopback 127.0.0.0/8"},
	// RFC 1918 private networks: offices, homes, clouds' VPCs.
	{v4(10, 0, 0, 0, 8), "private 10.0.0.0/8"},
	{v4(172, 16, 0, 0, 12), "private 172.16.0.0/12"},
	{v4(192, 168, 0, 0, 16), "private 192.168.0.0/16"},
	// Shared address space (RFC 6598): carrier-grade NAT, tailnets
	// (Tailscale hands out 100.64.0.0/10), and a cloud metadata address
	// (100.100.100.200).
	{v4(100, 64, 0, 0, 10), "shared (carrier-grade NAT) 100.64.0.0/10"},
	// Link-local, home of the cloud metadata service 169.254.169.254.
	{v4(169, 254, 0, 0, 16), "link-local 169.254.0.0/16"},
	// IETF protocol assignments (RFC 6890): DS-Lite, NAT64 discovery
	// (192.0.0.170/171), none of it a public web server.
	{v4(192, 0, 0, 0, 24), "IETF protocol assignments 192.0.0.0/24"},
	// Benchmarking (RFC 2544): lab networks, used inside data centres.
	{v4(198, 18, 0, 0, 15), "benchmarking 198.18.0.0/15"},
	// Multicast: never one web server, and it reaches the local segment.
	{v4(224, 0, 0, 0, 4), "multicast 224.0.0.0/4"},
	// Limited broadcast, before the reserved block that holds it so the
	// message names it.
	{v4(255, 255, 255, 255, 32), "broadcast 255.255.255.255"},
	// Reserved (former class E): not routed.
	{v4(240, 0, 0, 0, 4), "reserved 240.0.0.0/4"},
}

// v6Blocks are the IPv6 ranges refused as a whole, checked after the IPv4
// an address may carry (see carried). The documentation prefixes
// 2001:db8::/32 and 3fff::/20 are absent for the reason the IPv4 ones are.
var v6Blocks = [...]block{
	// IPv4-compatible addresses (deprecated, RFC 4291): no host uses them;
	// ::a.b.c.d with a loopback or private IPv4 is refused as that IPv4
	// first (carried), the rest here.
	{v6(nil, 96), "IPv4-compatible ::/96 (deprecated)"},
	// Discard-only (RFC 6666).
	{v6([]byte{0x01, 0x00}, 64), "discard-only 100::/64"},
	// Benchmarking (RFC 5180).
	{v6([]byte{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48), "benchmarking 2001:2::/48"},
	// Unique local addresses (RFC 4193): the IPv6 private networks.
	{v6([]byte{0xfc}, 7), "unique local fc00::/7"},
	// Link-local.
	{v6([]byte{0xfe, 0x80}, 10), "link-local fe80::/10"},
	// Site-local (deprecated by RFC 3879, still routed inside some sites).
	{v6([]byte{0xfe, 0xc0}, 10), "site-local fec0::/10"},
	// Multicast, every scope.
	{v6([]byte{0xff}, 8), "multicast ff00::/8"},
}

// Classify decides whether trust restricted refuses a connection to a:
// the address itself, every IPv4 address an IPv6 form carries
// (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4, Teredo's
// server and client), and own, the machine's own addresses (a daemon or a
// database listening on 0.0.0.0 is reachable through every one of them).
// An invalid address is internal: what cannot be classified is refused.
func Classify(a netip.Addr, own []netip.Addr) Verdict {
	if !a.IsValid() {
		return Verdict{Internal: true, Range: "not a valid address"}
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return classify4(a, own)
	}
	switch {
	case a == netip.IPv6Loopback():
		return Verdict{Internal: true, Range: "loopback ::1"}
	case a == netip.IPv6Unspecified():
		return Verdict{Internal: true, Range: "unspecified ::"}
	}
	for _, c := range carried(a) {
		if v := classify4(c.addr, own); v.Internal {
			v.Form, v.Carried = c.form, c.addr
			return v
		}
	}
	for _, b := range v6Blocks {
		if b.prefix.Contains(a) {
			return Verdict{Internal: true, Range: b.name}
		}
	}
	if isOwn(a, own) {
		return Verdict{Internal: true, Range: "an address of this machine"}
	}
	return Verdict{}
}

// classify4 classifies an IPv4 address.
func classify4(a netip.Addr, own []netip.Addr) Verdict {
	for _, b := range v4Blocks {
		if b.prefix.Contains(a) {
			return Verdict{Internal: true, Range: b.name}
		}
	}
	if isOwn(a, own) {
		return Verdict{Internal: true, Range: "an address of this machine"}
	}
	return Verdict{}
}

// isOwn reports whether a is one of the machine's addresses.
func isOwn(a netip.Addr, own []netip.Addr) bool {
	for _, o := range own {
		if o.WithZone("").Unmap() == a {
			return true
		}
	}
	return false
}

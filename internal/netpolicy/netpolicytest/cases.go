// Package netpolicytest holds the one table of addresses trust restricted
// must refuse or allow, shared by the tests of every door that decides:
// the classifier itself, the URL policy at submission and in the browser
// (engine.CheckURL, engine.CheckAddr), the HTTP fetch path's dialer and
// the egress proxy. A range added to the policy gets a row here, and
// every door's test checks it. Only tests import this package.
package netpolicytest

import "net/netip"

// Case is one address and what trust restricted decides about it.
type Case struct {
	// Name says what the row shows.
	Name string
	// Addr is the address a host resolves to (or the URL's literal).
	Addr netip.Addr
	// Refused is true when trust restricted must refuse it.
	Refused bool
	// Range is a piece of the refusal's message naming the block (empty
	// for allowed rows).
	Range string
}

// Own returns the addresses the table presents as this machine's own
// (public-looking ones: a machine with a public address answers on it for
// every service bound to 0.0.0.0). Tests hand them to the policy as its
// local addresses.
func Own() []netip.Addr {
	return []netip.Addr{netip.MustParseAddr("93.184.216.99"), netip.MustParseAddr("2606:2800:220:1::99")}
}

// Cases returns the table, newly built (callers may keep or change it).
func Cases() []Case {
	r := func(name, addr, rng string) Case {
		return Case{Name: name, Addr: netip.MustParseAddr(addr), Refused: true, Range: rng}
	}
	ok := func(name, addr string) Case { return Case{Name: name, Addr: netip.MustParseAddr(addr)} }
	return []Case{
		// Already refused before the one policy existed.
		r("loopback", "127.0.0.1", "loopback"),
		r("loopback, end of block", "127.255.255.254", "loopback"),
		r("IPv6 loopback", "::1", "loopback"),
		r("unspecified", "0.0.0.0", "0.0.0.0/8"),
		r("IPv6 unspecified", "::", "unspecified"),
		r("private 10/8", "10.0.0.1", "private 10.0.0.0/8"),
		r("private 172.16/12", "172.31.255.254", "private 172.16.0.0/12"),
		r("private 192.168/16", "192.168.1.1", "private 192.168.0.0/16"),
		r("link-local, cloud metadata", "169.254.169.254", "link-local"),
		r("IPv6 link-local", "fe80::1", "link-local"),
		r("unique local", "fd12:3456::1", "unique local"),
		r("IPv4-mapped loopback", "::ffff:127.0.0.1", "loopback"),
		r("IPv4-mapped private", "::ffff:10.0.0.1", "private"),
		// The HTTP path refused these, the proxy did not.
		r("this-network 0/8", "0.1.2.3", "0.0.0.0/8"),
		r("multicast", "239.1.2.3", "multicast"),
		r("IPv6 multicast", "ff05::2", "multicast"),
		r("broadcast", "255.255.255.255", "broadcast"),
		r("machine's own address", "93.184.216.99", "this machine"),
		r("machine's own IPv6 address", "2606:2800:220:1::99", "this machine"),
		// Issue 26 item 7: ranges no door knew.
		r("carrier-grade NAT", "100.64.0.1", "100.64.0.0/10"),
		r("carrier-grade NAT, cloud metadata", "100.100.100.200", "100.64.0.0/10"),
		r("carrier-grade NAT, end of block", "100.127.255.254", "100.64.0.0/10"),
		r("benchmarking", "198.18.0.1", "198.18.0.0/15"),
		r("benchmarking, second /16", "198.19.255.254", "198.18.0.0/15"),
		r("IETF protocol assignments", "192.0.0.170", "192.0.0.0/24"),
		r("reserved class E", "240.0.0.1", "240.0.0.0/4"),
		r("IPv4-mapped carrier-grade NAT", "::ffff:100.64.0.1", "100.64.0.0/10"),
		r("IPv4-compatible loopback", "::127.0.0.1", "IPv4-compatible"),
		r("IPv4-compatible private", "::10.0.0.1", "private 10.0.0.0/8"),
		r("IPv4-compatible public (deprecated form)", "::8.8.8.8", "IPv4-compatible"),
		r("IPv4-translated loopback", "::ffff:0:127.0.0.1", "loopback"),
		r("NAT64 loopback", "64:ff9b::7f00:1", "NAT64 64:ff9b::/96"),
		r("NAT64 link-local metadata", "64:ff9b::169.254.169.254", "link-local"),
		r("NAT64 carrier-grade NAT", "64:ff9b::100.64.0.1", "100.64.0.0/10"),
		r("local-use NAT64 /96 loopback", "64:ff9b:1::7f00:1", "local-use NAT64"),
		r("local-use NAT64 /96 private", "64:ff9b:1::10.1.2.3", "private 10.0.0.0/8"),
		r("local-use NAT64 /48 layout loopback", "64:ff9b:1:7f00:0:100::", "loopback"),
		r("local-use NAT64 /64 layout private", "64:ff9b:1:0:c0:a801:100::", "private 192.168.0.0/16"),
		r("6to4 loopback", "2002:7f00:1::1", "6to4"),
		r("6to4 private", "2002:c0a8:101::1", "private 192.168.0.0/16"),
		r("6to4 carrier-grade NAT", "2002:6440:1::1", "100.64.0.0/10"),
		r("6to4 of the machine's own address", "2002:5db8:d863::1", "this machine"),
		r("Teredo, loopback server", "2001:0:7f00:1:8000:63bf:f7f7:f7f7", "Teredo 2001::/32 (server)"),
		r("Teredo, loopback client", "2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo 2001::/32 (client)"),
		r("Teredo, private client", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "private 10.0.0.0/8"),
		r("site-local", "fec0::1", "site-local"),
		r("discard-only", "100::1", "discard-only"),
		r("IPv6 benchmarking", "2001:2::1", "benchmarking"),
		// Public: reachable under restricted.
		ok("public IPv4", "8.8.8.8"),
		ok("public IPv4 next to carrier-grade NAT", "100.128.0.1"),
		ok("public IPv4 next to benchmarking", "198.20.0.1"),
		ok("documentation block (the tests' pretend Internet)", "203.0.113.10"),
		ok("public IPv6", "2606:4700:4700::1111"),
		ok("IPv4-mapped public", "::ffff:8.8.8.8"),
		ok("NAT64 public", "64:ff9b::808:808"),
		ok("local-use NAT64 /96 public", "64:ff9b:1::808:808"),
		ok("6to4 public", "2002:808:808::1"),
		ok("Teredo, public server and client", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
	}
}

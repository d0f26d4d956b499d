package netpolicy

import "net/netip"

// carriedV4 is one IPv4 address an IPv6 address carries, and the form
// that carries it.
type carriedV4 struct {
	form string
	addr netip.Addr
}

// carried returns every IPv4 address a (an IPv6 address, not IPv4-mapped)
// may carry to an IPv4 host: a translator, a tunnel or the kernel would
// deliver the connection there, so each is classified like the address
// itself. Where the position is ambiguous (the local-use NAT64 prefix
// admits four layouts) every layout the address fits is returned:
// refusing when any is internal fails closed.
func carried(a netip.Addr) []carriedV4 {
	b := a.As16()
	at := func(i, j, k, l int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[j], b[k], b[l]}) }
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case zero(0, 12):
		// ::a.b.c.d, IPv4-compatible (RFC 4291, deprecated); Linux
		// routes some of these to the IPv4 address.
		return []carriedV4{{"IPv4-compatible ::/96", at(12, 13, 14, 15)}}
	case zero(0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0:
		// ::ffff:0:a.b.c.d, IPv4-translated (RFC 2765, SIIT).
		return []carriedV4{{"IPv4-translated ::ffff:0:0:0/96", at(12, 13, 14, 15)}}
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12):
		// 64:ff9b::a.b.c.d, the well-known NAT64 prefix (RFC 6052): a
		// NAT64 gateway connects to the IPv4 address.
		return []carriedV4{{"NAT64 64:ff9b::/96", at(12, 13, 14, 15)}}
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0x00 && b[5] == 0x01:
		return localNAT64(b)
	case b[0] == 0x20 && b[1] == 0x02:
		// 2002:a.b.c.d::/48, 6to4 (RFC 3056): the relay tunnels to the
		// IPv4 address in bits 16–47.
		return []carriedV4{{"6to4 2002::/16", at(2, 3, 4, 5)}}
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00:
		// 2001:0:S:S:flags:port:C:C, Teredo (RFC 4380): the server's
		// IPv4 is bits 32–63, the client's the last 32 bits inverted.
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []carriedV4{{"Teredo 2001::/32 (server)", at(4, 5, 6, 7)}, {"Teredo 2001::/32 (client)", client}}
	}
	return nil
}

// localNAT64 returns the IPv4 candidates of an address under 64:ff9b:1::/48,
// the local-use NAT64 prefix (RFC 8215). The network picks the prefix
// length, /48, /56, /64 or /96, which places the IPv4 address differently
// (RFC 6052 §2.2; byte 8, the u octet, is always zero). A /48, /56 or /64
// layout fits when its u octet and its suffix are zero; each that fits is
// a candidate, and the /96 layout is the candidate when none does. A
// /96-layout address read as a shorter layout yields the prefix's zero
// bytes, an IPv4 in 0.0.0.0/8, so whatever the network's real layout a
// loopback or private IPv4 is refused.
func localNAT64(b [16]byte) []carriedV4 {
	const form = "local-use NAT64 64:ff9b:1::/48"
	zero := func(from int) bool {
		for _, x := range b[from:] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	var out []carriedV4
	if b[8] == 0 {
		if zero(11) {
			out = append(out, carriedV4{form, netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})})
		}
		if zero(12) {
			out = append(out, carriedV4{form, netip.AddrFrom4([4]byte{b[7], b[9], b[10], b[11]})})
		}
		if zero(13) {
			out = append(out, carriedV4{form, netip.AddrFrom4([4]byte{b[9], b[10], b[11], b[12]})})
		}
	}
	if len(out) == 0 {
		out = append(out, carriedV4{form, netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})})
	}
	return out
}

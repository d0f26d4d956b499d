package netpolicy_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/netpolicy"
	"github.com/browsertask/browsertask/internal/netpolicy/netpolicytest"
)

// TestClassifyTable: every row of the shared table, refused rows with the
// block they name; the zone of a link-local address does not matter.
func TestClassifyTable(t *testing.T) {
	own := netpolicytest.Own()
	for _, c := range netpolicytest.Cases() {
		v := netpolicy.Classify(c.Addr, own)
		if v.Internal != c.Refused {
			t.Errorf("%s: Classify(%s).Internal = %v (%s), want %v", c.Name, c.Addr, v.Internal, v, c.Refused)
			continue
		}
		if c.Refused && !strings.Contains(v.String(), c.Range) {
			t.Errorf("%s: Classify(%s) = %q, want it to name %q", c.Name, c.Addr, v, c.Range)
		}
	}
	if v := netpolicy.Classify(netip.MustParseAddr("fe80::1%eth0"), nil); !v.Internal {
		t.Errorf("fe80::1%%eth0 not internal")
	}
	if v := netpolicy.Classify(netip.Addr{}, nil); !v.Internal {
		t.Errorf("the zero Addr is not internal")
	}
	// Without the machine's addresses, its public address is public.
	if v := netpolicy.Classify(netip.MustParseAddr("93.184.216.99"), nil); v.Internal {
		t.Errorf("93.184.216.99 internal without own addresses: %s", v)
	}
}

// TestClassifyCarriedForm: the verdict on an IPv6 form names the IPv4 it
// carries and the form.
func TestClassifyCarriedForm(t *testing.T) {
	v := netpolicy.Classify(netip.MustParseAddr("64:ff9b::7f00:1"), nil)
	if v.Carried != netip.MustParseAddr("127.0.0.1") || v.Form != "NAT64 64:ff9b::/96" || v.Range != "loopback 127.0.0.0/8" {
		t.Fatalf("verdict = %+v", v)
	}
	if got, want := v.String(), "127.0.0.1 (carried by NAT64 64:ff9b::/96) is loopback 127.0.0.0/8"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestIsRestricted(t *testing.T) {
	for level, want := range map[string]bool{"restricted": true, "Restricted": true, " RESTRICTED ": true, "local": false, "": false, "restrict": false} {
		if got := netpolicy.IsRestricted(level); got != want {
			t.Errorf("IsRestricted(%q) = %v, want %v", level, got, want)
		}
	}
}

// FuzzClassify: any 16 bytes classify without a panic, and an address and
// its IPv4-mapped form get the same verdict.
func FuzzClassify(f *testing.F) {
	for _, c := range netpolicytest.Cases() {
		b := c.Addr.As16()
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b [16]byte
		copy(b[:], raw)
		a := netip.AddrFrom16(b)
		v := netpolicy.Classify(a, netpolicytest.Own())
		if a.Is4In6() {
			if w := netpolicy.Classify(a.Unmap(), netpolicytest.Own()); w.Internal != v.Internal {
				t.Fatalf("%s: %v, its IPv4 %v", a, v, w)
			}
		}
	})
}

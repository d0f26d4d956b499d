package browser

import (
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestParseCookieFileNetscape: comments and blank lines are skipped,
// #HttpOnly_ marks HttpOnly, TRUE subdomains make a domain cookie, 0 expiry
// a session cookie; a broken line is INVALID_PARAMETER naming it.
func TestParseCookieFileNetscape(t *testing.T) {
	txt := "# Netscape HTTP Cookie File\n\n#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t1900000000\tsid\tabc\r\n.example.com\tTRUE\t/app\tTRUE\t0\ttheme\tdark\n"
	st, err := ParseCookieFile([]byte(txt))
	if err != nil {
		t.Fatal(err)
	}
	want := []Cookie{
		{Name: "sid", Value: "abc", Domain: "127.0.0.1", Path: "/", Expires: 1900000000, HTTPOnly: true},
		{Name: "theme", Value: "dark", Domain: ".example.com", Path: "/app", Expires: -1, Secure: true},
	}
	if !reflect.DeepEqual(st.Cookies, want) {
		t.Fatalf("cookies %+v, want %+v", st.Cookies, want)
	}
	for _, bad := range []string{"a\tMAYBE\t/\tFALSE\t0\tn\tv", "a\tTRUE\t/\tFALSE\tsoon\tn\tv", "a\tTRUE\t/", "# only a comment\n"} {
		if _, err := ParseCookieFile([]byte(bad)); engine.CodeOf(err) != engine.InvalidParameter {
			t.Errorf("%q: %v, want INVALID_PARAMETER", bad, err)
		}
	}
}

// TestParseCookieFileStorageState: a storageState object is read as is
// (its path defaulting to /); a cookie without a domain is refused.
func TestParseCookieFileStorageState(t *testing.T) {
	st, err := ParseCookieFile([]byte(` {"cookies":[{"name":"sid","value":"abc","domain":"127.0.0.1","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],
		"origins":[{"origin":"http://127.0.0.1:1","localStorage":[{"name":"theme","value":"dark"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Cookies) != 1 || st.Cookies[0].Path != "/" || st.Cookies[0].SameSite != "Lax" || len(st.Origins) != 1 || st.Origins[0].LocalStorage[0].Value != "dark" {
		t.Fatalf("state %+v", st)
	}
	if _, err := ParseCookieFile([]byte(`{"cookies":[{"name":"x","value":"1"}]}`)); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("no domain: %v, want INVALID_PARAMETER", err)
	}
}

// FuzzParseCookieFile: any bytes give cookies with a name and a domain, or
// INVALID_PARAMETER; never a panic.
func FuzzParseCookieFile(f *testing.F) {
	f.Add([]byte("# Netscape HTTP Cookie File\n#HttpOnly_.a.test\tTRUE\t/\tFALSE\t0\tsid\tv\n"))
	f.Add([]byte(`{"cookies":[{"name":"a","value":"b","domain":"x.test"}],"origins":[]}`))
	f.Add([]byte("a\tTRUE\t/\tFALSE\t1\tn"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseCookieFile(data)
		if err != nil {
			if engine.CodeOf(err) != engine.InvalidParameter {
				t.Fatalf("error %v, want INVALID_PARAMETER", err)
			}
			return
		}
		for _, c := range st.Cookies {
			if c.Name == "" || c.Domain == "" || c.Path == "" {
				t.Fatalf("cookie %+v lacks a name, domain or path", c)
			}
		}
	})
}

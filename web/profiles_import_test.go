package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/fixture"
)

// fixtureSID signs into the fixture login site with a plain HTTP client
// and returns the sid cookie it set.
func fixtureSID(t *testing.T, site *fixture.Server) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(site.URL("/login"), url.Values{"f1": {fixture.LoginUser}, "f2": {fixture.LoginPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "sid" {
			return ck.Value
		}
	}
	t.Fatalf("the fixture login answered %d without a sid cookie", resp.StatusCode)
	return ""
}

// TestProfileImports (issue 31, acceptance 4): the same login imported
// into one profile from a Playwright storageState file and into another
// from a Netscape cookies.txt gives the same signed-in result:
// batch_extract_pages with either profile reads the members page (200,
// the secret), and each profile lists the site by name.
func TestProfileImports(t *testing.T) {
	fixture.NeedChromium(t)
	dbPath := filepath.Join(t.TempDir(), "bt.db")
	site := fixture.New(t)
	d := startProfileDaemon(t, dbPath)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	sid := fixtureSID(t, site)
	exp := time.Now().Add(time.Hour).Unix()
	files := map[string]string{
		"from-state": fmt.Sprintf(`{"cookies":[{"name":"sid","value":%q,"domain":"127.0.0.1","path":"/","expires":%d,"httpOnly":true,"secure":false,"sameSite":"Lax"}],"origins":[]}`, sid, exp),
		"from-txt":   fmt.Sprintf("# Netscape HTTP Cookie File\n#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t%d\tsid\t%s\n", exp, sid),
	}
	for name, file := range files {
		if _, err := d.eng.CreateProfile(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
		st, err := browser.ParseCookieFile([]byte(file))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := d.bm.ImportProfile(ctx, name, st); err != nil {
			t.Fatalf("import into %s: %v", name, err)
		}
	}
	for name := range files {
		if status, secret := d.extractMembers(t, site, name); status != 200 || secret != "members-only-42" {
			t.Fatalf("profile %s: status %d, secret %v; want 200 members-only-42", name, status, secret)
		}
	}
	list, err := d.eng.Profiles(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("profiles %+v, %v", list, err)
	}
	for _, p := range list {
		if strings.Join(p.Sites, ",") != "127.0.0.1" {
			t.Fatalf("profile %s sites %v, want 127.0.0.1", p.Name, p.Sites)
		}
	}
}

package pagetools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestUploadPathsStayUnderTheAllowedDirectories holds browser_upload's
// path rule without a browser: no --allow-upload-dir refuses every path;
// with one, only regular files under it are read, a symbolic link or a
// ".." leading out is refused, and every refusal is INVALID_PARAMETER
// naming path and the flag.
func TestUploadPathsStayUnderTheAllowedDirectories(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a.txt"), "a")
	write(filepath.Join(dir, "sub", "b.txt"), "bb")
	write(filepath.Join(outside, "secret.txt"), "no")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub", "b.txt"), filepath.Join(dir, "in.txt")); err != nil {
		t.Fatal(err)
	}
	tools := New(fakeSessions{}, fakeBrowsers{})
	refused := func(path string) {
		t.Helper()
		_, err := tools.readAllowed(path)
		e := engine.AsError(err)
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "path" || e.Details["flag"] != "--allow-upload-dir" ||
			!strings.HasPrefix(e.Message, "path: ") {
			t.Errorf("readAllowed(%q) = %v; want INVALID_PARAMETER naming path and --allow-upload-dir", path, e)
		}
	}
	refused(filepath.Join(dir, "a.txt")) // no flag
	if err := tools.AllowUploadDirs([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("AllowUploadDirs accepted a missing directory")
	}
	if err := tools.AllowUploadDirs([]string{dir}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "a.txt"):              "a",
		filepath.Join(dir, "sub", "b.txt"):       "bb",
		filepath.Join(dir, "in.txt"):             "bb", // a link that stays inside
		filepath.Join(dir, "sub", "..", "a.txt"): "a",
	} {
		got, err := tools.readAllowed(path)
		if err != nil || string(got) != want {
			t.Errorf("readAllowed(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, p := range []string{
		filepath.Join(outside, "secret.txt"),
		filepath.Join(dir, "out.txt"),
		filepath.Join(dir, "outdir", "secret.txt"),
		filepath.Join(dir, "..", filepath.Base(outside), "secret.txt"),
		filepath.Join(dir, "sub"),
		dir,
		filepath.Join(dir, "nope.txt"),
		"a.txt",
		"",
	} {
		refused(p)
	}
}

// FuzzFileName holds the names kept for downloads and uploads (chosen by
// pages and clients) to one safe path element: no separator, no control
// character, no leading dot, valid UTF-8, at most maxNameBytes bytes, and
// never empty.
func FuzzFileName(f *testing.F) {
	for _, s := range []string{"invoice-1042.pdf", "../../etc/passwd", `C:\x\y.txt`, ".bashrc", "a\x00b\nc", "\xff\xfe.txt",
		strings.Repeat("é", 200) + ".pdf", "…", "   ", "..", "_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := fileName(name, "download")
		if got == "" || len(got) > maxNameBytes || !utf8.ValidString(got) || strings.HasPrefix(got, ".") ||
			strings.ContainsAny(got, "/\\\x00\n\r\t \"'") {
			t.Fatalf("fileName(%q) = %q", name, got)
		}
		if filepath.Base(got) != got {
			t.Fatalf("fileName(%q) = %q is not one path element", name, got)
		}
	})
}

// FuzzMaskHAR masks a capture whose URL, headers and body a page chose,
// with a password typed on it: the HAR stays JSON and no value in it
// holds the password (of 3 bytes or more, the shortest masked inside
// text, and without "*", which the mask itself is made of) or a value of
// a query parameter named like a secret.
func FuzzMaskHAR(f *testing.F) {
	f.Add("Tr0ub4dor&3-fixture", "http://a.test/login?token=abc&next=%2F", "f1=alice&f2=Tr0ub4dor%263-fixture", "Bearer xyz")
	f.Add("pässwörd", "http://a.test/?q=p%C3%A4ssw%C3%B6rd", `{"password":"pässwörd"}`, "")
	f.Add("abc", "?code=1#frag", "abcabc", "abc")
	f.Fuzz(func(t *testing.T, secret, u, body, auth string) {
		if len(secret) < 3 || strings.Contains(secret, "*") || !utf8.ValidString(secret+u+body+auth) {
			return
		}
		doc := &harDoc{Log: harLog{Version: "1.2", Entries: []*harEntry{{
			Request: harRequest{Method: "POST", URL: u, Headers: []harNV{{"Authorization", auth}, {"Referer", u}, {"X-Note", body}},
				QueryString: queryOf(u), PostData: postDataOf("application/x-www-form-urlencoded", body)},
			Response: harResponse{Status: 200, Content: harContent{Text: body}, RedirectURL: u},
		}}}}
		b, err := maskHAR(doc, []string{secret})
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		var walk func(any)
		walk = func(x any) {
			switch y := x.(type) {
			case string:
				if strings.Contains(y, secret) {
					t.Fatalf("%q still holds the secret %q", y, secret)
				}
			case []any:
				for _, z := range y {
					walk(z)
				}
			case map[string]any:
				for _, z := range y {
					walk(z)
				}
			}
		}
		walk(v)
		for _, h := range doc.Log.Entries[0].Request.Headers {
			if h.Name == "Authorization" && h.Value != engine.SecretMask {
				t.Fatalf("Authorization %q", h.Value)
			}
		}
		for _, q := range doc.Log.Entries[0].Request.QueryString {
			if engine.SecretName(q.Name) && q.Value != engine.SecretMask {
				t.Fatalf("query %s=%q", q.Name, q.Value)
			}
		}
	})
}

// TestSweepDropsThePagesOfClosedSessions: a call on any session drops the
// pages of sessions no longer open, with their files, and keeps the rest.
func TestSweepDropsThePagesOfClosedSessions(t *testing.T) {
	closed := int64(1)
	tools := New(fakeSessions{{ID: "sess_a"}, {ID: "sess_closed", ClosedAt: &closed}}, fakeBrowsers{})
	ps := tools.pages
	dirOf := func(id string) string {
		p := &page{}
		d, err := p.files.tempDir()
		if err != nil {
			t.Fatal(err)
		}
		ps.bySess[id] = p
		return d
	}
	keep, gone1, gone2 := dirOf("sess_a"), dirOf("sess_closed"), dirOf("sess_expired")
	t.Cleanup(func() { _ = os.RemoveAll(keep) })
	_, _ = ps.get(t.Context(), "sess_a") // open but in no browser here: the sweep still runs
	fixture.WaitUntil(t, "the closed sessions' pages dropped with their files", func() bool {
		_, err1 := os.Stat(gone1)
		_, err2 := os.Stat(gone2)
		ps.mu.Lock()
		defer ps.mu.Unlock()
		return len(ps.bySess) == 1 && os.IsNotExist(err1) && os.IsNotExist(err2)
	})
	if ps.bySess["sess_a"] == nil {
		t.Errorf("the open session's page was dropped")
	}
	for d, want := range map[string]bool{keep: true, gone1: false, gone2: false} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists: %v; want %v", d, err == nil, want)
		}
	}
}

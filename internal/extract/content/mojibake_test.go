package content

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
)

// decode1252 is what a browser (and fetch) makes of b when the page
// declares no encoding: windows-1252 by the Encoding Standard's index.
func decode1252(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c < 0x80:
			sb.WriteByte(c)
		case c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D:
			sb.WriteRune(rune(c))
		default:
			sb.WriteRune(charmap.Windows1252.DecodeByte(c))
		}
	}
	return sb.String()
}

// TestExtractReadsUndeclaredUTF8 fetches a UTF-8 page served without any
// charset (no header parameter, no <meta>: how a saved page is served
// from disk) through the real HTTP path: fetch decodes it as windows-1252
// as Chromium does ("fÃ¼r"), and Extract reads it as the UTF-8 it is, in
// the text, the Markdown and the title. Without the repair the snippets
// are missing (the 17 pages of go-trafilatura's comparison set it fixed).
func TestExtractReadsUndeclaredUTF8(t *testing.T) {
	raw, err := os.ReadFile("testdata/undeclared-utf8.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write(raw)
	}))
	defer srv.Close()
	f, err := fetch.New(fetch.Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pg, err := f.Fetch(context.Background(), srv.URL+"/wasser.html")
	if err != nil {
		t.Fatal(err)
	}
	if pg.Charset != "windows-1252" || !strings.Contains(pg.Body, "fÃ¼hrte") {
		t.Fatalf("fetch decoded the undeclared page as %q (want windows-1252, mojibake included): the premise changed", pg.Charset)
	}
	res, err := Extract([]byte(pg.Body), Options{PageURL: pg.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Auf Nachfrage führte die Gemeinde weiter aus",
		"das Gesundheitsamt à la carte informierte",
		"Für Fragen steht die Gemeindeverwaltung während der Öffnungszeiten zur Verfügung. Sie erreichen",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("Text lacks %q:\n%s", want, res.Text)
		}
	}
	if !strings.HasPrefix(res.Markdown, "# Trinkwasser in Därstetten wieder sauber\n") {
		t.Errorf("Markdown starts %q", res.Markdown[:min(len(res.Markdown), 60)])
	}
	if res.Metadata.Title != "Trinkwasser in Därstetten wieder sauber" {
		t.Errorf("Title = %q", res.Metadata.Title)
	}
	for _, s := range []string{res.Text, res.Markdown, res.HTML} {
		if strings.Contains(s, "Ã") {
			t.Errorf("mojibake left: %q", s)
		}
	}
}

// TestRepairMojibake pins which documents are re-read as UTF-8 and which
// are left alone.
func TestRepairMojibake(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		ok             bool
	}{
		{"UTF-8 read as windows-1252", decode1252([]byte("<p>für Straße – “quoted” €5 Łódź 日本</p>")), "<p>für Straße – “quoted” €5 Łódź 日本</p>", true},
		{"the serialized DOM writes the 0xA0 of à and Р as &nbsp;", strings.ReplaceAll(decode1252([]byte("<p>à la carte, Русский")), "\u00a0", nbspEntity) + "&nbsp;x</p>", "<p>à la carte, Русский&nbsp;x</p>", true},
		{"windows-1252 text: an accented letter before an ASCII one", "<p>für Straße</p>", "<p>für Straße</p>", false},
		{"correct UTF-8 with a character windows-1252 lacks", "<p>Ã¼ → ü</p>", "<p>Ã¼ → ü</p>", false},
		{"a lone continuation byte", "<p>© 2024</p>", "<p>© 2024</p>", false},
		{"a sequence cut short at the end", "<p>Ã", "<p>Ã", false},
		{"ASCII only: nothing to do", "<p>plain &nbsp; text</p>", "<p>plain &nbsp; text</p>", false},
		{"an overlong encoding is not UTF-8", decode1252([]byte{0xC0, 0xAF}), decode1252([]byte{0xC0, 0xAF}), false},
		{"a surrogate is not UTF-8", decode1252([]byte{0xED, 0xA0, 0x80}), decode1252([]byte{0xED, 0xA0, 0x80}), false},
		{"the undefined bytes decode to C1 controls", decode1252([]byte("x\u0441\u045d")), "x\u0441\u045d", true},
	} {
		got, ok := repairMojibake(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: repairMojibake(%q) = %q, %v; want %q, %v", c.name, c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestExtractDropsSoftHyphens: soft hyphens, written as characters or as
// &shy;, leave the text, the Markdown and the title, so the words are
// whole again (4 pages of go-trafilatura's comparison set lost snippets
// to them).
func TestExtractDropsSoftHyphens(t *testing.T) {
	page := "<html><head><title>Bundes\u00adregierung</title></head><body><article><h1>Die Bundes&shy;regierung tagt</h1>" +
		"<p>St. Magdalener \u00fcber\u00adzeugen mit zarter Frucht und einer Wein\u00adbegleitung, die zu vielen Gerichten der Region passt und im Herbst gern getrunken wird.</p>" +
		"<p>Die Kellerei liegt am Hang \u00fcber der Stadt; ihre Lagen ziehen sich bis an den Wald, und die Lese dauert meist drei Wochen, bei gutem Wetter weniger.</p>" +
		"</article></body></html>"
	res, err := Extract([]byte(page), Options{PageURL: "http://127.0.0.1/wein"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Die Bundesregierung tagt", "St. Magdalener überzeugen mit zarter Frucht und einer Weinbegleitung"} {
		if !strings.Contains(res.Text, want) || !strings.Contains(res.Markdown, want) {
			t.Errorf("Text/Markdown lack %q:\n%s\n---\n%s", want, res.Text, res.Markdown)
		}
	}
	if res.Metadata.Title != "Die Bundesregierung tagt" {
		t.Errorf("Title = %q", res.Metadata.Title)
	}
	if strings.Contains(res.Text+res.Markdown+res.HTML, "\u00ad") {
		t.Error("a soft hyphen is left")
	}
}

// FuzzRepairMojibake: any bytes that are UTF-8 with a multi-byte sequence,
// decoded as windows-1252, come back exactly; bytes that are not UTF-8
// are never "repaired" (unless the page writes &nbsp; where a sequence
// needed its 0xA0, the one documented ambiguity); any string at all gives
// valid UTF-8 whenever it is repaired, without panicking.
func FuzzRepairMojibake(f *testing.F) {
	f.Add([]byte("für – €"))
	f.Add([]byte{0xC3, 0xA0, ' ', 0xE2, 0x82})
	f.Add([]byte("Ã&nbsp;"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := decode1252(b)
		got, ok := repairMojibake(s)
		multi := strings.IndexFunc(string(b), func(r rune) bool { return r >= utf8.RuneSelf }) >= 0
		switch {
		case utf8.Valid(b) && multi:
			if !ok || got != string(b) {
				t.Fatalf("repairMojibake(%q) = %q, %v; want %q", s, got, ok, b)
			}
		case !utf8.Valid(b) && !strings.Contains(string(b), nbspEntity):
			if ok {
				t.Fatalf("repairMojibake(%q) repaired bytes that are not UTF-8: %q", s, got)
			}
		}
		if got2, ok2 := repairMojibake(string(b)); ok2 && !utf8.ValidString(got2) {
			t.Fatalf("repairMojibake(%q) gave invalid UTF-8", b)
		}
	})
}

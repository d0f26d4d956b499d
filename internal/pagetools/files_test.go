package pagetools_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/wire"
)

// filesDaemon is a daemon's MCP endpoint (go-sdk client over Streamable
// HTTP) allowing uploads from dir, with a session open.
func filesDaemon(t *testing.T, dir string) (*sdk.ClientSession, string) {
	t.Helper()
	return filesDaemonOn(t, dir, browser.Options{})
}

// filesDaemonOn is filesDaemon whose browser is bo (a remote endpoint).
func filesDaemonOn(t *testing.T, dir string, bo browser.Options) (*sdk.ClientSession, string) {
	t.Helper()
	p, err := wire.Open(t.Context(), wire.Options{DBPath: filepath.Join(t.TempDir(), "bt.db"), Engine: engine.DefaultConfig(), Version: "test",
		UploadDirs: []string{dir}, Browser: bo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ts := newHTTPServer(t, p)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: ts + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	_, sess, isErr := call(t, cs, "create_browser_session", map[string]any{})
	if isErr {
		t.Fatalf("create_browser_session: %v", sess)
	}
	return cs, sess["sessionId"].(string)
}

// newHTTPServer serves p's MCP endpoint on loopback and returns its URL.
func newHTTPServer(t *testing.T, p *wire.Process) string {
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = p.Handler(ts.Listener.Addr().String(), wire.HTTPOptions{})
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

func itoa(n int) string { return strconv.Itoa(n) }

// readResource reads an artifact's bytes through resources/read.
func readResource(t *testing.T, cs *sdk.ClientSession, res *sdk.CallToolResult) ([]byte, *sdk.ResourceLink) {
	t.Helper()
	var link *sdk.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*sdk.ResourceLink); ok {
			link = l
		}
	}
	if link == nil {
		t.Fatalf("no resource_link in %v", res.Content)
	}
	rr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: link.URI})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("resources/read %s: %v %v", link.URI, rr, err)
	}
	if c := rr.Contents[0]; c.Text != "" {
		return []byte(c.Text), link
	}
	return rr.Contents[0].Blob, link
}

func mustCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (string, map[string]any) {
	t.Helper()
	text, sc, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: %v", name, args, sc)
	}
	return text, sc
}

// TestUploadAndDownloadOnTheShop downloads the fixture shop's invoice
// (a click on "Download invoice" answering Content-Disposition:
// attachment) as an artifact of the session whose bytes, read back over
// resources/read, are the shop's; then uploads a file from the allowed
// directory and the invoice artifact to the shop's receipt form, which
// echoes the name, size and SHA-256 it received. Paths outside the
// allowed directory, a symbolic link leading out of it and a relative
// path are refused with INVALID_PARAMETER naming path and the flag.
func TestUploadAndDownloadOnTheShop(t *testing.T) {
	fixture.NeedChromium(t)
	site := fixture.Start()
	t.Cleanup(site.Close)
	dir, outside := t.TempDir(), t.TempDir()
	receipt := []byte("receipt 1042: 24.00 EUR paid\n")
	if err := os.WriteFile(filepath.Join(dir, "receipt.txt"), receipt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "private.txt"), []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "private.txt"), filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	cs, sid := filesDaemon(t, dir)

	// The invoice, downloaded.
	snap, _ := mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/shop/invoice")})
	mustCall(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "link", "Download invoice"), "action": "click"})
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "browser_download", Arguments: map[string]any{"sessionId": sid, "timeoutMs": 60000}})
	if err != nil || res.IsError {
		t.Fatalf("browser_download: %v %v", err, res)
	}
	var dl map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &dl)
	want := fixture.ShopInvoice()
	if dl["name"] != fixture.ShopInvoiceName || dl["mimeType"] != "application/pdf" || dl["size"] != float64(len(want)) || dl["url"] != site.URL("/shop/invoice.pdf") {
		t.Errorf("download %v; want %s, application/pdf, %d bytes", dl, fixture.ShopInvoiceName, len(want))
	}
	got, link := readResource(t, cs, res)
	if !bytes.Equal(got, want) || link.URI != "browsertask://artifacts/"+dl["artifactId"].(string) {
		t.Errorf("artifact %s: %d bytes %q; want the invoice's %d", link.URI, len(got), got[:min(len(got), 20)], len(want))
	}

	// Uploads: a file of the allowed directory, then the invoice artifact.
	for _, c := range []struct {
		arg  map[string]any
		name string
		data []byte
	}{
		{map[string]any{"path": filepath.Join(dir, "receipt.txt")}, "receipt.txt", receipt},
		{map[string]any{"artifactId": dl["artifactId"]}, fixture.ShopInvoiceName, want},
	} {
		snap, _ = mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/shop/upload")})
		args := map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Receipt")}
		for k, v := range c.arg {
			args[k] = v
		}
		sum := sha256.Sum256(c.data)
		_, sc := mustCall(t, cs, "browser_upload", args)
		if sc["name"] != c.name || sc["size"] != float64(len(c.data)) || sc["sha256"] != hex.EncodeToString(sum[:]) {
			t.Errorf("upload %v answered %v", c.arg, sc)
		}
		mustCall(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Send receipt"), "action": "click"})
		snap, _ = mustCall(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": "Receipt received", "timeoutMs": 60000})
		for _, w := range []string{c.name, hex.EncodeToString(sum[:])} {
			if !strings.Contains(snap, w) {
				t.Errorf("the shop did not receive %q:\n%s", w, snap)
			}
		}
		if !strings.Contains(snap, "Size "+itoa(len(c.data))+" bytes") {
			t.Errorf("size %d not echoed:\n%s", len(c.data), snap)
		}
	}

	// Refusals.
	snap, _ = mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/shop/upload")})
	input := refOf(t, snap, "button", "Receipt")
	for _, c := range []struct {
		args  map[string]any
		field string
	}{
		{map[string]any{"ref": input, "path": filepath.Join(outside, "private.txt")}, "path"},
		{map[string]any{"ref": input, "path": filepath.Join(dir, "escape.txt")}, "path"},
		{map[string]any{"ref": input, "path": filepath.Join(dir, "..", filepath.Base(outside), "private.txt")}, "path"},
		{map[string]any{"ref": input, "path": "receipt.txt"}, "path"},
		{map[string]any{"ref": input, "path": filepath.Join(dir, "receipt.txt"), "artifactId": dl["artifactId"]}, "artifactId"},
		{map[string]any{"ref": refOf(t, snap, "button", "Send receipt"), "path": filepath.Join(dir, "receipt.txt")}, "ref"},
	} {
		c.args["sessionId"] = sid
		_, sc, isErr := call(t, cs, "browser_upload", c.args)
		details, _ := sc["details"].(map[string]any)
		if !isErr || sc["errorCode"] != "INVALID_PARAMETER" || details["field"] != c.field {
			t.Errorf("upload %v: %v; want INVALID_PARAMETER naming %s", c.args, sc, c.field)
		}
		if c.field == "path" && (details["flag"] != "--allow-upload-dir" || !strings.Contains(sc["recovery"].(string), "--allow-upload-dir")) {
			t.Errorf("upload %v: %v; want the flag named", c.args, sc)
		}
	}
	_, sc, isErr := call(t, cs, "browser_download", map[string]any{"sessionId": sid, "timeoutMs": 1})
	if !isErr || sc["errorCode"] != "STEP_EXECUTION_FAILED" {
		t.Errorf("a second browser_download: %v; want STEP_EXECUTION_FAILED (no download)", sc)
	}
}

// TestUploadToARemoteBrowser: a remote --browser may run on another
// machine, so browser_upload sends the bytes over its DevTools connection
// (never DOM.setFileInputFiles, which names a path on the browser's
// machine); the shop receives the file's name and bytes, and a file over
// the cap is refused naming the field.
func TestUploadToARemoteBrowser(t *testing.T) {
	site := fixture.Start()
	t.Cleanup(site.Close)
	remote := fixture.StartRemoteChromium(t)
	var setFiles atomic.Int64
	dir := t.TempDir()
	receipt := []byte("receipt 1043: 12.50 EUR paid\n\x00\xff binary tail")
	big := make([]byte, 16<<20+1)
	for name, data := range map[string][]byte{"receipt.txt": receipt, "big.bin": big} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cs, sid := filesDaemonOn(t, dir, browser.Options{Browser: []string{remote.WS}, CDPTrace: func(method string) {
		if method == "DOM.setFileInputFiles" {
			setFiles.Add(1)
		}
	}})
	snap, _ := mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/shop/upload")})
	_, sc := mustCall(t, cs, "browser_upload", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Receipt"), "path": filepath.Join(dir, "receipt.txt")})
	sum := sha256.Sum256(receipt)
	if sc["name"] != "receipt.txt" || sc["size"] != float64(len(receipt)) || sc["sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("upload answered %v", sc)
	}
	mustCall(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Send receipt"), "action": "click"})
	snap, _ = mustCall(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": "Receipt received", "timeoutMs": 60000})
	for _, w := range []string{"receipt.txt", hex.EncodeToString(sum[:]), "Size " + itoa(len(receipt)) + " bytes"} {
		if !strings.Contains(snap, w) {
			t.Errorf("the shop did not receive %q:\n%s", w, snap)
		}
	}
	if n := setFiles.Load(); n != 0 {
		t.Errorf("DOM.setFileInputFiles sent %d times to a remote browser, want 0", n)
	}
	snap, _ = mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/shop/upload")})
	_, sc, isErr := call(t, cs, "browser_upload", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Receipt"), "path": filepath.Join(dir, "big.bin")})
	details, _ := sc["details"].(map[string]any)
	if !isErr || sc["errorCode"] != "INVALID_PARAMETER" || details["field"] != "path" || !strings.Contains(sc["message"].(string), "remote --browser") {
		t.Errorf("a 16 MiB + 1 upload to a remote browser: %v; want INVALID_PARAMETER naming path", sc)
	}
}

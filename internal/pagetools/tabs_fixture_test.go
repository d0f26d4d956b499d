package pagetools_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/wire"
)

// interactiveSite serves the pages the tabs, frames, act and console tests
// drive. Frames are cross-site when the page is loaded from 127.0.0.1 and
// its frame from localhost (another site: Chromium puts it in a process of
// its own).
func interactiveSite(t *testing.T) (base, other string) {
	t.Helper()
	var port string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page := func(title, body string) {
			fmt.Fprintf(w, `<!doctype html><title>%s</title><main>%s</main>`, title, body)
		}
		switch r.URL.Path {
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		case "/tabs":
			page("Tabs", `<h1>Tabs</h1><a href="/popup?n=1" target="_blank">Open popup</a>
<button onclick="window.open('/popup?n=2')">Open window</button>
<script>console.log('tabs page', 42, {a: 1}); console.warn('careful'); setTimeout(() => { throw new Error('boom') })</script>`)
		case "/popup":
			page("Popup "+r.URL.Query().Get("n"), `<h1>Popup page</h1><button onclick="window.close()">Close me</button>
<button onclick="console.error('popup error')">Log</button><script>console.info('popup loaded')</script>`)
		case "/frames":
			page("Frames", `<h1>Frames</h1><iframe title="Same" src="/inner?who=same"></iframe>
<iframe title="Cross" src="http://localhost:`+port+`/inner?who=cross"></iframe>`)
		case "/inner":
			who := r.URL.Query().Get("who")
			page("Inner", `<button onclick="out.textContent = 'clicked `+who+` ' + box.value">Press `+who+`</button>
<input id=box aria-label="Box `+who+`"><p id=out></p>`)
		case "/menu":
			page("Menu", `<style>.menu ul { display: none } .menu:hover ul { display: block }</style>
<nav class=menu><button>Products</button><ul><li><a href="/teapots">Teapots</a></li></ul></nav>`)
		case "/drag":
			page("Drag", `<ul id=list><li><button draggable=true>Alpha</button></li><li><button draggable=true>Beta</button></li><li><button draggable=true>Gamma</button></li></ul>
<p id=order>Order: Alpha Beta Gamma</p>
<script>
let dragged = null;
const show = () => order.textContent = 'Order: ' + [...list.querySelectorAll('button')].map(b => b.textContent).join(' ');
list.addEventListener('dragstart', e => { dragged = e.target.closest('li'); e.dataTransfer.setData('text/plain', 'x') });
list.addEventListener('dragover', e => e.preventDefault());
list.addEventListener('drop', e => { e.preventDefault(); const to = e.target.closest('li'); if (dragged && to && to !== dragged) { to.after(dragged); show() } });
</script>`)
		case "/scroll":
			page("Scroll", `<h1>Scroll</h1><p id=state>At the top</p><div style="height: 4000px"></div><p>The end</p>
<script>addEventListener('scroll', () => { if (scrollY > 500) state.textContent = 'Scrolled past 500' })</script>`)
		case "/login":
			page("Login", `<h1>Sign in</h1><label>User <input name=u></label><label>Password <input type=password name=p></label>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port = u.Port()
	return srv.URL, "http://localhost:" + port
}

// daemon starts a daemon's MCP endpoint (go-sdk client over Streamable
// HTTP) and a browser session, returning the client, the session, the
// process and the daemon's base URL (for its dashboard).
func daemon(t *testing.T) (*sdk.ClientSession, string, *wire.Process, string) {
	t.Helper()
	p, err := wire.Open(t.Context(), wire.Options{DBPath: filepath.Join(t.TempDir(), "bt.db"), Engine: engine.DefaultConfig(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = p.Handler(ts.Listener.Addr().String(), wire.HTTPOptions{})
	ts.Start()
	t.Cleanup(ts.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	_, sess, isErr := call(t, cs, "create_browser_session", map[string]any{})
	if isErr {
		t.Fatalf("create_browser_session: %v", sess)
	}
	return cs, sess["sessionId"].(string), p, ts.URL
}

// must calls a tool that must succeed and returns its text and structured
// content.
func must(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (string, map[string]any) {
	t.Helper()
	text, sc, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: %v", name, args, sc)
	}
	return text, sc
}

// refuses calls a tool that must fail with code naming field.
func refuses(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, code, field string) {
	t.Helper()
	_, sc, isErr := call(t, cs, name, args)
	details, _ := sc["details"].(map[string]any)
	if !isErr || sc["errorCode"] != code || (field != "" && (details == nil || details["field"] != field)) {
		t.Errorf("%s %v: %v; want %s naming %q", name, args, sc, code, field)
	}
}

// tabIDs returns the ids of a browser_tabs answer's tabs and its current
// tab.
func tabIDs(sc map[string]any) (ids []string, current string) {
	list, _ := sc["tabs"].([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		ids = append(ids, fmt.Sprint(m["tab"]))
	}
	current, _ = sc["current"].(string)
	return ids, current
}

// tabURL is the address the answer lists for tab id.
func tabURL(sc map[string]any, id string) string {
	list, _ := sc["tabs"].([]any)
	for _, x := range list {
		if m, _ := x.(map[string]any); m["tab"] == id {
			s, _ := m["url"].(string)
			return s
		}
	}
	return ""
}

// joined is ids joined by spaces.
func joined(ids []string) string { return strings.Join(ids, " ") }

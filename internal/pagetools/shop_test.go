package pagetools_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/wire"
)

// shop is a small store a person would use: a search form, a results page,
// product pages with a quantity and an "Add to cart" form, and a cart.
type shop struct {
	mu   sync.Mutex
	cart map[string]string // product → quantity
}

var products = []string{"Blue mug", "Red mug", "Green teapot"}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page := func(title, body string) {
		fmt.Fprintf(w, `<!doctype html><title>%s</title><header><nav><a href="/">Shop</a> <a href="/cart">Cart</a></nav></header><main>%s</main>`, title, body)
	}
	switch {
	case r.URL.Path == "/":
		page("Shop", `<h1>Shop</h1><form action="/search" role="search"><input name=q aria-label="Search products"><button>Search</button></form>`)
	case r.URL.Path == "/search":
		var b strings.Builder
		for i, p := range products {
			if strings.Contains(strings.ToLower(p), strings.ToLower(r.URL.Query().Get("q"))) {
				fmt.Fprintf(&b, `<li><a href="/product/%d">%s</a></li>`, i, html.EscapeString(p))
			}
		}
		page("Results", "<h1>Results</h1><ul>"+b.String()+"</ul>")
	case strings.HasPrefix(r.URL.Path, "/product/"):
		var i int
		fmt.Sscanf(r.URL.Path, "/product/%d", &i)
		page(products[i], fmt.Sprintf(`<h1>%s</h1><form method=post action="/cart"><input type=hidden name=p value="%s">
<label>Quantity <select name=qty><option>1<option>2<option>3</select></label><button>Add to cart</button></form>`, products[i], products[i]))
	case r.URL.Path == "/cart" && r.Method == http.MethodPost:
		_ = r.ParseForm()
		s.mu.Lock()
		s.cart[r.PostForm.Get("p")] = r.PostForm.Get("qty")
		s.mu.Unlock()
		http.Redirect(w, r, "/cart", http.StatusSeeOther)
	case r.URL.Path == "/cart":
		s.mu.Lock()
		var b strings.Builder
		for p, q := range s.cart {
			fmt.Fprintf(&b, "<p>%s × %s</p>", html.EscapeString(p), q)
		}
		s.mu.Unlock()
		page("Cart", "<h1>Cart</h1>"+b.String())
	default:
		http.NotFound(w, r)
	}
}

// call calls a tool and returns its text and structured content.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	sc := map[string]any{}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	return text, sc, res.IsError
}

// refOf finds the reference of the line with role and name in a snapshot.
func refOf(t *testing.T, snap, role, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*(?:\+ +)?(e\d+) ` + role + ` "` + regexp.QuoteMeta(name) + `"`).FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no %s %q in snapshot:\n%s", role, name, snap)
	}
	return m[1]
}

// TestShopJourneyThroughTheInteractiveTools drives a real daemon's MCP
// endpoint (go-sdk client over Streamable HTTP) through a session: search,
// open a product, choose a quantity, add it to the cart; the shop's cart
// holds it. A denied host and an unknown session are refused with their
// codes.
func TestShopJourneyThroughTheInteractiveTools(t *testing.T) {
	fixture.NeedChromium(t)
	sh := &shop{cart: map[string]string{}}
	site := httptest.NewServer(sh)
	t.Cleanup(site.Close)
	denied := httptest.NewServer(sh)
	t.Cleanup(denied.Close)
	p, err := wire.Open(t.Context(), wire.Options{DBPath: filepath.Join(t.TempDir(), "bt.db"), Engine: engine.DefaultConfig(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	du, _ := url.Parse(denied.URL)
	p.Browser.DenyHost(du.Host)
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
	sid := sess["sessionId"].(string)

	snap, sc, isErr := call(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL + "/"})
	if isErr || sc["status"] != float64(200) {
		t.Fatalf("navigate: %v %s", sc, snap)
	}
	box := refOf(t, snap, "textbox", "Search products")
	if _, sc, isErr = call(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": box, "action": "fill", "value": "mug"}); isErr {
		t.Fatalf("fill: %v", sc)
	}
	if _, sc, isErr = call(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": box, "action": "press", "value": "Enter"}); isErr {
		t.Fatalf("press: %v", sc)
	}
	// Enter submits the form; browser_wait answers once the results show.
	snap, sc, isErr = call(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": "Results", "timeoutMs": 60000})
	if isErr {
		t.Fatalf("wait: %v", sc)
	}
	if !strings.Contains(snap, `link "Red mug"`) || strings.Contains(snap, "teapot") {
		t.Fatalf("results:\n%s", snap)
	}
	if _, sc, isErr = call(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "link", "Blue mug"), "action": "click"}); isErr {
		t.Fatalf("click product: %v", sc)
	}
	if snap, sc, isErr = call(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": "Quantity", "timeoutMs": 60000}); isErr || !strings.Contains(snap, "# Blue mug") {
		t.Fatalf("wait for the product: %v\n%s", sc, snap)
	}
	if _, sc, isErr = call(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "combobox", "Quantity"), "action": "select", "value": "2"}); isErr {
		t.Fatalf("select: %v", sc)
	}
	if _, sc, isErr = call(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Add to cart"), "action": "click"}); isErr {
		t.Fatalf("add to cart: %v", sc)
	}
	if snap, sc, isErr = call(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": "Blue mug × 2", "timeoutMs": 60000}); isErr || !strings.Contains(snap, "# Cart") {
		t.Fatalf("wait for the cart: %v\n%s", sc, snap)
	}
	sh.mu.Lock()
	if len(sh.cart) != 1 || sh.cart["Blue mug"] != "2" {
		t.Errorf("cart %v; want Blue mug × 2", sh.cart)
	}
	sh.mu.Unlock()

	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "browser_screenshot", Arguments: map[string]any{"sessionId": sid}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("screenshot: %v %v", res, err)
	}
	if img, ok := res.Content[0].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
		t.Fatalf("screenshot content %T", res.Content[0])
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"browser_navigate", map[string]any{"sessionId": sid, "url": denied.URL + "/"}, "INVALID_PARAMETER"},
		{"browser_navigate", map[string]any{"sessionId": sid, "url": "file:///etc/passwd"}, "INVALID_PARAMETER"},
		{"browser_snapshot", map[string]any{"sessionId": "sess_nope"}, "SESSION_NOT_FOUND"},
		{"browser_act", map[string]any{"sessionId": sid, "ref": "e999", "action": "click"}, "INVALID_PARAMETER"},
		{"browser_snapshot", map[string]any{"sessionId": sid, "maxTokens": 5}, "INVALID_PARAMETER"},
		{"browser_wait", map[string]any{"sessionId": sid, "text": "never shown", "timeoutMs": 1}, "ELEMENT_NOT_FOUND"},
	} {
		_, sc, isErr := call(t, cs, c.tool, c.args)
		if !isErr || sc["errorCode"] != c.code {
			t.Errorf("%s %v: %v; want %s", c.tool, c.args, sc, c.code)
		}
	}
}

package pagetools_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestHARMasksTheSignInPassword signs in on the fixture site with its
// password while browser_network captures with bodies, and reads the HAR
// artifact back over resources/read: HAR 1.2 listing the GET of the form,
// the POST (303, its body with the password field as ***) and the members
// page (200, the session cookie as ***), with timings; the password, in
// any spelling, appears nowhere in the artifact.
func TestHARMasksTheSignInPassword(t *testing.T) {
	fixture.NeedChromium(t)
	site := fixture.Start()
	t.Cleanup(site.Close)
	cs, sid := filesDaemon(t, t.TempDir())

	_, sc := mustCall(t, cs, "browser_network", map[string]any{"sessionId": sid, "action": "start", "bodies": true})
	if sc["capturing"] != true {
		t.Fatalf("start: %v", sc)
	}
	snap, _ := mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/login") + "?next=%2Fmembers&token=tok-123"})
	mustCall(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "textbox", "Email or username"), "action": "fill", "value": fixture.LoginUser})
	mustCall(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "textbox", "Password"), "action": "fill", "value": fixture.LoginPassword})
	mustCall(t, cs, "browser_act", map[string]any{"sessionId": sid, "ref": refOf(t, snap, "button", "Sign in"), "action": "click"})
	mustCall(t, cs, "browser_wait", map[string]any{"sessionId": sid, "text": "Welcome alice", "timeoutMs": 60000})
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "browser_network", Arguments: map[string]any{"sessionId": sid, "action": "stop"}})
	if err != nil || res.IsError {
		t.Fatalf("stop: %v %v", err, res)
	}
	data, link := readResource(t, cs, res)
	if link.MIMEType != "application/json" || !strings.HasSuffix(link.Name, ".har") {
		t.Errorf("link %+v; want a .har of application/json", link)
	}
	escaped, _ := json.Marshal(fixture.LoginPassword) // & as \u0026
	for _, form := range []string{fixture.LoginPassword, strings.Trim(string(escaped), `"`), url.QueryEscape(fixture.LoginPassword), "tok-123"} {
		if strings.Contains(string(data), form) {
			t.Errorf("the HAR holds %q", form)
		}
	}
	var har struct {
		Log struct {
			Version string
			Entries []struct {
				Request struct {
					Method, URL string
					Headers     []struct{ Name, Value string }
					PostData    *struct {
						Text   string
						Params []struct{ Name, Value string }
					}
				}
				Response struct {
					Status  int
					Headers []struct{ Name, Value string }
				}
				Time    float64
				Timings struct{ Send, Wait, Receive float64 }
			}
		}
	}
	if err := json.Unmarshal(data, &har); err != nil || har.Log.Version != "1.2" {
		t.Fatalf("HAR: %v %.300s", err, data)
	}
	var saw []string
	posts := 0
	for _, e := range har.Log.Entries {
		u, _ := url.Parse(e.Request.URL)
		saw = append(saw, e.Request.Method+" "+u.Path)
		switch {
		case e.Request.Method == "GET" && u.Path == "/login":
			if u.Query().Get("token") != "***" || u.Query().Get("next") != "/members" || e.Response.Status != 200 || e.Time <= 0 {
				t.Errorf("GET /login: %s status %d time %v", e.Request.URL, e.Response.Status, e.Time)
			}
		case e.Request.Method == "POST" && u.Path == "/login":
			posts++
			if e.Response.Status != 303 || e.Request.PostData == nil || e.Request.PostData.Text != "f1="+fixture.LoginUser+"&f2=***" {
				t.Errorf("POST /login: status %d body %+v", e.Response.Status, e.Request.PostData)
			}
			if p := e.Request.PostData; p != nil && (len(p.Params) != 2 || p.Params[1].Name != "f2" || p.Params[1].Value != "***") {
				t.Errorf("POST /login params %+v", p.Params)
			}
			for _, h := range e.Response.Headers {
				if strings.EqualFold(h.Name, "Set-Cookie") && h.Value != "***" {
					t.Errorf("Set-Cookie %q", h.Value)
				}
			}
		case u.Path == "/members":
			cookie := ""
			for _, h := range e.Request.Headers {
				if strings.EqualFold(h.Name, "Cookie") {
					cookie = h.Value
				}
			}
			if e.Response.Status != 200 || cookie != "***" {
				t.Errorf("GET /members: status %d Cookie %q; want 200 and ***", e.Response.Status, cookie)
			}
		}
	}
	if posts != 1 || !strings.Contains(strings.Join(saw, ","), "GET /members") {
		t.Errorf("entries %v; want one POST /login and GET /members", saw)
	}
	if t.Failed() {
		t.Logf("HAR:\n%s", data)
	}

	// Without bodies: the requests, no body text; a second stop is refused.
	mustCall(t, cs, "browser_network", map[string]any{"sessionId": sid, "action": "start"})
	mustCall(t, cs, "browser_navigate", map[string]any{"sessionId": sid, "url": site.URL("/members")})
	res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "browser_network", Arguments: map[string]any{"sessionId": sid, "action": "stop"}})
	if err != nil || res.IsError {
		t.Fatalf("stop: %v %v", err, res)
	}
	data, _ = readResource(t, cs, res)
	if strings.Contains(string(data), `"text":"`) || strings.Contains(string(data), "members-only-42") || !strings.Contains(string(data), "/members") {
		t.Errorf("a capture without bodies: %.2000s", data)
	}
	if _, sc, isErr := call(t, cs, "browser_network", map[string]any{"sessionId": sid, "action": "stop"}); !isErr || sc["errorCode"] != "INVALID_PARAMETER" {
		t.Errorf("stop without a capture: %v", sc)
	}
}

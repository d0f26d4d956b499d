package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestCrossOriginCancelIsRefused(t *testing.T) {
	e := newEnv(t, "", true)
	id := e.submit(map[string]any{"sleepMs": 1000, "items": 30})
	e.waitStatus(id, engine.StatusRunning)
	post := func(hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/runs/"+id+"/cancel", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// A page on another site posting a form: the browser sends both headers.
	if r := post(map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site POST: status %d, want 403", r.StatusCode)
	}
	// An older browser that sends only Origin.
	if r := post(map[string]string{"Origin": "http://evil.example"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST (Origin only): status %d, want 403", r.StatusCode)
	}
	if r, _ := e.eng.Get(t.Context(), id); r.Status != engine.StatusRunning {
		t.Fatalf("run is %s after refused cancels, want running", r.Status)
	}
	// GET on the cancel route is not a state change: it only asks (the
	// confirmation step of a Cancel without JavaScript).
	resp, err := http.Get(e.srv.URL + "/runs/" + id + "/cancel")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="confirm-cancel-yes"`) {
		t.Fatalf("GET cancel: %d, want 200 and the confirmation page (only POST cancels)", resp.StatusCode)
	}
	if r, _ := e.eng.Get(t.Context(), id); r.Status != engine.StatusRunning {
		t.Fatalf("run is %s after a GET, want running", r.Status)
	}
	// The dashboard's own page posting: allowed, the run is canceled.
	if r := post(map[string]string{"Origin": e.srv.URL, "Sec-Fetch-Site": "same-origin"}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("same-origin POST: status %d, want 303", r.StatusCode)
	}
	if r, _ := e.eng.Get(t.Context(), id); r.Status != engine.StatusCanceled {
		t.Fatalf("run is %s, want canceled", r.Status)
	}
}

func TestArtifactHeaders(t *testing.T) {
	e := newEnv(t, "", true)
	htmlRun := e.submit(map[string]any{"content": "<script>document.title='pwned'</script>", "mimeType": "text/html"})
	pngRun := e.submit(map[string]any{"contentBase64": pngBase64(t), "mimeType": "image/png"})
	get := func(runID, query string) (*http.Response, string) {
		r := e.waitStatus(runID, engine.StatusSucceeded)
		if len(r.ArtifactIDs) != 1 {
			t.Fatalf("run %s has %d artifacts", runID, len(r.ArtifactIDs))
		}
		resp, err := http.Get(e.srv.URL + "/artifacts/" + r.ArtifactIDs[0] + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get(htmlRun, "")
	h := resp.Header
	if resp.StatusCode != 200 || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") ||
		h.Get("Content-Security-Policy") != "sandbox" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("HTML artifact: %d %v", resp.StatusCode, h)
	}
	if !strings.Contains(h.Get("Content-Disposition"), `filename=content.html`) || !strings.Contains(body, "<script>") {
		t.Fatalf("HTML artifact: disposition %q body %q", h.Get("Content-Disposition"), body)
	}
	resp, body = get(pngRun, "")
	h = resp.Header
	if h.Get("Content-Type") != "image/png" || !strings.HasPrefix(h.Get("Content-Disposition"), "inline") ||
		h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "sandbox" || !strings.HasPrefix(body, "\x89PNG") {
		t.Fatalf("PNG artifact: %v", h)
	}
	resp, _ = get(pngRun, "?download=1")
	if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download=1: %q", resp.Header.Get("Content-Disposition"))
	}
	resp, err := http.Get(e.srv.URL + "/artifacts/art_missing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing artifact: %d", resp.StatusCode)
	}
}

func TestTokenGuardsTheDashboard(t *testing.T) {
	e := newEnv(t, "s3cret", false)
	jar := &cookieJar{}
	client := &http.Client{Jar: jar}
	status := func(path string) int {
		resp, err := client.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := status("/"); s != http.StatusUnauthorized {
		t.Fatalf("GET / without token: %d, want 401", s)
	}
	if s := status("/static/app.css"); s != http.StatusOK {
		t.Fatalf("static without token: %d, want 200", s)
	}
	if s := status("/login?token=wrong"); s != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", s)
	}
	if s := status("/login?token=s3cret"); s != http.StatusOK { // redirected to /
		t.Fatalf("login: %d, want 200 after redirect", s)
	}
	if s := status("/profile"); s != http.StatusOK {
		t.Fatalf("with cookie: %d, want 200", s)
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/templates", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bearer: %d", resp.StatusCode)
	}
}

func TestForeignHostIsRefused(t *testing.T) {
	e := newEnv(t, "", false)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("DNS-rebinding Host: %d, want 403", resp.StatusCode)
	}
}

// cookieJar is a minimal jar for one host.
type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, c []*http.Cookie) { j.cookies = append(j.cookies, c...) }
func (j *cookieJar) Cookies(*url.URL) []*http.Cookie         { return j.cookies }

// TestCrossSiteStateChangesAreRefused posts a cancel with every combination
// of the headers a browser uses to say where a request comes from: the
// cross-site ones get 403 and the run stays queued, the same-origin and
// header-less (curl) ones cancel it.
func TestCrossSiteStateChangesAreRefused(t *testing.T) {
	e := newEnv(t, "", false) // engine stopped: runs stay queued until canceled
	own := e.srv.URL          // http://127.0.0.1:PORT, the dashboard's origin
	u, _ := url.Parse(own)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, hdr map[string]string, form url.Values) int {
		req, _ := http.NewRequest(http.MethodPost, own+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"Referer only, cross-site", map[string]string{"Referer": "http://evil.com/"}, 403},
		{"Referer only, same host other port", map[string]string{"Referer": "http://127.0.0.1:1/runs"}, 403},
		{"Referer only, localhost for 127.0.0.1", map[string]string{"Referer": "http://localhost:" + u.Port() + "/"}, 403},
		{"Referer only, not a URL", map[string]string{"Referer": "::nonsense"}, 403},
		{"Origin and Sec-Fetch-Site cross-site", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"Origin only, cross-site", map[string]string{"Origin": "http://evil.example"}, 403},
		{"Origin null", map[string]string{"Origin": "null"}, 403},
		{"Origin cross-site, Sec-Fetch-Site claims same-origin", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"}, 403},
		{"Origin cross-site, Referer same-origin", map[string]string{"Origin": "http://evil.example", "Referer": own + "/"}, 403},
		{"Sec-Fetch-Site cross-site only", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"Sec-Fetch-Site same-site (another local port)", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:3000"}, 403},
		{"Sec-Fetch-Site cross-site, same-origin Referer", map[string]string{"Sec-Fetch-Site": "cross-site", "Referer": own + "/runs"}, 403},
		{"no headers (curl, scripts)", nil, 303},
		{"own Origin", map[string]string{"Origin": own}, 303},
		{"own Origin, Sec-Fetch-Site same-origin", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin"}, 303},
		{"own Origin, cross-site Referer", map[string]string{"Origin": own, "Referer": "http://evil.com/"}, 303},
		{"Referer only, same-origin", map[string]string{"Referer": own + "/runs/x"}, 303},
		{"Sec-Fetch-Site none (typed by the user)", map[string]string{"Sec-Fetch-Site": "none"}, 303},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := e.submit(map[string]any{"items": 1})
			if got := post("/runs/"+id+"/cancel", c.hdr, nil); got != c.want {
				t.Fatalf("POST cancel: status %d, want %d", got, c.want)
			}
			want := engine.StatusQueued
			if c.want == 303 {
				want = engine.StatusCanceled
			}
			if r, _ := e.eng.Get(t.Context(), id); r.Status != want {
				t.Fatalf("run is %s, want %s", r.Status, want)
			}
		})
	}
	// Starting a run is guarded the same way: no run is created.
	before, err := e.eng.List(t.Context(), engine.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"templateId": {"dev_echo"}, "inputs": {`{"items":1}`}}
	if got := post("/runs", map[string]string{"Referer": "http://evil.com/"}, form); got != 403 {
		t.Fatalf("POST /runs with a cross-site Referer: status %d, want 403", got)
	}
	if after, _ := e.eng.List(t.Context(), engine.ListQuery{Limit: 100}); after.Total != before.Total {
		t.Fatalf("runs: %d before, %d after a refused start", before.Total, after.Total)
	}
	if got := post("/runs", map[string]string{"Referer": own + "/runs/new", "Origin": own}, form); got != 303 {
		t.Fatalf("POST /runs from the dashboard's own page: status %d, want 303", got)
	}
}

// TestDashboardHostCheck: host names are case-insensitive, and the check is
// the one /mcp uses (httpguard.HostAllowed; mcp's TestHTTPHostCheck has the
// same table).
func TestDashboardHostCheck(t *testing.T) {
	e := newEnv(t, "", false)
	for host, want := range map[string]int{
		"LOCALHOST":           200,
		"Localhost:7788":      200,
		"127.0.0.1":           200,
		"[::1]":               200,
		"[::1]:7788":          200,
		"evil.example":        403,
		"localhost.evil.test": 403,
	} {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET / with Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

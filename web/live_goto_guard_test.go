package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAddressBarRefusals: the address bar's route refuses another origin
// (403), names field url for an empty address (400 page; htmx gets the
// reason beside the bar with 200 so it shows), and refuses a run this
// process does not run.
func TestAddressBarRefusals(t *testing.T) {
	e := newEnv(t, "", false)
	id := e.submit(map[string]any{})
	post := func(addr string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/runs/"+id+"/live/tab1/goto", strings.NewReader(url.Values{"url": {addr}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st, _ := post("http://127.0.0.1:9/", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); st != http.StatusForbidden {
		t.Errorf("cross-origin goto: %d, want 403", st)
	}
	if st, body := post("  ", nil); st != http.StatusBadRequest || !strings.Contains(body, "url: the address is empty") {
		t.Errorf("empty address: %d, want 400 naming url; body has it: %v", st, strings.Contains(body, "url:"))
	}
	if st, body := post("", map[string]string{"HX-Request": "true"}); st != http.StatusOK ||
		!strings.Contains(body, `class="alert bad live-goto-refused"`) || !strings.Contains(body, "url: the address is empty") {
		t.Errorf("empty address over htmx: %d %q, want 200 and the reason", st, body)
	}
	if st, body := post("http://127.0.0.1:9/", nil); st != http.StatusBadRequest || !strings.Contains(body, "does not run in this process") {
		t.Errorf("a run not here: %d, want 400 saying so", st)
	}
}

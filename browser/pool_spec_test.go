package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseBrowserList(t *testing.T) {
	ok := []struct {
		in   []string
		want []Endpoint
	}{
		{nil, nil},
		{[]string{"/usr/bin/chromium"}, []Endpoint{{Spec: "/usr/bin/chromium"}}},
		{[]string{"http://a:9222", "capacity=4", "ws://b:9222/devtools/browser/x", "CAPACITY=2", "http://c:9222"},
			[]Endpoint{{"http://a:9222", 4}, {"ws://b:9222/devtools/browser/x", 2}, {"http://c:9222", 0}}},
		// A URL's own query or fragment is the URL's, not a capacity.
		{[]string{"http://a:9222/?capacity=4#capacity=3"}, []Endpoint{{"http://a:9222/?capacity=4#capacity=3", 0}}},
		{[]string{"http://a:9222", "capacity=10000"}, []Endpoint{{"http://a:9222", 10000}}},
	}
	for _, c := range ok {
		got, err := ParseBrowserList(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseBrowserList(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	bad := []struct {
		in   []string
		want string
	}{
		{[]string{"capacity=4", "http://a:9222"}, "must follow the endpoint"},
		{[]string{"http://a:9222", "capacity=0"}, "from 1 to 10000"},
		{[]string{"http://a:9222", "capacity=-1"}, "from 1 to 10000"},
		{[]string{"http://a:9222", "capacity=four"}, "whole number"},
		{[]string{"http://a:9222", "capacity=10001"}, "from 1 to 10000"},
		{[]string{"http://a:9222", "capacity="}, "whole number"},
		{[]string{"http://a:9222", "capacity=2", "capacity=3"}, "already has capacity=2"},
	}
	for _, c := range bad {
		_, err := ParseBrowserList(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseBrowserList(%q) error = %v, want one saying %q", c.in, err, c.want)
		}
	}
}

// FuzzParseBrowserList: any list either parses into endpoints that hold
// every non-capacity item in order with capacities in range, or is refused.
func FuzzParseBrowserList(f *testing.F) {
	f.Add("http://a:9222,capacity=4,ws://b/devtools/browser/x")
	f.Add("capacity=1")
	f.Add("/usr/bin/chromium,capacity=99999")
	f.Fuzz(func(t *testing.T, list string) {
		items := strings.Split(list, ",")
		eps, err := ParseBrowserList(items)
		if err != nil {
			return
		}
		var specs []string
		for _, it := range items {
			if _, isCap := cutPrefixFold(it, capacityPrefix); !isCap {
				specs = append(specs, it)
			}
		}
		if len(eps) != len(specs) {
			t.Fatalf("%q: %d endpoints for %d items", list, len(eps), len(specs))
		}
		for i, ep := range eps {
			if ep.Spec != specs[i] || ep.Capacity < 0 || ep.Capacity > maxCapacity {
				t.Fatalf("%q: endpoint %d = %+v", list, i, ep)
			}
		}
	})
}

func TestResolveEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json/version":
			_, _ = w.Write([]byte(`{"Browser":"Chrome/1","webSocketDebuggerUrl":"ws://10.9.9.9:1234/devtools/browser/abc"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	got, err := resolveEndpoint(ctx, srv.Client(), srv.URL+"/some/path?q=1")
	host := strings.TrimPrefix(srv.URL, "http://")
	if want := "ws://" + host + "/devtools/browser/abc"; err != nil || got != want {
		t.Fatalf("resolve = %q, %v; want %q (the host as given, the browser's path)", got, err, want)
	}
	// An endpoint that answers no DevTools version is refused with a reason.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"Browser":"x"}`))
	}))
	t.Cleanup(bad.Close)
	if _, err := resolveEndpoint(ctx, bad.Client(), bad.URL); err == nil || !strings.Contains(err.Error(), "webSocketDebuggerUrl") {
		t.Fatalf("resolve of a non-DevTools server: %v, want an error naming webSocketDebuggerUrl", err)
	}
	// One that never answers gives up with its context.
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); slow.Close() })
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := resolveEndpoint(c, slow.Client(), slow.URL); err == nil {
		t.Fatal("resolve of a hanging endpoint with an ended context succeeded")
	}
}

// FuzzWSFromVersion: whatever an endpoint answers, the result is an error
// or a ws/wss URL on the host the endpoint was given as.
func FuzzWSFromVersion(f *testing.F) {
	f.Add([]byte(`{"webSocketDebuggerUrl":"ws://127.0.0.1:9222/devtools/browser/x"}`))
	f.Add([]byte(`{"webSocketDebuggerUrl":"http://x/"}`))
	f.Add([]byte(`[]`))
	base, _ := url.Parse("https://farm.example:443/")
	f.Fuzz(func(t *testing.T, body []byte) {
		ws, err := wsFromVersion(body, base)
		if err != nil {
			return
		}
		u, perr := url.Parse(ws)
		if perr != nil || u.Scheme != "wss" || u.Host != base.Host {
			t.Fatalf("wsFromVersion(%q) = %q", body, ws)
		}
	})
}

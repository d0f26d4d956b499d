package templates

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// politeSite is the fixture host of the politeness tests. It records, per
// path, when each request arrived and what it carried, and how many
// requests were in flight at once:
//
//   - /ra/…: the first request answers 429 with Retry-After: 1, later
//     ones 200;
//   - /reset/…: the first request's connection is closed without an
//     answer (hijacked), later ones 200;
//   - /missing: always 404; /down: always 503; /ra-long: always 429
//     with Retry-After: 120;
//   - /hold/…: held until release is closed (releaseWhen), so a run that
//     may send more requests in parallel does;
//   - anything else: a small page.
type politeSite struct {
	srv *httptest.Server

	mu        sync.Mutex
	hits      map[string][]time.Time
	headers   map[string][]http.Header
	inFlight  int
	maxFlight int
	// release holds the /hold/ requests until it is closed.
	release chan struct{}
}

func newPoliteSite(t *testing.T) *politeSite {
	s := &politeSite{hits: map[string][]time.Time{}, headers: map[string][]http.Header{}, release: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *politeSite) url(path string) string { return s.srv.URL + path }

func (s *politeSite) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/favicon.ico" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	n := len(s.hits[r.URL.Path])
	s.hits[r.URL.Path] = append(s.hits[r.URL.Path], time.Now())
	s.headers[r.URL.Path] = append(s.headers[r.URL.Path], r.Header.Clone())
	s.inFlight++
	s.maxFlight = max(s.maxFlight, s.inFlight)
	release := s.release
	s.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/hold/") {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	switch {
	case strings.HasPrefix(r.URL.Path, "/ra/") && n == 0:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case strings.HasPrefix(r.URL.Path, "/reset/") && n == 0:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	case r.URL.Path == "/ra-long":
		w.Header().Set("Retry-After", "120")
		http.Error(w, "come back in two minutes", http.StatusTooManyRequests)
		return
	case r.URL.Path == "/down":
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	case r.URL.Path == "/missing":
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, fmt.Sprintf(`<html><head><title>%s</title></head><body><h1>%s</h1></body></html>`, r.URL.Path, r.URL.Path))
}

// hitTimes returns when path was requested.
func (s *politeSite) hitTimes(path string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.hits[path]...)
}

// headersOf returns the headers of each request for path.
func (s *politeSite) headersOf(path string) []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers[path]...)
}

// releaseWhen closes release, letting the held requests go, once ready
// reports true for the number in flight (polled every 10 ms, until the
// test ends).
func (s *politeSite) releaseWhen(t *testing.T, ready func(inFlight int) bool) {
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-t.Context().Done():
				return
			case <-tick.C:
			}
			s.mu.Lock()
			n := s.inFlight
			s.mu.Unlock()
			if ready(n) {
				close(s.release)
				return
			}
		}
	}()
}

// maxInFlight is the most requests the site had in flight at once.
func (s *politeSite) maxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxFlight
}

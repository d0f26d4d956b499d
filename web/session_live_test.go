package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/web"
)

// elsewhereLive is a browser that holds no session: every session lives
// in another process. Only SessionLiveKey is ever called on it here.
type elsewhereLive struct{ web.Live }

func (elsewhereLive) SessionLiveKey(id string) (string, bool) { return "session:" + id, false }

// sessionLiveEnv is a dashboard with a token over a real engine and
// SQLite file, whose browser holds none of the sessions.
type sessionLiveEnv struct {
	t     *testing.T
	store *db.DB
	eng   *engine.Engine
	srv   *httptest.Server
	token string
}

func newSessionLiveEnv(t *testing.T, live web.Live) *sessionLiveEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bt.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := engine.New(engine.Options{Store: store, Config: engine.DefaultConfig(), Logger: log, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e := &sessionLiveEnv{t: t, store: store, eng: eng, token: "tok-session-live"}
	e.srv = httptest.NewServer(web.New(web.Options{Engine: eng, Live: live, Token: e.token, DBPath: path, Version: "test", Logger: log}))
	t.Cleanup(func() { e.srv.Close(); store.Close() })
	return e
}

// get GETs path with the token (unless token is false) and headers; it
// answers the status and the whole body.
func (e *sessionLiveEnv) get(path string, token bool, headers map[string]string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), "GET", e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if token {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// session stores an open session of another process with one recorded
// call.
func (e *sessionLiveEnv) session(id string) {
	e.t.Helper()
	now := time.Now().UnixMilli()
	if err := e.store.PutSession(e.t.Context(), engine.Session{ID: id, OwnerID: "owner-elsewhere", CreatedAt: now, LastUsedAt: now, ExpiresAt: now + 3_600_000}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.eng.RecordSessionEvent(e.t.Context(), engine.SessionEvent{SessionID: id, Tool: "browser_navigate", Target: "http://127.0.0.1/", Outcome: "ok"}); err != nil {
		e.t.Fatal(err)
	}
}

// TestSessionLiveStreamGuard: a session's frame stream is held to the run
// live view's guard: another origin gets 403 (with the token), no token
// 401; past the guard a session that never was is 404, as its page is.
func TestSessionLiveStreamGuard(t *testing.T) {
	e := newSessionLiveEnv(t, elsewhereLive{})
	e.session("sess_guarded")
	stream := "/sessions/sess_guarded/live/stream"
	for _, h := range []map[string]string{
		{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:3000"},
		{"Referer": "http://evil.example/page"},
		{"Origin": "null"},
	} {
		if st, body := e.get(stream, true, h); st != http.StatusForbidden {
			t.Errorf("cross-origin session stream %v: %d %.200s; want 403", h, st, body)
		}
	}
	if st, _ := e.get(stream, false, nil); st != http.StatusUnauthorized {
		t.Errorf("session stream without the token: %d; want 401", st)
	}
	if st, _ := e.get("/sessions/sess_never/live/stream", true, map[string]string{"Sec-Fetch-Site": "same-origin"}); st != http.StatusNotFound {
		t.Errorf("stream of a session that never was: %d; want 404", st)
	}
}

// TestSessionLiveViewElsewhereAndClosed: an open session held by another
// process says when it expires (its recorded call pushed that to the idle
// TTL, 30 min) and shows, on its page and its stream, where its tabs are shown
// (no stream from here: the stream sends the note and "end" at once); once
// the session is closed its page has no live view and its stream sends
// the closed note and "end", never an error status an EventSource would
// retry.
func TestSessionLiveViewElsewhereAndClosed(t *testing.T) {
	e := newSessionLiveEnv(t, elsewhereLive{})
	e.session("sess_far")
	own := map[string]string{"Sec-Fetch-Site": "same-origin"}
	st, page := e.get("/sessions/sess_far", true, nil)
	if st != http.StatusOK || !strings.Contains(page, `id="live"`) || !strings.Contains(page, "Another browsertask process") || strings.Contains(page, "sse-connect") {
		t.Fatalf("page of a session held elsewhere: %d, live %v, elsewhere note %v, streamed %v", st,
			strings.Contains(page, `id="live"`), strings.Contains(page, "Another browsertask process"), strings.Contains(page, "sse-connect"))
	}
	if !regexp.MustCompile(`open, expires in (30m0s|29m5\ds)`).MatchString(page) {
		t.Errorf("the session's expiry is not shown in minutes: %s", regexp.MustCompile(`open, expires in [^<]*`).FindString(page))
	}
	st, body := e.get("/sessions/sess_far/live/stream", true, own)
	if want := "event: tabs\n"; st != http.StatusOK || !strings.HasPrefix(body, want) || !strings.Contains(body, "Another browsertask process") || !strings.HasSuffix(body, "event: end\ndata: \n\n") {
		t.Errorf("stream of a session held elsewhere: %d %q", st, body)
	}

	if _, err := e.eng.CloseSession(e.t.Context(), "sess_far"); err != nil {
		t.Fatal(err)
	}
	st, page = e.get("/sessions/sess_far", true, nil)
	if st != http.StatusOK || strings.Contains(page, `id="live"`) || !strings.Contains(page, "browser_navigate") {
		t.Errorf("page of the closed session: %d, live section %v; want its calls and no live view", st, strings.Contains(page, `id="live"`))
	}
	st, body = e.get("/sessions/sess_far/live/stream", true, own)
	events := strings.Count(body, "event: ")
	if st != http.StatusOK || events != 2 || !strings.Contains(body, "The session is closed") || strings.Contains(body, "live-tab\"") ||
		!strings.HasSuffix(body, "event: end\ndata: \n\n") {
		t.Errorf("stream of the closed session: %d, %d events: %s", st, events, body)
	}
}

// TestSessionCallsRefreshWhileOpen: an open session's table of calls polls
// its page, which answers htmx with the table alone, new calls included;
// once the session is closed the table no longer polls.
func TestSessionCallsRefreshWhileOpen(t *testing.T) {
	e := newSessionLiveEnv(t, elsewhereLive{})
	e.session("sess_poll")
	htmx := map[string]string{"HX-Request": "true"}
	st, page := e.get("/sessions/sess_poll", true, nil)
	if st != http.StatusOK || !strings.Contains(page, `<html`) || !strings.Contains(page, `hx-get="/sessions/sess_poll"`) || !strings.Contains(page, `hx-trigger="every 2s"`) {
		t.Fatalf("page of an open session: %d, polling %v", st, strings.Contains(page, `hx-trigger="every 2s"`))
	}
	if err := e.eng.RecordSessionEvent(t.Context(), engine.SessionEvent{SessionID: "sess_poll", Tool: "browser_act", Action: "click", Target: "e7", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	st, frag := e.get("/sessions/sess_poll", true, htmx)
	if st != http.StatusOK || strings.Contains(frag, "<html") || !strings.HasPrefix(strings.TrimSpace(frag), `<section id="session-calls"`) ||
		strings.Count(frag, "<tr data-seq=") != 2 || !strings.Contains(frag, "browser_act") || !strings.Contains(frag, `data-live="true"`) {
		t.Fatalf("htmx fragment of an open session: %d, %d calls: %s", st, strings.Count(frag, "<tr data-seq="), frag)
	}
	if _, err := e.eng.CloseSession(t.Context(), "sess_poll"); err != nil {
		t.Fatal(err)
	}
	st, frag = e.get("/sessions/sess_poll", true, htmx)
	if st != http.StatusOK || strings.Contains(frag, "hx-trigger") || !strings.Contains(frag, `data-live="false"`) || strings.Count(frag, "<tr data-seq=") != 2 {
		t.Fatalf("fragment of the closed session: %d, still polling %v: %s", st, strings.Contains(frag, "hx-trigger"), frag)
	}
}

package mcp

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/internal/httpguard"
)

// MaxRequestBodyBytes caps an MCP HTTP request body (4 MiB).
const MaxRequestBodyBytes = 4 << 20

// DefaultSessionTimeout is how long an MCP HTTP session may go unused
// before it is closed when HTTPOptions.SessionTimeout is 0. Clients that
// vanish without a DELETE (most of them) would otherwise keep their
// session, its goroutines and buffers for the life of the daemon. 30 min
// outlasts any pause of a working agent; a client that comes back later
// gets 404 for its session id and, as the MCP spec requires, initializes a
// new one.
const DefaultSessionTimeout = 30 * time.Minute

// sessionIDHeader carries the Streamable HTTP session id.
const sessionIDHeader = "Mcp-Session-Id"

// HTTPOptions configure HTTPHandler.
type HTTPOptions struct {
	// Token, when set, must be presented as "Authorization: Bearer <token>".
	Token string
	// AllowedOrigins are extra browser origins (scheme://host[:port]) allowed
	// besides the daemon's own loopback origins.
	AllowedOrigins []string
	// SessionTimeout closes an MCP session that has had no request in
	// flight for this long: a POST (a long-poll too) or an open GET stream
	// keeps it in use. 0 means DefaultSessionTimeout; a negative value
	// keeps sessions until the client sends DELETE.
	SessionTimeout time.Duration
}

// HTTPHandler returns the Streamable HTTP endpoint (mount it at /mcp).
// In front of everything, in order: the Host check against DNS rebinding
// (403, httpguard.HostAllowed, shared with the dashboard), the Origin
// allow-list (403), the optional bearer token (401) and a 4 MiB body cap.
// Then versionRouter (http_versions.go) sends requests of MCP 2026-07-28
// and later to the SDK's stateless handler, and older ones through the
// Tasks shim lifting params.task (task_shim.go) and the idle-session
// reaper to its stateful handler: sessions (Mcp-Session-Id), POST, GET
// (SSE) and DELETE.
//
// Two SDK features are replaced by ours on purpose: its Host check compares
// "localhost" case-sensitively (Host: LOCALHOST got 403 here while the
// dashboard accepted it), and its SessionTimeout only counts POSTs in
// flight, so it would close a session whose client is holding its GET
// stream open to receive notifications.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	h, _ := s.httpHandler(opts)
	return h
}

// httpHandler is HTTPHandler, also returning its idle-session reaper (nil
// when sessions never expire) for tests.
func (s *Server) httpHandler(opts HTTPOptions) (http.Handler, *idleSessions) {
	var reaper *idleSessions
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Logger:                     s.log,
		MaxRequestBodyBytes:        MaxRequestBodyBytes,
		DisableLocalhostProtection: true, // httpguard.HostAllowed ran first
	})
	if timeout := opts.SessionTimeout; timeout >= 0 {
		if timeout == 0 {
			timeout = DefaultSessionTimeout
		}
		reaper = newIdleSessions(timeout, s.liveHTTPSession, s.closeHTTPSession, s.log)
		h = reaper.wrap(h)
	}
	modern := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Stateless: true,
		// In 2026-07-28 the POST is the whole request: a client that
		// gives up closes it, and a sync run_task_template cancels its run
		// as it does on notifications/cancelled before.
		PropagateRequestCancellation: true,
		Logger:                       s.log,
		MaxRequestBodyBytes:          MaxRequestBodyBytes,
		DisableLocalhostProtection:   true,
	})
	return s.guarded(opts, versionRouter{legacy: liftTaskHTTP(h), modern: modern}), reaper
}

// SSEHandler serves the deprecated HTTP+SSE transport of MCP 2024-11-05
// (GET opens the event stream, whose first event names the URL to POST
// messages to) for clients that speak nothing newer. It is the same server
// behind the same guards as HTTPHandler: Host, Origin, bearer token, body
// cap. A session lives as long as its GET stream.
func (s *Server) SSEHandler(opts HTTPOptions) http.Handler {
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.SSEOptions{
		MaxRequestBodyBytes:        MaxRequestBodyBytes,
		DisableLocalhostProtection: true, // httpguard.HostAllowed runs first
	})
	return s.guarded(opts, h)
}

// guarded puts the checks every MCP HTTP endpoint shares in front of h:
// the Host and Origin guard, then the bearer token when one is set, then
// the request body cap.
func (s *Server) guarded(opts HTTPOptions, h http.Handler) http.Handler {
	var next http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBodyBytes)
		}
		h.ServeHTTP(w, r)
	})
	if opts.Token != "" {
		next = bearerAuth(opts.Token, next)
	}
	return newOriginGuard(opts.AllowedOrigins, s.log).wrap(next)
}

// liveHTTPSession reports whether the SDK holds an initialized session id
// (one that failed to initialize is closed by the SDK at once).
func (s *Server) liveHTTPSession(id string) bool {
	for ss := range s.sdk.Sessions() {
		if ss.ID() == id {
			return ss.InitializeParams() != nil
		}
	}
	return false
}

// closeHTTPSession closes session id: the requests still bound to it (a
// task watcher) end first, as on stdio, then the SDK session with its
// goroutines. It reports whether the session was still open.
func (s *Server) closeHTTPSession(id string) bool {
	for ss := range s.sdk.Sessions() {
		if ss.ID() != id {
			continue
		}
		if s.tasks != nil {
			s.tasks.sessions.end(ss)
		}
		_ = ss.Close()
		return true
	}
	return false
}

// idleSessions closes Streamable HTTP sessions that have had no request in
// flight for timeout. Every request naming a session counts from its start
// to its end, so a long-poll (a sync tools/call, tasks/result) or an open
// GET stream keeps its session however long it lasts; the clock starts
// when the last of them ends.
type idleSessions struct {
	timeout time.Duration
	live    func(id string) bool // the SDK holds the initialized session
	close   func(id string) bool // close it; false when it was gone already
	log     *slog.Logger

	mu sync.Mutex
	m  map[string]*idleSession // by session id
}

// idleSession is the use of one session.
type idleSession struct {
	refs      int         // its requests in flight
	idleSince time.Time   // when refs last fell to 0
	timer     *time.Timer // runs expire; nil until first idle
	// closing is set while expire closes the session: a request naming it
	// then is answered 404 at once, as after the close, instead of
	// reaching a session that is half torn down (the SDK forgets a session
	// in two steps, and a request between them got an empty 200).
	closing bool
}

// newIdleSessions builds a reaper closing sessions idle for timeout.
func newIdleSessions(timeout time.Duration, live, close func(string) bool, log *slog.Logger) *idleSessions {
	return &idleSessions{timeout: timeout, live: live, close: close, log: log, m: map[string]*idleSession{}}
}

// wrap counts the requests of every session around next (the SDK handler).
// An entry is dropped as soon as its session is known to be gone (404
// for an unknown id, a DELETE that succeeded), so ids a client makes up
// cost nothing after their request.
func (t *idleSessions) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		if id == "" {
			next.ServeHTTP(w, r)
			// The request may have created a session (initialize).
			if id = w.Header().Get(sessionIDHeader); id != "" && t.live(id) {
				t.touch(id)
			}
			return
		}
		if !t.begin(id) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		gone := rec.status == http.StatusNotFound || (r.Method == http.MethodDelete && rec.status/100 == 2)
		t.end(id, gone)
	})
}

// entryLocked returns session id's entry, creating it on first use.
func (t *idleSessions) entryLocked(id string) *idleSession {
	e := t.m[id]
	if e == nil {
		e = &idleSession{}
		t.m[id] = e
	}
	return e
}

// begin records a request of session id starting: the idle clock stops.
// It returns false when the session is being closed for idleness.
func (t *idleSessions) begin(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(id)
	if e.closing {
		return false
	}
	e.refs++
	if e.timer != nil {
		e.timer.Stop()
	}
	return true
}

// end records a request of session id ending; when it was the last one
// the idle clock starts, unless the session is gone.
func (t *idleSessions) end(id string, gone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[id]
	if e == nil {
		return
	}
	if e.refs--; e.refs > 0 {
		return
	}
	if gone {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(t.m, id)
		return
	}
	t.armLocked(id, e)
}

// touch starts the idle clock of a new session, unless a request of it
// is already in flight.
func (t *idleSessions) touch(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(id)
	if e.refs == 0 {
		t.armLocked(id, e)
	}
}

// armLocked starts e's idle clock now.
func (t *idleSessions) armLocked(id string, e *idleSession) {
	e.idleSince = time.Now()
	if e.timer == nil {
		e.timer = time.AfterFunc(t.timeout, func() { t.expire(id, e) })
		return
	}
	e.timer.Reset(t.timeout)
}

// expire closes session id if it is still idle: a timer that fired just
// as a request began (or was re-armed) finds it in use or idle for less
// than timeout and does nothing.
func (t *idleSessions) expire(id string, e *idleSession) {
	t.mu.Lock()
	if t.m[id] != e || e.refs > 0 || e.closing || time.Since(e.idleSince) < t.timeout {
		t.mu.Unlock()
		return
	}
	// Requests that arrive from here on get 404 (begin); the entry goes
	// once the SDK has forgotten the session entirely.
	e.closing = true
	t.mu.Unlock()
	closed := t.close(id)
	t.mu.Lock()
	if t.m[id] == e {
		delete(t.m, id)
	}
	t.mu.Unlock()
	if closed {
		t.log.Info("closed idle MCP HTTP session", "session", id, "idle", t.timeout.String())
	}
}

// tracked returns the number of sessions being watched (tests).
func (t *idleSessions) tracked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// statusRecorder remembers the status of a response. It keeps Flush (the
// SSE stream needs it) and unwraps for http.ResponseController.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader implements http.ResponseWriter.
func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (s *statusRecorder) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// bearerAuth requires "Authorization: Bearer <token>", compared in constant
// time (httpguard.TokenEqual); else 401.
func bearerAuth(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := httpguard.BearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsertask"`)
			http.Error(w, "Unauthorized: missing bearer token", http.StatusUnauthorized)
			return
		}
		if !httpguard.TokenEqual(got, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsertask", error="invalid_token"`)
			http.Error(w, "Unauthorized: invalid bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

package browser

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// resetTimeout bounds resetting a released tab to about:blank and stopping
// a cancelled load: short, so cancellation finishes well within 2 s.
const resetTimeout = time.Second

// Session is one isolated browser context (own cookies and storage) with a
// pool of reused tabs. Measured here, a reused tab is ~3x faster per URL
// than a fresh one, and a new context per URL is slower still.
type Session struct {
	id  string
	in  *instance
	gen int
	b   *rod.Browser // bound to the session's browser context
	log *slog.Logger
	// policy holds every request of the session's tabs to the URL policy.
	policy *requestPolicy
	// proxy is the proxy URL its browser context was made with ("" for
	// none); creds its credentials, answered by answerAuth.
	proxy string
	creds *proxyCreds

	slots chan struct{} // one token per open tab, cap = max tabs
	// front is held (cap 1) by the tab being brought to the front of the
	// session's window, and captured: only a window's front tab renders,
	// and a screenshot of a tab that does not render never answers.
	front chan struct{}

	mu     sync.Mutex
	idle   []*tab
	tabs   map[proto.TargetTargetID]*tab
	closed bool
	// spread holds the session's browser contexts on other endpoints of
	// the pool once Spread was called (nil: the session stays on in).
	spread *spreadParts
	// origins are the http(s) origins whose documents the session loaded
	// (for ExportState's localStorage).
	origins map[string]bool
	// shared marks a session in the browser's default context (a
	// persistent profile's browser, or a person's Chrome with
	// --browser-context default): closing it closes the tabs it opened,
	// never the context nor anybody else's tabs.
	shared bool
	// onClose runs once after a shared session closed (a profile's
	// reference count); nil = nothing.
	onClose func()
}

// newSharedSession is a session in b's default browser context.
func newSharedSession(id string, in *instance, b *rod.Browser, gen, maxTabs int, pol *requestPolicy, log *slog.Logger, onClose func()) *Session {
	if onClose != nil {
		onClose = sync.OnceFunc(onClose)
	}
	return &Session{
		id: id, in: in, gen: gen, b: b, log: log, policy: pol, shared: true, onClose: onClose,
		slots: make(chan struct{}, maxTabs), front: make(chan struct{}, 1),
		tabs: map[proto.TargetTargetID]*tab{},
	}
}

// closeOwnTabs closes the tabs the session opened (a shared session's
// close): the context and the tabs it did not open stay.
func (s *Session) closeOwnTabs(ctx context.Context) {
	s.mu.Lock()
	ids := make([]proto.TargetTargetID, 0, len(s.tabs))
	for id := range s.tabs {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, id := range ids {
		_, _ = proto.TargetCloseTarget{TargetID: id}.Call(s.b.Context(c))
	}
}

// newSession creates the browser context. Errors: EXECUTION_ERROR.
// With a proxy ("scheme://[user:password@]host:port") every request of
// the context goes through it, loopback included; its credentials are
// answered to its challenges (answerAuth).
func newSession(ctx context.Context, id string, in *instance, b *rod.Browser, gen, maxTabs int, pol *requestPolicy, log *slog.Logger, proxy string) (*Session, error) {
	create := proto.TargetCreateBrowserContext{DisposeOnDetach: true}
	var creds *proxyCreds
	if proxy != "" {
		create.ProxyServer, creds = splitProxy(proxy)
		create.ProxyBypassList = "<-loopback>"
	}
	res, err := create.Call(b.Context(ctx))
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "cannot create a browser context for session %s: %v", id, err)
	}
	sb := *b
	sb.BrowserContextID = res.BrowserContextID
	return &Session{
		id: id, in: in, gen: gen, b: &sb, log: log, policy: pol, proxy: proxy, creds: creds,
		slots: make(chan struct{}, maxTabs), front: make(chan struct{}, 1),
		tabs: map[proto.TargetTargetID]*tab{},
	}, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Browser returns the rod browser bound to the session's browser context
// (for cookies and storage state).
func (s *Session) Browser() *rod.Browser { return s.b }

// MaxTabs is the session's tab cap; a run's concurrency must not exceed it.
func (s *Session) MaxTabs() int { return cap(s.slots) }

// goneErr is the error for a session that can no longer be used.
func (s *Session) goneErr() error {
	if !s.in.alive(s.gen) {
		return engine.Errorf(engine.ExecutionError, "the browser of session %s exited", s.id)
	}
	return engine.Errorf(engine.SessionNotFound, "session %s was closed", s.id).
		WithDetails(map[string]any{"sessionId": s.id})
}

// markClosed stops the pool from handing out or keeping tabs.
func (s *Session) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.idle = nil
	s.mu.Unlock()
}

// close disposes the browser context, which closes all its tabs.
func (s *Session) close(ctx context.Context) error {
	s.markClosed()
	s.closeParts(ctx)
	if s.shared {
		if s.in.alive(s.gen) {
			s.closeOwnTabs(ctx)
		}
		if s.onClose != nil {
			s.onClose()
		}
		return nil
	}
	if !s.in.alive(s.gen) {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := proto.TargetDisposeBrowserContext{BrowserContextID: s.b.BrowserContextID}.Call(s.b.Context(c))
	if err != nil && s.in.alive(s.gen) {
		return engine.Wrap(engine.ExecutionError, err, "close session %s: %v", s.id, err)
	}
	return nil
}

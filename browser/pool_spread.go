package browser

import (
	"context"
	"sync"
)

// spreadParts are the browser contexts of a spread session, one per
// endpoint it has had tabs on (the session itself is the part on its own
// endpoint).
type spreadParts struct {
	mu    sync.Mutex
	parts map[*instance]*Session
}

// Spread lets the session's tabs go to every endpoint of the pool (several
// --browser values), each tab to the endpoint with the most free capacity,
// so one run of many pages uses every browser; a tab whose browser stops
// answering can then be replaced by one on another endpoint (FailOver).
// Each endpoint gets its own browser context for the session, so cookies
// and storage are not shared between the session's tabs on different
// browsers: only the URL-list templates (independent pages) spread, and a
// named session (create_browser_session, whose cookies are its point)
// never does, nor a shared one (a profile's browser, or the default
// context of --browser-context default). With one endpoint it does
// nothing.
func (s *Session) Spread() {
	m := s.policy.m
	if len(m.instances) < 2 || m.Named(s.id) || s.shared {
		// A shared session (a profile's browser, the person's own
		// context) lives in one browser too.
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spread == nil {
		s.spread = &spreadParts{parts: map[*instance]*Session{s.in: s}}
	}
}

// spreadSet returns the session's parts, nil when it is not spread.
func (s *Session) spreadSet() *spreadParts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spread
}

// placeTab reserves capacity for one more tab and returns the session (the
// part, when spread) the tab is opened in. An endpoint that cannot be
// reached is taken out of the pool and another one tried. Errors: as
// Manager.reserve, or the failure to open a browser context.
func (s *Session) placeTab(ctx context.Context) (*Session, error) {
	m := s.policy.m
	sp := s.spreadSet()
	if sp == nil {
		if _, err := m.reserve(ctx, s.in); err != nil {
			return nil, err
		}
		return s, nil
	}
	for {
		in, err := m.reserve(ctx, nil)
		if err != nil {
			return nil, err
		}
		part, err := sp.part(ctx, s, in)
		if err == nil {
			return part, nil
		}
		m.unreserve(in)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if !in.remote {
			return nil, err
		}
		m.markDown(in, err)
	}
}

// part returns the session's browser context on endpoint in, creating it
// (and connecting to the browser) on first use or after the browser came
// back from being down.
func (sp *spreadParts) part(ctx context.Context, s *Session, in *instance) (*Session, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if p := sp.parts[in]; p != nil && in.alive(p.gen) {
		return p, nil
	}
	b, gen, err := in.browser(ctx)
	if err != nil {
		return nil, err
	}
	p, err := newSession(ctx, s.id, in, b, gen, cap(s.slots), s.policy, s.log, s.proxy)
	if err != nil {
		return nil, err
	}
	sp.parts[in] = p
	return p, nil
}

// usable reports whether the session can still get tabs: its own browser
// is alive or, spread, one of its parts' is (a part on a dead endpoint is
// replaced when that endpoint comes back; a spread session whose first
// browser died goes on on the others).
func (s *Session) usable() bool {
	if s.in.alive(s.gen) {
		return true
	}
	sp := s.spreadSet()
	if sp == nil {
		return false
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for in, p := range sp.parts {
		if in.alive(p.gen) {
			return true
		}
	}
	return false
}

// closeParts closes the parts of a spread session other than s itself.
func (s *Session) closeParts(ctx context.Context) {
	sp := s.spreadSet()
	if sp == nil {
		return
	}
	sp.mu.Lock()
	parts := make([]*Session, 0, len(sp.parts))
	for _, p := range sp.parts {
		if p != s {
			parts = append(parts, p)
		}
	}
	sp.mu.Unlock()
	for _, p := range parts {
		_ = p.close(ctx)
	}
}

// FailOver reports whether the page that just failed in tb should be done
// again in another tab because tb's browser stopped answering: the
// session is spread, tb's endpoint is down (its connection closed, or it
// does not answer a ping now, and it is then taken out of the pool), and
// another endpoint is up — or none is, and the pool waits out the outage
// (Options.OutageWait) while the down endpoints are tried again. The
// caller releases tb (not reusable) and takes a new tab, which goes to an
// endpoint up (waiting for one, in an outage). The page's work in tb was
// cut off, so nothing of it was checkpointed: doing it again does it once.
func (s *Session) FailOver(tb *Tab) bool {
	if tb == nil || s.spreadSet() == nil {
		return false
	}
	m := s.policy.m
	in := tb.s.in
	if !m.isDown(in) {
		if in.answers(tb.s.gen) {
			return false
		}
		m.markDown(in, errStoppedAnswering)
	}
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	return len(m.upLocked()) > 0 || (m.opts.OutageWait >= 0 && m.retryingLocked())
}

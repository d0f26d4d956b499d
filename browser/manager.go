// Package browser drives Chromium through go-rod for the engine's templates:
// it launches (or connects to) browsers lazily, keeps one incognito browser
// context per session, and a pool of reused tabs inside each session.
//
// No browser outlives the process: a launched Chromium runs in its own
// process group with a parent-death signal (Linux), and Close kills the group
// and removes its temporary profile.
package browser

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browsertask/browsertask/browser/egress"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// DefaultContext is Options.BrowserContext's value for the browser's own
// (default) context.
const DefaultContext = "default"

// DefaultMaxTabsPerSession caps the tabs of one session when Options leaves
// MaxTabsPerSession at zero (the contract's maxTabsPerSession default).
const DefaultMaxTabsPerSession = 20

// Options configure a Manager.
type Options struct {
	// Browser lists browser binaries to launch or CDP endpoints (ws://… or
	// an http:// URL answering /json/version) to connect to, each optionally
	// followed by a "capacity=N" item capping its open tabs (see
	// ParseBrowserList). Several values form a pool: sessions go to the
	// endpoint with the most free capacity, and spread sessions (Spread)
	// put each tab there. Empty means: look up a system Chrome/Chromium.
	Browser []string
	// Headed shows the browser window instead of running headless.
	Headed bool
	// Logger receives browser logs (nil = discard).
	Logger *slog.Logger
	// TempDir holds the temporary profiles (empty = os.TempDir()).
	TempDir string
	// MaxTabsPerSession caps the open tabs of a session (0 = 20).
	MaxTabsPerSession int
	// DenyHosts are host:port pairs no run may navigate to (the daemon's
	// own listener); templates add them to their URL policy. More can be
	// added once the listener is bound, with DenyHost.
	DenyHosts []string
	// TrustLevel is "local" (default) or "restricted": restricted refuses
	// every request to a loopback, private or link-local address, checked
	// in the browser on each request, redirects and sub-frames included,
	// and sends every connection of a launched browser through the egress
	// proxy (package egress), which checks the address it connects to
	// (WebSockets and DNS races included). A remote browser (a ws://
	// endpoint in Browser) cannot be given the proxy: there only the
	// per-request check applies.
	TrustLevel string
	// AllowFileURLs lets pages load file: URLs (trust local only).
	AllowFileURLs bool
	// Resolve replaces the system resolver in the restricted-trust checks
	// (submission, per request, and the egress proxy's lookups; tests map
	// a name to a "public" address); nil = the system resolver.
	Resolve func(host string) ([]netip.Addr, error)
	// Dial replaces how the egress proxy connects to an address that
	// passed the check ("ip:port"); nil = a plain TCP dial. Tests use it
	// to connect "public" TEST-NET addresses to loopback fixture servers
	// (see fixture.PublicNet).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ExtraArgs are appended to the command line of launched browsers.
	ExtraArgs []string
	// BrowserContext is "" (each session its own incognito context, the
	// default) or "default": sessions open their tabs in the browser's
	// default context — the person's own Chrome, signed in, attached with
	// --browser http://127.0.0.1:9222 — and closing a session closes only
	// the tabs it opened, never the person's.
	BrowserContext string
	// CDPTrace, when set, is called with the method of every CDP command
	// sent to a browser (tests count them); nil = no tracing.
	CDPTrace func(method string)
	// OutageWait is how long a run's next tab waits for a browser of the
	// pool to answer again when every remote endpoint is down (a browser
	// farm restarting, a network blip), before the run fails with what it
	// kept: 0 = DefaultOutageWait, negative = fail at once.
	OutageWait time.Duration
}

// DefaultOutageWait is Options.OutageWait's default: long enough for a
// browser container or a machine's Chrome to be restarted.
const DefaultOutageWait = time.Minute

// Manager owns the browsers and the sessions of this process. It is safe
// for concurrent use.
type Manager struct {
	opts      Options
	log       *slog.Logger
	instances []*instance
	// pool tracks the endpoints' capacity and health (pool.go).
	pool   *poolState
	policy *requestPolicy
	// live files the tabs of runs for their live views (live.go).
	live *liveRegistry
	// egress is the forward proxy of launched browsers under trust
	// restricted, started with the first launch (nil until then).
	egress *egress.Proxy
	// policyGen counts deny-list changes; a tab set up under an older
	// generation updates its interception before it is handed out.
	policyGen atomic.Int64

	mu       sync.Mutex
	deny     []string
	sessions map[string]*Session
	lost     map[string]bool // sessions whose browser died
	// ended remembers recently closed session ids (with when), so a run
	// queued for a session closed meanwhile gets SESSION_NOT_FOUND instead
	// of a fresh empty context.
	ended map[string]time.Time
	// named are the sessions opened with OpenSession (create_browser_session),
	// as opposed to the throwaway sessions runs own.
	named  map[string]bool
	closed bool
	// leaser takes profile leases (SetProfiles); profiles are this
	// process's profile browsers by name and profileOf the profile of
	// each profile session (profile.go).
	leaser    ProfileLeaser
	profiles  map[string]*profileBrowser
	profileOf map[string]string
}

var (
	_ engine.SessionCloser    = (*Manager)(nil)
	_ engine.BrowserDescriber = (*Manager)(nil)
)

// NewManager builds a Manager. Nothing is launched until a session is first
// used; profile directories left behind by dead processes are swept now.
func NewManager(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.MaxTabsPerSession <= 0 {
		o.MaxTabsPerSession = DefaultMaxTabsPerSession
	}
	m := &Manager{opts: o, log: o.Logger, sessions: map[string]*Session{}, lost: map[string]bool{},
		ended: map[string]time.Time{}, named: map[string]bool{}, deny: append([]string(nil), o.DenyHosts...),
		live: newLiveRegistry(), profiles: map[string]*profileBrowser{}, profileOf: map[string]string{}}
	m.policy = &requestPolicy{m: m, dns: engine.NewHostCache(dnsCacheTTL), own: netpolicy.NewOwnAddrs(ownAddrsTTL)}
	pctx, pcancel := context.WithCancel(context.Background())
	m.pool = &poolState{ctx: pctx, cancel: pcancel, changed: make(chan struct{})}
	for _, ep := range endpoints(o.Browser, o.Logger) {
		s := ep.Spec
		in := &instance{
			spec: s, remote: isRemoteSpec(s), headed: o.Headed, tempDir: o.TempDir, log: o.Logger,
			extraArgs: o.ExtraArgs, trace: o.CDPTrace, ep: endpointState{capacity: ep.Capacity},
		}
		in.onLost = func(gen int) { m.connLost(in, gen) }
		if restricted(o.TrustLevel) {
			if in.remote {
				o.Logger.Warn("trust restricted with a remote browser: its requests are checked by the Fetch domain only "+
					"(no egress proxy: WebSockets and DNS races are not covered)", "browser", s)
			} else {
				in.policyArgs = m.egressArgs
			}
		}
		m.instances = append(m.instances, in)
	}
	sweepProfiles(o.TempDir, o.Logger)
	return m
}

// DenyHost adds a host:port that no run may navigate to (call it with the
// daemon's listener address once it is bound).
func (m *Manager) DenyHost(hostport string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deny = append(m.deny, hostport)
	m.policyGen.Add(1) // pooled tabs re-apply their interception patterns
}

// DenyHosts returns the host:port pairs no run may navigate to.
func (m *Manager) DenyHosts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.deny...)
}

// Session returns the session's browser context, creating it (and launching
// the browser) on first use. Errors: SESSION_NOT_FOUND when the session's
// browser died or the session was closed by CloseSession while in use;
// EXECUTION_ERROR when no browser can be started or the Manager is closed.
func (m *Manager) Session(ctx context.Context, sessionID string) (*Session, error) {
	return m.session(ctx, sessionID, "")
}

// SessionWithProxy is Session for a run that names a proxy (inputs.proxy):
// its browser context is created with that proxy server
// (Target.createBrowserContext proxyServer, "scheme://host:port"),
// loopback included (bypass list "<-loopback>"), so every request of its
// tabs goes through it; user:password@ in proxy is answered to the
// proxy's challenges (Fetch.authRequired) from the tab itself — frames in
// another process (out-of-process iframes) get no answer and fail. A session that already exists with
// another proxy (or none) is not changed: Errors: INVALID_PARAMETER then,
// else as Session.
func (m *Manager) SessionWithProxy(ctx context.Context, sessionID, proxy string) (*Session, error) {
	return m.session(ctx, sessionID, proxy)
}

// session is Session with the context's proxy ("" for none).
func (m *Manager) session(ctx context.Context, sessionID, proxy string) (*Session, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, engine.Errorf(engine.ExecutionError, "the browser manager is shut down")
	}
	if s, ok := m.sessions[sessionID]; ok {
		if s.usable() {
			m.mu.Unlock()
			if s.proxy != proxy {
				return nil, engine.Errorf(engine.InvalidParameter, "inputs.proxy: session %s already exists with another proxy setting; a session's proxy is fixed when it is created", sessionID).
					WithDetails(map[string]any{"field": "inputs.proxy", "sessionId": sessionID})
			}
			return s, nil
		}
		delete(m.sessions, sessionID)
		m.lost[sessionID] = true
	}
	if _, ended := m.ended[sessionID]; ended {
		m.mu.Unlock()
		return nil, engine.Errorf(engine.SessionNotFound, "session %s was closed", sessionID).
			WithDetails(map[string]any{"sessionId": sessionID})
	}
	if m.lost[sessionID] {
		m.mu.Unlock()
		return nil, engine.Errorf(engine.SessionNotFound, "session %s is gone: its browser exited", sessionID).
			WithDetails(map[string]any{"sessionId": sessionID})
	}
	in := m.pickForSession()
	m.mu.Unlock()

	b, gen, err := in.browser(ctx)
	// A remote endpoint that cannot be reached is taken out of the pool
	// and the session goes to another one up.
	for tries := 1; err != nil && ctx.Err() == nil && in.remote && tries < len(m.instances); tries++ {
		m.sessionClosed(in)
		m.markDown(in, err)
		if !m.anyUp() {
			m.pool.mu.Lock()
			in.ep.sessions++ // uncounted again below
			m.pool.mu.Unlock()
			break
		}
		in = m.pickForSession()
		b, gen, err = in.browser(ctx)
	}
	if err != nil {
		m.sessionClosed(in)
		if ctx.Err() == nil {
			m.markDown(in, err)
		}
		return nil, engine.Wrap(engine.ExecutionError, err, "cannot start the browser: %v", err)
	}
	var s *Session
	if m.opts.BrowserContext == DefaultContext && proxy == "" {
		// A run that names a proxy still gets a context of its own: the
		// proxy is a property of the browser context.
		s = newSharedSession(sessionID, in, b, gen, m.opts.MaxTabsPerSession, m.policy, m.log, nil)
	} else if s, err = newSession(ctx, sessionID, in, b, gen, m.opts.MaxTabsPerSession, m.policy, m.log, proxy); err != nil {
		m.sessionClosed(in)
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if other, ok := m.sessions[sessionID]; ok || m.closed {
		// Lost a race with a concurrent first use (or with Close).
		m.sessionClosed(in)
		engine.Go(ctx, m.log, "browser.Session.close", func() { _ = s.close(context.Background()) }, nil)
		if ok {
			return other, nil
		}
		return nil, engine.Errorf(engine.ExecutionError, "the browser manager is shut down")
	}
	m.sessions[sessionID] = s
	return s, nil
}

// CloseSession closes the session's tabs and disposes its browser context.
// Closing an unknown or already closed session is not an error (a run that
// never touched the browser owns a session that was never created).
func (m *Manager) CloseSession(ctx context.Context, sessionID string) error {
	m.mu.Lock()
	s := m.sessions[sessionID]
	delete(m.sessions, sessionID)
	delete(m.lost, sessionID)
	delete(m.profileOf, sessionID)
	if m.named[sessionID] {
		delete(m.named, sessionID)
		m.rememberEndedLocked(sessionID)
	}
	m.mu.Unlock()
	m.forgetSession(sessionID) // its live views end with it (live_session.go)
	if s == nil {
		return nil
	}
	m.sessionClosed(s.in)
	return s.close(ctx)
}

// endedMemory is how long a closed session id is remembered.
const endedMemory = time.Hour

// rememberEndedLocked records a closed session id and forgets ids closed
// more than endedMemory ago (amortised: a sweep every 256 closes).
func (m *Manager) rememberEndedLocked(sessionID string) {
	now := time.Now()
	m.ended[sessionID] = now
	if len(m.ended)%256 != 0 {
		return
	}
	for id, at := range m.ended {
		if now.Sub(at) > endedMemory {
			delete(m.ended, id)
		}
	}
}

// Describe reports the browser for the runtime profile without launching
// it: the product once a browser runs, or why none can be found.
func (m *Manager) Describe() engine.BrowserInfo {
	info := engine.BrowserInfo{Mode: "local"}
	for _, in := range m.instances {
		if in.remote {
			info.Mode = "remote"
		}
		in.mu.Lock()
		if info.Product == "" && in.b != nil {
			info.Product = in.product
		}
		if info.Error == "" && in.lastErr != nil {
			info.Error = in.lastErr.Error()
		}
		in.mu.Unlock()
	}
	if info.Product == "" && info.Error == "" && info.Mode == "local" && m.instances[0].spec == "" {
		if _, err := findBinary(); err != nil {
			info.Error = err.Error()
		}
	}
	return info
}

// PIDs returns the process ids (also process group ids) of the browsers
// this Manager launched and that still run.
func (m *Manager) PIDs() []int {
	var out []int
	for _, in := range m.instances {
		in.mu.Lock()
		if in.proc != nil && in.proc.alive() {
			out = append(out, in.pid())
		}
		in.mu.Unlock()
	}
	return out
}

// Close closes every session, kills the launched browsers (whole process
// groups), removes their temporary profiles and stops the egress proxy.
// It is idempotent.
func (m *Manager) Close() error {
	m.pool.cancel() // ends the loops retrying down endpoints
	m.mu.Lock()
	m.closed = true
	sessions := m.sessions
	m.sessions = map[string]*Session{}
	m.mu.Unlock()
	for _, s := range sessions {
		s.markClosed()
	}
	for _, in := range m.instances {
		if in.remote {
			// Dispose our contexts on a shared browser before hanging up.
			for _, s := range sessions {
				if s.in == in {
					ctx, cancel := context.WithTimeout(context.Background(), 2e9)
					_ = s.close(ctx)
					cancel()
				}
			}
		}
		in.close()
	}
	m.mu.Lock()
	profiles := make([]*profileBrowser, 0, len(m.profiles))
	for _, pb := range m.profiles {
		profiles = append(profiles, pb)
	}
	m.mu.Unlock()
	// Profile browsers quit cleanly: their cookies are written out.
	for _, pb := range profiles {
		pb.mu.Lock()
		m.shutProfileLocked(pb)
		pb.mu.Unlock()
	}
	m.mu.Lock()
	px := m.egress
	m.egress = nil
	m.mu.Unlock()
	if px != nil {
		_ = px.Close()
	}
	return nil
}

// Named reports whether sessionID is a session opened with OpenSession
// (create_browser_session): its cookies and storage live in the browser,
// so pages of runs in it are loaded there.
func (m *Manager) Named(sessionID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.named[sessionID] || m.profileOf[sessionID] != ""
}

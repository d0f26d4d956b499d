package browser

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// ProfileLeaser is what the Manager needs to open a persistent profile:
// the lease that keeps every other process off its directory
// (*engine.Engine implements it).
type ProfileLeaser interface {
	AcquireProfile(ctx context.Context, name string) (*engine.ProfileLease, error)
}

// profileBrowser is the one Chromium of this process on a persistent
// profile: runs on the profile share it, each in its own tabs of the
// default context (where the profile's cookies live). It runs while at
// least one session uses it, then quits cleanly (so Chromium writes its
// cookies out) and gives the lease back.
type profileBrowser struct {
	name string
	// mu is held while the browser opens or closes and around refs.
	mu    sync.Mutex
	in    *instance
	lease *engine.ProfileLease
	refs  int
}

// SetProfiles gives the Manager the profile leases (wired once the engine
// exists; profile sessions fail with EXECUTION_ERROR before).
func (m *Manager) SetProfiles(l ProfileLeaser) {
	m.mu.Lock()
	m.leaser = l
	m.mu.Unlock()
}

// ProfileSession returns the session sessionID on persistent profile name,
// launching the profile's browser on first use (after taking its lease,
// which waits while another process has the profile open). Errors:
// INVALID_PARAMETER (unknown profile), EXECUTION_ERROR, ctx's cause.
func (m *Manager) ProfileSession(ctx context.Context, sessionID, name string) (*Session, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, engine.Errorf(engine.ExecutionError, "the browser manager is shut down")
	}
	if s, ok := m.sessions[sessionID]; ok && s.in.alive(s.gen) {
		m.mu.Unlock()
		return s, nil
	}
	leaser := m.leaser
	pb := m.profiles[name]
	if pb == nil {
		pb = &profileBrowser{name: name}
		m.profiles[name] = pb
	}
	m.mu.Unlock()
	if leaser == nil {
		return nil, engine.Errorf(engine.ExecutionError, "browser profiles are not available in this process")
	}
	if m.remoteOnly() {
		return nil, engine.Errorf(engine.ExecutionError, "profile %q needs a browser browsertask launches; --browser names a remote endpoint", name)
	}

	pb.mu.Lock()
	defer pb.mu.Unlock()
	if pb.lease == nil {
		lease, err := leaser.AcquireProfile(ctx, name)
		if err != nil {
			return nil, err
		}
		if err := clearStaleLock(ctx, lease.Dir); err != nil {
			lease.Release(nil)
			return nil, err
		}
		pb.lease = lease
		pb.in = m.profileInstance(lease.Dir)
	}
	b, gen, err := pb.in.browser(ctx)
	if err != nil {
		if pb.refs == 0 {
			m.shutProfileLocked(pb)
		}
		return nil, engine.Wrap(engine.ExecutionError, err, "cannot start the browser of profile %q: %v", name, err)
	}
	pb.refs++
	s := newSharedSession(sessionID, pb.in, b, gen, m.opts.MaxTabsPerSession, m.policy, m.log, func() { m.profileSessionDone(pb) })
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		pb.refs--
		if pb.refs == 0 {
			m.shutProfileLocked(pb)
		}
		return nil, engine.Errorf(engine.ExecutionError, "the browser manager is shut down")
	}
	m.sessions[sessionID] = s
	m.profileOf[sessionID] = name
	m.mu.Unlock()
	return s, nil
}

// profileInstance is a launched browser on dir, configured as the
// Manager's others (headed, extra args, the URL policy's switches).
func (m *Manager) profileInstance(dir string) *instance {
	var bin string
	for _, in := range m.instances {
		if !in.remote {
			bin = in.spec
			break
		}
	}
	in := &instance{spec: bin, headed: m.opts.Headed, tempDir: m.opts.TempDir, userDataDir: dir, log: m.log,
		extraArgs: m.opts.ExtraArgs, trace: m.opts.CDPTrace}
	if restricted(m.opts.TrustLevel) {
		in.policyArgs = m.egressArgs
	}
	return in
}

// remoteOnly reports whether every configured browser is a remote
// endpoint (nothing to launch a profile with).
func (m *Manager) remoteOnly() bool {
	for _, in := range m.instances {
		if !in.remote {
			return false
		}
	}
	return true
}

// profileSessionDone drops a session's reference; the last one closes
// the profile's browser and releases its lease.
func (m *Manager) profileSessionDone(pb *profileBrowser) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	pb.refs--
	if pb.refs <= 0 {
		pb.refs = 0
		m.shutProfileLocked(pb)
	}
}

// shutProfileLocked reads the profile's cookie domains, quits its browser
// cleanly and releases the lease (pb.mu held).
func (m *Manager) shutProfileLocked(pb *profileBrowser) {
	if pb.in == nil {
		return
	}
	sites := pb.in.cookieDomains()
	pb.in.closeGracefully()
	if pb.lease != nil {
		pb.lease.Release(sites)
	}
	pb.in, pb.lease = nil, nil
}

// cookieDomains returns the domains of the default context's cookies
// (names only), nil when the browser does not answer.
func (in *instance) cookieDomains() []string {
	in.mu.Lock()
	b := in.b
	in.mu.Unlock()
	if b == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := proto.StorageGetCookies{}.Call(b.Context(ctx))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(res.Cookies))
	for _, c := range res.Cookies {
		out = append(out, c.Domain)
	}
	return out
}

// ProfileOf names the persistent profile of a session ("" = none).
func (m *Manager) ProfileOf(sessionID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.profileOf[sessionID]
}

// singletonFiles are Chromium's own lock on a user-data directory.
var singletonFiles = []string{"SingletonLock", "SingletonCookie", "SingletonSocket"}

// staleLockWait bounds how long a new holder waits for the Chromium of a
// dead holder (killed with it: parent-death signal, group kill) to exit.
const staleLockWait = 15 * time.Second

// clearStaleLock removes Chromium's Singleton* files from a profile this
// process now holds the lease of. The lease says the previous holder is
// gone (it released the profile, or died and its lease lapsed), so the
// files are stale — unless the Chromium that wrote SingletonLock
// ("host-pid") still runs on this host: then it is waited for (a dead
// holder's browser is exiting), and an error names it if it does not exit.
func clearStaleLock(ctx context.Context, dir string) error {
	lock := filepath.Join(dir, "SingletonLock")
	target, err := os.Readlink(lock)
	if err == nil {
		host, _ := os.Hostname()
		i := strings.LastIndexByte(target, '-')
		if i > 0 && target[:i] == host {
			if pid, err := strconv.Atoi(target[i+1:]); err == nil && pid != os.Getpid() {
				deadline := time.Now().Add(staleLockWait)
				for pidAlive(pid) {
					if time.Now().After(deadline) {
						return engine.Errorf(engine.ExecutionError, "profile directory %s is open in another Chromium (pid %d); close it first", dir, pid)
					}
					select {
					case <-ctx.Done():
						return context.Cause(ctx)
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
		}
	}
	for _, f := range singletonFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return engine.Wrap(engine.ExecutionError, err, "remove Chromium's stale lock %s: %v", f, err)
		}
	}
	return nil
}

// ImportProfile restores cookies (and localStorage) into persistent
// profile name, as a session of its own on the profile's browser (which
// waits for the profile's lease like any run). Errors: INVALID_PARAMETER
// (a cookie the browser refuses, an unknown profile), EXECUTION_ERROR.
func (m *Manager) ImportProfile(ctx context.Context, name string, st *StorageState) error {
	id := "import-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s, err := m.ProfileSession(ctx, id, name)
	if err != nil {
		return err
	}
	defer func() { _ = m.CloseSession(context.WithoutCancel(ctx), id) }()
	return s.ImportState(ctx, st)
}

package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// profileLeaseWait is how often a process waiting for a profile another
// live process holds asks again. The holder gives the profile back when
// its last run on it ends; a dead holder's lease lapses (PeerAlive) and
// the next ask takes it.
const profileLeaseWait = 250 * time.Millisecond

// ProfileLease is this process's hold on a profile: while it lasts no
// other process opens the profile's directory. Release ends it.
type ProfileLease struct {
	// Dir is the profile's Chromium user-data directory.
	Dir  string
	e    *Engine
	name string
	stop context.CancelFunc
	once sync.Once
}

// AcquireProfile takes profile name's lease for this process, waiting
// while another live process holds it (its runs on the profile end first)
// and taking it over from a dead one. The lease is renewed every
// HeartbeatInterval until Release. Errors: INVALID_PARAMETER (unknown
// profile), EXECUTION_ERROR, or ctx's cause.
func (e *Engine) AcquireProfile(ctx context.Context, name string) (*ProfileLease, error) {
	ps, err := e.profileStore()
	if err != nil {
		return nil, err
	}
	if _, err := e.GetProfile(ctx, name); err != nil {
		return nil, err
	}
	logged := false
	for {
		dead, err := e.deadOwners(ctx)
		if err != nil {
			return nil, err
		}
		now := e.now()
		holder, err := ps.AcquireProfileLease(ctx, ProfileLeaseClaim{Name: name, OwnerID: e.ownerID, Now: now,
			Until: now + e.cfg.LeaseDuration.Milliseconds(), DeadOwners: dead})
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, Errorf(InvalidParameter, "profile %q was deleted", name).WithDetails(map[string]any{"field": "profile"})
			}
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, profileErr("lease", name, err)
		}
		if holder == e.ownerID {
			break
		}
		if !logged {
			e.log.Info("waiting for a browser profile another process has open", "profile", name, "holder", holder)
			logged = true
		}
		t := time.NewTimer(profileLeaseWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
	rctx, stop := context.WithCancel(context.Background())
	l := &ProfileLease{Dir: e.ProfileDir(name), e: e, name: name, stop: stop}
	Go(rctx, e.log, "engine.profileLease.renew", func() { e.renewProfileLease(rctx, ps, name) }, nil)
	return l, nil
}

// renewProfileLease extends the lease every heartbeat until ctx ends.
func (e *Engine) renewProfileLease(ctx context.Context, ps ProfileStore, name string) {
	t := time.NewTicker(e.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := ps.RenewProfileLease(c, name, e.ownerID, e.now()+e.cfg.LeaseDuration.Milliseconds())
		cancel()
		if err != nil && ctx.Err() == nil {
			e.log.Warn("browser profile lease not renewed", "profile", name, "error", err)
		}
	}
}

// Release gives the profile back and records what its browser left
// (sites, size; the last use is now). Call it after the profile's browser
// exited. Idempotent.
func (l *ProfileLease) Release(sites []string) {
	l.once.Do(func() {
		l.stop()
		ps, err := l.e.profileStore()
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		u := ProfileUsage{LastUsedAt: l.e.now(), Sites: SortedSites(sites), SizeBytes: DirSize(l.Dir)}
		if err := ps.ReleaseProfileLease(ctx, l.name, l.e.ownerID, u); err != nil {
			l.e.log.Warn("browser profile lease not released (it lapses on its own)", "profile", l.name, "error", err)
		}
	})
}

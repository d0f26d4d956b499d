package engine

import (
	"context"
	"time"
)

// Wake is what a change signal from another process asks for.
type Wake string

// The two wake-ups processes send each other through a PeerWaker.
const (
	// WakeClaim: a run was queued or a slot freed; schedulers claim now.
	WakeClaim Wake = "claim"
	// WakeChange: a run changed (status, progress, a question or its
	// answer, an event); waiters read it again now.
	WakeChange Wake = "change"
)

// PeerWaker is implemented by a store whose processes can wake each other
// at once — PostgreSQL's LISTEN/NOTIFY in db/postgres — so a run queued on
// one daemon is claimed by an idle other one, and a waiter (Wait, Tasks
// long-polls, event subscriptions, a question's answer) on one daemon hears
// about a change made on another without waiting for a poll. A store
// without it (SQLite) keeps the engine's polling as the only way across
// processes; polling also stays as the fallback with it.
type PeerWaker interface {
	// Publish tells every other process on the database, without
	// blocking: signals may be coalesced, never lost.
	Publish(w Wake)
	// Listen calls fn for each signal another process published, until
	// ctx ends. After a lost connection it calls fn with both kinds once
	// (what was missed meanwhile) and listens again.
	Listen(ctx context.Context, fn func(Wake)) error
}

// publish sends w to the other processes when the store can.
func (e *Engine) publish(w Wake) {
	if e.peerWaker != nil {
		e.peerWaker.Publish(w)
	}
}

// listenPeers turns other processes' signals into local wake-ups, until ctx
// ends; a Listen that fails is started again after a short pause.
func (e *Engine) listenPeers(ctx context.Context) {
	if e.peerWaker == nil {
		return
	}
	for ctx.Err() == nil {
		err := e.peerWaker.Listen(ctx, func(w Wake) {
			switch w {
			case WakeClaim:
				e.kickLocal()
			case WakeChange:
				e.notifyLocal()
			}
		})
		if ctx.Err() != nil {
			return
		}
		e.log.Warn("listening to peers failed; polling until it works again", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

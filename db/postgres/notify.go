package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/jackc/pgx/v5"
)

var _ engine.PeerWaker = (*DB)(nil)

// notifier sends this handle's wake-ups with NOTIFY, coalesced: Publish
// sets a flag per kind and signals one sender goroutine, which sends one
// NOTIFY per kind set, so a burst of changes costs a few statements and a
// signal is never lost (a flag set after the sender read it is sent next
// round).
type notifier struct {
	channel string // LISTEN/NOTIFY channel: one per database schema
	self    string // this handle's id: Listen skips its own signals
	claim   atomic.Bool
	change  atomic.Bool
	signal  chan struct{}
	stop    context.CancelFunc
	done    chan struct{}
}

// startNotifier starts the sender of d's wake-ups.
func (d *DB) startNotifier() {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	channel := "browsertask"
	if d.schema != "" {
		channel += "_" + d.schema
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{channel: channel, self: hex.EncodeToString(b), signal: make(chan struct{}, 1),
		stop: cancel, done: make(chan struct{})}
	d.notes = n
	engine.Go(ctx, slog.Default(), "postgres.notify", func() { d.sendLoop(ctx) }, nil)
}

// Publish tells the other processes on the database, without blocking.
func (d *DB) Publish(w engine.Wake) {
	n := d.notes
	switch w {
	case engine.WakeClaim:
		n.claim.Store(true)
	case engine.WakeChange:
		n.change.Store(true)
	default:
		return
	}
	select {
	case n.signal <- struct{}{}:
	default:
	}
}

// sendLoop sends the flagged wake-ups until ctx ends.
func (d *DB) sendLoop(ctx context.Context) {
	n := d.notes
	defer close(n.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.signal:
		}
		for _, k := range []struct {
			flag *atomic.Bool
			w    engine.Wake
		}{{&n.claim, engine.WakeClaim}, {&n.change, engine.WakeChange}} {
			if !k.flag.Swap(false) {
				continue
			}
			// A failed NOTIFY is not retried: the peers' polling covers it.
			_, _ = d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, n.channel, string(k.w)+":"+n.self)
		}
	}
}

// Listen calls fn for every wake-up another handle published on this
// database, on a connection of its own (LISTEN holds it), until ctx ends.
// A lost connection is reconnected with a pause; fn then gets both kinds
// once, for whatever was published meanwhile.
func (d *DB) Listen(ctx context.Context, fn func(engine.Wake)) error {
	first := true
	for {
		err := d.listenOnce(ctx, fn, first)
		if ctx.Err() != nil {
			return nil
		}
		first = false
		var pause *time.Timer
		if err != nil {
			pause = time.NewTimer(500 * time.Millisecond)
		} else {
			pause = time.NewTimer(0)
		}
		select {
		case <-ctx.Done():
			pause.Stop()
			return nil
		case <-pause.C:
		}
	}
}

// listenOnce is one LISTEN connection's life.
func (d *DB) listenOnce(ctx context.Context, fn func(engine.Wake), first bool) error {
	conn, err := pgx.ConnectConfig(ctx, d.connCfg.Copy())
	if err != nil {
		return fmt.Errorf("postgres: listen: connect: %w", err)
	}
	defer conn.Close(context.Background()) //nolint:errcheck // the connection is dropped either way
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{d.notes.channel}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: listen: %w", err)
	}
	d.listening.Store(true)
	defer d.listening.Store(false)
	if !first {
		fn(engine.WakeClaim)
		fn(engine.WakeChange)
	}
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("postgres: listen: %w", err)
		}
		kind, from, _ := strings.Cut(note.Payload, ":")
		if from == d.notes.self {
			continue
		}
		fn(engine.Wake(kind))
	}
}

// Listening reports whether a Listen of this handle holds its LISTEN now
// (for tests and doctor).
func (d *DB) Listening() bool { return d.listening.Load() }

// closeNotifier stops the sender and waits for it (a second call returns
// at once).
func (d *DB) closeNotifier() {
	d.notes.stop()
	<-d.notes.done
}

package engine

import (
	"context"
	"os"
	"time"
)

// PeerAlive reports whether o, the owner row of a process sharing this
// database, stands for a live process. It is the one liveness rule:
// recovery releases an owner it calls dead (its runs are recovered at
// once), and `browsertask run --async` warns that nothing will execute a
// queued run when it finds no live peer.
//
// A process on this host whose PID is gone is dead at once: the process
// table is the truth there, so a killed daemon on the same machine shows
// without waiting. Otherwise (another host sharing the file, or a PID
// reused by another program) a process is alive while its last heartbeat
// is at most 3 × LeaseDuration (45 s by default) old. Heartbeats come
// every HeartbeatInterval (1 s), but on a loaded machine, or across a GC
// pause, a swap storm or a suspended laptop, they run seconds late; three
// whole leases is a silence no live process shows, and releasing a live
// process's owner row would orphan its sessions. The cost of the margin
// is small: its runs' leases expire after one LeaseDuration and recovery
// takes them over then anyway, and the CLI's warning only comes later
// for a peer on another host that stopped without a trace. This process's
// own row is always alive.
func (e *Engine) PeerAlive(o Owner) bool {
	if o.ID == e.ownerID {
		return true
	}
	if host, _ := os.Hostname(); o.Host == host && !processAlive(o.PID) {
		return false
	}
	silence := time.Duration(e.now()-o.HeartbeatAt) * time.Millisecond
	return silence <= 3*e.cfg.LeaseDuration
}

// AnyPeerAlive reports whether another live process (PeerAlive) shares
// this database: one whose engine will claim a queued run. A database
// that cannot be read answers false with the error.
func (e *Engine) AnyPeerAlive(ctx context.Context) (bool, error) {
	owners, err := e.store.ListOwners(ctx)
	if err != nil {
		return false, err
	}
	for _, o := range owners {
		if o.ID != e.ownerID && e.PeerAlive(o) {
			return true, nil
		}
	}
	return false, nil
}

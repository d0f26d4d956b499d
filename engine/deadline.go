package engine

import (
	"sync"
	"time"
)

// runDeadline is a run's options.timeoutMs as a clock that stops while the
// run waits for a person (Ask): a person who takes five minutes to find a
// one-time code does not use up the run's time. The wait has its own limit
// (the input timeout). pause and resume nest, for questions asked in
// parallel.
type runDeadline struct {
	mu     sync.Mutex
	left   time.Duration // what remains, as of since
	since  time.Time     // when the current counting stretch began
	timer  *time.Timer   // nil while paused
	paused int
	fire   func()
}

func newRunDeadline(d time.Duration, fire func()) *runDeadline {
	return &runDeadline{left: d, since: time.Now(), timer: time.AfterFunc(d, fire), fire: fire}
}

// pause stops the clock (the first of nested pauses does).
func (t *runDeadline) pause() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused++
	if t.paused == 1 && t.timer != nil {
		if t.timer.Stop() {
			t.left = max(t.left-time.Since(t.since), 0)
		} else {
			t.left = 0 // already fired
		}
		t.timer = nil
	}
}

// resume restarts the clock with what was left (the last of nested
// resumes does). A deadline that already fired stays fired.
func (t *runDeadline) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused == 0 {
		return
	}
	t.paused--
	if t.paused == 0 && t.left > 0 {
		t.since = time.Now()
		t.timer = time.AfterFunc(t.left, t.fire)
	}
}

// stop releases the timer when the run ends.
func (t *runDeadline) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	t.paused = 1 << 30 // no resume restarts it
}

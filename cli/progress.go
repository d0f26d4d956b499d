package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// progressPrinter shows a run's progress on stderr: a redrawn bar on a
// terminal, otherwise plain lines (on every status change and at most one
// progress line a second), so logs of scripted runs stay readable.
type progressPrinter struct {
	// mu orders the bar with the prompts and hints of the run's
	// questions, printed from another goroutine.
	mu     sync.Mutex
	held   bool // a prompt is on the terminal: draw nothing
	w      io.Writer
	tty    bool
	start  time.Time
	last   time.Time
	status engine.RunStatus
	drawn  bool
}

func newProgressPrinter(w io.Writer, tty bool) *progressPrinter {
	return &progressPrinter{w: w, tty: tty, start: time.Now()}
}

// update is Wait's onChange callback.
func (p *progressPrinter) update(r *engine.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held {
		return
	}
	if p.tty {
		p.draw(r)
		return
	}
	now := time.Now()
	if r.Status != p.status || now.Sub(p.last) >= time.Second {
		fmt.Fprintf(p.w, "%s %s %s\n", r.RunID, r.Status, counts(r.Progress))
		p.status, p.last = r.Status, now
	}
}

// hold stops drawing while a prompt is on the terminal (ending the bar's
// line first), and resumes it.
func (p *progressPrinter) hold(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	p.held = on
}

// say prints a line of its own (the bar, if drawn, is cleared first and
// redrawn on the next update).
func (p *progressPrinter) say(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, line)
}

// draw redraws the bar in place.
func (p *progressPrinter) draw(r *engine.Run) {
	const width = 30
	filled := 0
	if t := r.Progress.TotalSteps; t > 0 {
		filled = min(width, r.Progress.DoneSteps*width/t)
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
	el := time.Since(p.start).Round(100 * time.Millisecond)
	fmt.Fprintf(p.w, "\r\033[K%s %s %-9s %s", bar, counts(r.Progress), r.Status, el)
	if r.InputRequest != nil {
		fmt.Fprint(p.w, "  waiting for input")
	}
	p.drawn = true
}

// done ends the bar (or prints the final line).
func (p *progressPrinter) done(r *engine.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.draw(r)
		fmt.Fprintln(p.w)
		return
	}
	if r.Status != p.status {
		fmt.Fprintf(p.w, "%s %s %s\n", r.RunID, r.Status, counts(r.Progress))
	}
}

// counts renders "12/40 (1 failed)".
func counts(pr engine.Progress) string {
	s := fmt.Sprintf("%d/%d", pr.DoneSteps, pr.TotalSteps)
	if pr.FailedSteps > 0 {
		s += fmt.Sprintf(" (%d failed)", pr.FailedSteps)
	}
	return s
}

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
// progress line a second), so logs of scripted runs stay readable. What it
// shows never goes backwards: a resumed attempt, or a crawl replaying its
// levels from checkpoints, reports fewer steps done than were shown, and
// those are held until the run catches up; when the total grows while the
// run runs (a crawl finding links), the bar's fraction would shrink, so no
// bar is drawn until the run ends. A run that ended gets a last line with
// its outcome: for a failed or canceled run, the error code and message.
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

	shown   engine.Progress // counts shown so far (Message unused)
	filled  int             // bar cells filled so far
	growing bool            // the total grew while the run ran
}

// barWidth is the bar's length in cells.
const barWidth = 30

func newProgressPrinter(w io.Writer, tty bool) *progressPrinter {
	return &progressPrinter{w: w, tty: tty, start: time.Now()}
}

// update is Wait's onChange callback. A run that ended is left to done,
// which says how it ended.
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
	pr := p.see(r)
	if r.Status.Terminal() {
		return
	}
	now := time.Now()
	if r.Status != p.status || now.Sub(p.last) >= time.Second {
		fmt.Fprintln(p.w, joinNonEmpty(r.RunID, string(r.Status), progressLabel(pr, r)))
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

// see takes in r's progress and returns the counts to show: never fewer
// steps done (or failed) than shown before. While the run reports fewer
// done than shown, the total shown is kept as well, so a held count never
// looks complete. It notes when the total grew.
func (p *progressPrinter) see(r *engine.Run) engine.Progress {
	pr, prev := r.Progress, p.shown
	out := engine.Progress{DoneSteps: pr.DoneSteps, TotalSteps: max(pr.TotalSteps, pr.DoneSteps), Message: pr.Message}
	if pr.DoneSteps < prev.DoneSteps {
		out.DoneSteps = prev.DoneSteps
		out.TotalSteps = max(prev.TotalSteps, pr.TotalSteps)
	} else if prev.TotalSteps > 0 && pr.TotalSteps > prev.TotalSteps && !r.Status.Terminal() {
		p.growing = true
	}
	out.FailedSteps = min(max(prev.FailedSteps, pr.FailedSteps), out.DoneSteps)
	p.shown = engine.Progress{DoneSteps: out.DoneSteps, TotalSteps: out.TotalSteps, FailedSteps: out.FailedSteps}
	return out
}

// draw redraws the bar in place.
func (p *progressPrinter) draw(r *engine.Run) {
	pr := p.see(r)
	var parts []string
	// A growing total makes the fraction meaningless until the run ends;
	// a run that ended shows its bar again (full when all is done).
	if pr.TotalSteps > 0 && (!p.growing || r.Status.Terminal()) {
		p.filled = max(p.filled, min(barWidth, pr.DoneSteps*barWidth/pr.TotalSteps))
		parts = append(parts, strings.Repeat("█", p.filled)+strings.Repeat("░", barWidth-p.filled))
	}
	parts = append(parts, progressLabel(pr, r), fmt.Sprintf("%-9s", r.Status), time.Since(p.start).Round(100*time.Millisecond).String())
	fmt.Fprintf(p.w, "\r\033[K%s", joinNonEmpty(parts...))
	if r.Question != nil {
		fmt.Fprint(p.w, "  waiting for input")
	}
	p.drawn = true
}

// done ends the bar (or prints the final line) and, for a run that failed
// or was canceled, says why.
func (p *progressPrinter) done(r *engine.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.draw(r)
		fmt.Fprintln(p.w)
		if r.Error != nil {
			fmt.Fprintln(p.w, outcome(r, p.shown))
		}
		return
	}
	pr := p.see(r)
	fmt.Fprintln(p.w, r.RunID+" "+outcome(r, pr))
}

// outcome says how run r ended: "succeeded 3/3", or for a failed or
// canceled run its error — "failed: RUN_TIMEOUT — <message> (2/3 steps
// done)". The steps done are left out when the message already says what
// the run kept (engine/keep.go appends "(kept N finished item(s), …)").
func outcome(r *engine.Run, pr engine.Progress) string {
	if r.Error == nil {
		return joinNonEmpty(string(r.Status), progressLabel(pr, r))
	}
	s := fmt.Sprintf("%s: %s — %s", r.Status, r.Error.Code, strings.Join(strings.Fields(r.Error.Message), " "))
	if _, kept := r.Error.Details["finished"]; !kept {
		if d := doneText(pr); d != "" {
			s += " (" + d + ")"
		}
	}
	return s
}

// doneText is "2/3 steps done, 1 failed"; "" when the run counted nothing.
func doneText(pr engine.Progress) string {
	c := counts(pr)
	if c == "" {
		return ""
	}
	s := c + " steps done"
	if pr.TotalSteps == 0 {
		s = c
	}
	if pr.FailedSteps > 0 {
		s += fmt.Sprintf(", %d failed", pr.FailedSteps)
	}
	return s
}

// hasCount reports whether s holds a count like "12/40".
func hasCount(s string) bool {
	for i := strings.IndexByte(s, '/'); i >= 0; {
		if i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// maxMessage is the most runes of a progress message shown on the line.
const maxMessage = 48

// progressLabel renders the counts to show for run r, with the run's
// progress message while it runs: "12/40 pages (more may be found)",
// "1/5 filling the form". A message is shown only when it agrees with the
// counts (it starts with them, or holds no count at all); a run that
// ended shows its counts alone, so a finished crawl never says more pages
// may be found.
func progressLabel(pr engine.Progress, r *engine.Run) string {
	c := counts(pr)
	msg := strings.Join(strings.Fields(pr.Message), " ")
	if rs := []rune(msg); len(rs) > maxMessage {
		msg = strings.TrimSpace(string(rs[:maxMessage-1])) + "…"
	}
	failed := ""
	if pr.FailedSteps > 0 {
		failed = fmt.Sprintf(" (%d failed)", pr.FailedSteps)
	}
	switch {
	case msg == "" || r.Status.Terminal():
	case c != "" && strings.HasPrefix(msg, c) && !hasCount(msg[len(c):]):
		return msg + failed
	case !hasCount(msg):
		return joinNonEmpty(c+failed, msg)
	}
	if c == "" {
		return ""
	}
	return c + failed
}

// counts renders "12/40", "3 done" when the run does not know its total,
// and "" when it counted nothing yet (never "0/0").
func counts(pr engine.Progress) string {
	switch {
	case pr.TotalSteps > 0:
		return fmt.Sprintf("%d/%d", pr.DoneSteps, pr.TotalSteps)
	case pr.DoneSteps > 0:
		return fmt.Sprintf("%d done", pr.DoneSteps)
	}
	return ""
}

// joinNonEmpty joins the non-empty parts with spaces.
func joinNonEmpty(parts ...string) string {
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

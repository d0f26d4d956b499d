package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// runQuestions answers the questions of a run `browsertask run` follows in
// the foreground. On a terminal it prompts for each question once (hidden
// input for a secret, y/n for confirm) and answers it; otherwise it prints
// once per question, on stderr, how to answer it from elsewhere, and the
// run keeps waiting for that answer.
type runQuestions struct {
	eng   *engine.Engine
	runID string
	tty   *terminal // nil: stdin is not a terminal
	w     io.Writer // stderr
	bar   *progressPrinter
	// how says how to answer from another terminal, beyond the run id
	// (e.g. "--db /tmp/x.db"), and dashboard returns the run's dashboard
	// URL when a daemon on this database serves one ("" otherwise).
	how       string
	dashboard func() string

	mu   sync.Mutex
	seen map[string]bool // request ids prompted for or hinted at

	ctx  context.Context // ends with close
	wake chan struct{}
	// waiting says the run's last state had a question open: while it
	// does, the questions are looked at again every questionPoll, since a
	// second question asked while the first is open changes nothing Wait
	// reports.
	waiting   atomic.Bool
	prompting atomic.Bool
	stop      context.CancelFunc
	done      chan struct{}
}

// questionPoll is how often the questions of a waiting run are looked at.
const questionPoll = 250 * time.Millisecond

// newRunQuestions starts the prompter (on a terminal) or the hinter; call
// close when the run ended.
func newRunQuestions(ctx context.Context, q *runQuestions) *runQuestions {
	q.seen = map[string]bool{}
	q.wake = make(chan struct{}, 1)
	q.done = make(chan struct{})
	ctx, q.stop = context.WithCancel(ctx)
	q.ctx = ctx
	engine.Go(ctx, nil, "cli.runQuestions", func() {
		defer close(q.done)
		t := time.NewTicker(questionPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
			case <-t.C:
				if !q.waiting.Load() {
					continue
				}
			}
			if q.tty != nil {
				q.promptAll(ctx)
			} else {
				q.hintAll(ctx)
			}
		}
	}, func(*engine.Panic) {
		select {
		case <-q.done: // closed by the deferred close
		default:
			close(q.done)
		}
	})
	return q
}

// update is Wait's onChange callback: the progress, and the questions the
// run starts waiting on.
func (q *runQuestions) update(r *engine.Run) {
	q.bar.update(r)
	q.waiting.Store(r.Question != nil)
	if r.Question == nil {
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// fresh returns the outstanding questions not prompted for or hinted at
// yet, and marks them seen.
func (q *runQuestions) fresh(ctx context.Context) []engine.Question {
	pending, err := q.eng.PendingQuestions(ctx, q.runID)
	if err != nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []engine.Question
	for _, p := range pending {
		if !q.seen[p.RequestID] {
			q.seen[p.RequestID] = true
			out = append(out, p)
		}
	}
	return out
}

// hintAll prints, once per question, what the run waits for and how to
// answer it.
func (q *runQuestions) hintAll(ctx context.Context) {
	for _, p := range q.fresh(ctx) {
		cmd := "browsertask answer " + q.runID
		if q.how != "" {
			cmd += " " + q.how
		}
		cmd += " --request " + p.RequestID
		switch p.Kind {
		case engine.QuestionConfirm:
			cmd += " --yes (or --no)"
		case engine.QuestionText:
			cmd += " VALUE"
		}
		line := fmt.Sprintf("%s waits for input (%s, %s): %s — answer from another terminal: %s", q.runID, p.RequestID, p.Kind, questionText(p), cmd)
		if url := q.dashboard(); url != "" {
			line += ", or on the dashboard: " + url
		}
		q.bar.say(line)
	}
}

// promptAll prompts for every new question and answers it, until no new
// one is waiting.
func (q *runQuestions) promptAll(ctx context.Context) {
	for {
		qs := q.fresh(ctx)
		if len(qs) == 0 {
			return
		}
		for _, p := range qs {
			// prompting is set before ctx is checked, so close either
			// sees the prompt or this loop sees close's cancel.
			q.prompting.Store(true)
			if ctx.Err() != nil {
				q.prompting.Store(false)
				return
			}
			q.bar.hold(true)
			ans, err := q.tty.ask(p)
			q.prompting.Store(false)
			if ctx.Err() != nil {
				return // the run ended meanwhile; close says so
			}
			switch {
			case err != nil:
				fmt.Fprintf(q.w, "%v; answer from another terminal: browsertask answer %s --request %s\n", err, q.runID, p.RequestID)
			default:
				if _, err := q.eng.AnswerQuestion(ctx, q.runID, p.RequestID, ans); err != nil {
					fmt.Fprintf(q.w, "not answered: %v\n", domainErr(err))
				} else {
					fmt.Fprintf(q.w, "answered %s\n", answered(p, ans))
				}
			}
			q.bar.hold(false)
		}
	}
}

// close stops the prompter. A prompt still open (the run ended, or was
// interrupted, while the person was typing) is abandoned: the terminal's
// echo comes back and a line says so.
func (q *runQuestions) close() {
	q.stop()
	if q.prompting.Load() {
		q.tty.restore()
		fmt.Fprintln(q.w, "\n(the question is no longer asked)")
		q.bar.hold(false)
		return // the goroutine stays blocked on the terminal until exit
	}
	<-q.done
}

// answerHow is what `browsertask answer` needs beyond the run id to reach
// the same database: --db when it is not the default one.
func answerHow(cfg *config, getenv func(string) string) string {
	if cfg.dbPath == defaultDBPath(getenv) {
		return ""
	}
	p := cfg.dbPath
	if strings.ContainsAny(p, " \t'\"$&?;|<>()*#!`~") {
		p = "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return "--db " + p
}

// dashboardURL returns a function giving the run's dashboard page when
// another process on this database answers /healthz on --addr (checked
// once, on first use), "" otherwise.
func (a *app) dashboardURL(ctx context.Context, runID string) func() string {
	var once sync.Once
	var url string
	return func() string {
		once.Do(func() {
			if a.cfg.addr == "" {
				return
			}
			if alive, _ := a.engine.AnyPeerAlive(ctx); !alive {
				return
			}
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(cctx, http.MethodGet, "http://"+a.cfg.addr+"/healthz", nil)
			if err != nil {
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				url = "http://" + a.cfg.addr + "/runs/" + runID
			}
		})
		return url
	}
}

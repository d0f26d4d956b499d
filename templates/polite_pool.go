package templates

import (
	"context"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/hostgate"
)

// Retry timing. The first retry waits 1–1.5 s, each next one twice as
// long, up to retryWaitCap; jitter spreads the retries of many pages that
// failed together. A Retry-After is obeyed when it asks for longer, up
// to maxRetryAfter: a page asked to wait longer fails and says so, rather
// than holding a tab for minutes.
const (
	retryWaitBase = time.Second
	retryWaitCap  = 30 * time.Second
	maxRetryAfter = 60 * time.Second
	// slowAnswer is how long a page request may take before the host's
	// spacing backs off as it does on a 429 (Scrapy's AutoThrottle reacts
	// to latency the same way, more finely).
	slowAnswer = 5 * time.Second
)

// attemptNote is one failed attempt of a page that was tried again: the
// attempt's number, its status and error, and how long the run waited
// before the next one (and the Retry-After that asked for it, if any).
type attemptNote struct {
	Attempt      int           `json:"attempt"`
	HTTPStatus   int           `json:"httpStatus,omitempty"`
	Error        *engine.Error `json:"error"`
	WaitedMs     int64         `json:"waitedMs"`
	RetryAfterMs int64         `json:"retryAfterMs,omitempty"`
}

// attempted is implemented by the page outputs politeWork records
// attempts on (pageOut and what embeds it).
type attempted interface {
	setAttempts(n int, notes []attemptNote)
	retryHint() (status int, retryAfter time.Duration, ok bool)
}

// setAttempts records how many attempts the page took and the failed
// ones before the last.
func (p *pageOut) setAttempts(n int, notes []attemptNote) { p.Attempts, p.FailedAttempts = n, notes }

// retryHint is the status and Retry-After of the page's last attempt (ok:
// a Retry-After was read; only the HTTP path sees response headers).
func (p *pageOut) retryHint() (int, time.Duration, bool) {
	return p.HTTPStatus, p.retryAfter, p.retryAfterSet
}

// politeWork wraps a pool's work with the run's per-host gate and
// retries: each attempt of a page waits for a slot of its URL's host
// (hostgate: inputs.perHostConcurrency, minDelayMs, backoff on 429/503 or
// a slow answer), and a page whose failure is transient (engine.Transient)
// is tried again, up to retries times, after an exponential wait with
// jitter or the Retry-After it was given. The page's output records its
// attempts. The waits end with ctx (a cancel is not held up by them).
// Redirects and, in the browser, the page's own subresources are part of
// the gated attempt; only the first URL's host is counted.
func politeWork(p *politeness, gate *hostgate.Gate, work urlWork) urlWork {
	retries := p.retries()
	return func(ctx context.Context, tb *browser.Tab, i int, u string) (pageDone, error) {
		host := gateHost(u)
		var notes []attemptNote
		for attempt := 1; ; attempt++ {
			release := func() {}
			if host != "" {
				var err error
				if release, err = gate.Acquire(ctx, host); err != nil {
					return pageDone{}, nil // ctx ended: not checkpointed
				}
			}
			began := time.Now()
			done, fatal := work(ctx, tb, i, u)
			release()
			if fatal != nil || ctx.Err() != nil {
				return done, fatal
			}
			rec, _ := done.out.(attempted)
			status, retryAfter, hinted := 0, time.Duration(0), false
			if rec != nil {
				status, retryAfter, hinted = rec.retryHint()
			}
			switch {
			case status == 429 || status == 503 || time.Since(began) > slowAnswer:
				gate.Backoff(host)
			case done.failure == nil:
				gate.Relax(host)
			}
			last := done.failure == nil || attempt > retries || !engine.Transient(status, done.failure)
			if !last && hinted && retryAfter > maxRetryAfter {
				done.failure = engine.Errorf(engine.StepExecutionFailed,
					"%s answered HTTP %d and asked to be tried again in %s (Retry-After), longer than the %s a run waits; try this page again later",
					u, status, retryAfter.Round(time.Second), maxRetryAfter).
					WithDetails(map[string]any{"url": u, "httpStatus": status, "retryAfterMs": retryAfter.Milliseconds()})
				setOutError(done.out, done.failure)
				last = true
			}
			if last {
				if rec != nil {
					rec.setAttempts(attempt, notes)
				}
				return done, nil
			}
			wait := retryWait(attempt)
			note := attemptNote{Attempt: attempt, HTTPStatus: status, Error: done.failure}
			if hinted {
				note.RetryAfterMs = retryAfter.Milliseconds()
				wait = max(wait, retryAfter)
			}
			note.WaitedMs = wait.Milliseconds()
			notes = append(notes, note)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return pageDone{}, nil
			case <-t.C:
			}
		}
	}
}

// retryWait is the wait before retry number attempt (1 = the first):
// retryWaitBase doubled per attempt, times 1–1.5 for jitter, capped.
func retryWait(attempt int) time.Duration {
	d := retryWaitBase << min(attempt-1, 10)
	d = time.Duration(float64(d) * (1 + rand.Float64()/2))
	return min(d, retryWaitCap)
}

// setOutError sets the page's error in its output, when it is a page.
func setOutError(out any, e *engine.Error) {
	switch p := out.(type) {
	case *pageOut:
		p.Error = e
	case *crawlPageOut:
		p.Error = e
	}
}

// gateHost is the host a URL's request is gated under: its host and port,
// lower case; "" (not gated) for a URL without one (file:).
func gateHost(u string) string {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		return ""
	}
	return strings.ToLower(pu.Host)
}

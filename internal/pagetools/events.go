package pagetools

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// masked is what a session event shows for text typed into a secret
// field.
const masked = "••••••"

// secretField tells a password, one-time-code or payment-card field by
// what the page says of it. Fields whose names merely suggest a secret are
// not guessed at: their values are shown.
const secretField = `function () {
  const ac = (this.getAttribute('autocomplete') || '').toLowerCase();
  return this.type === 'password' || /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc)(\s|$)/.test(ac);
}`

// isSecret reports whether the element ref names is a secret field; true
// when it cannot be told (the element is gone or the page does not
// answer), so a value is masked rather than kept by mistake.
func isSecret(ctx context.Context, p *page, ref string) bool {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	el, err := snapshot.Element(c, p.tab.Page(), p.refs, "ref", ref)
	if err != nil {
		return true
	}
	res, err := el.Context(c).Eval(secretField)
	return err != nil || res.Value.Bool()
}

// record stores the call as an event of its session (engine.SessionEvent):
// tool, tab, action, what it acted on, the value (masked for a secret
// field), the tab's address after it, outcome and duration. Recording
// never fails the call, which already happened: a store that refuses the
// event is logged to stderr.
func (t *Tools) record(ctx context.Context, p *page, tool string, a *args, start time.Time, callErr error) {
	ctx = context.WithoutCancel(ctx)
	ev := engine.SessionEvent{SessionID: a.SessionID, Tool: tool, Action: a.Action, Outcome: "ok",
		DurationMs: time.Since(start).Milliseconds()}
	if callErr != nil {
		e := engine.AsError(callErr)
		ev.Outcome, ev.Message = string(e.Code), e.Message
	}
	switch tool {
	case "browser_navigate":
		ev.Target = a.URL
	case "browser_tabs":
		ev.Target = a.URL
		if a.Tab != "" {
			ev.Target = a.Tab
		}
		if ev.Action == "" {
			ev.Action = "list"
		}
	case "browser_wait":
		ev.Target = a.Text
	case "browser_act":
		ev.Target = a.Ref
		if a.refLine != "" {
			ev.Target = a.refLine
		}
		switch a.Action {
		case "fill", "type":
			ev.Value = a.Value
			if a.secret {
				ev.Value = masked
			}
		case "drag":
			ev.Value = a.Target
		default:
			ev.Value = a.Value
		}
	}
	if p.set.cur != nil {
		ev.Tab = p.set.cur.id
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		if info, err := p.tab.Page().Context(c).Info(); err == nil {
			ev.URL = info.URL
		}
		cancel()
	}
	if err := t.pages.sessions.RecordSessionEvent(ctx, ev); err != nil {
		slog.New(slog.NewTextHandler(os.Stderr, nil)).Warn("a session event was not recorded", "sessionId", a.SessionID, "tool", tool, "err", err)
	}
}

// noteTarget reads, before an act runs, what record needs of its element:
// the snapshot line the reference heads and whether a value typed into it
// is a secret.
func noteTarget(ctx context.Context, p *page, a *args) {
	a.refLine = p.refs.Line(a.Ref)
	if a.Action == "fill" || a.Action == "type" {
		a.secret = isSecret(ctx, p, a.Ref)
	}
}

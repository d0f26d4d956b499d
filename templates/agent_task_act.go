package templates

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/agent"
	"github.com/browsertask/browsertask/internal/pagetools"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// agentWait bounds a wait action and each element action's settling.
const agentWait = 10 * time.Second

// declinedErr is a person's no to a question the run asked before an
// action: the model is told, and it is no failure — unless the model asks
// again for an action the person already refused on that page (again):
// the person is not asked twice, and each such request counts as a
// failure in a row, so a model that insists ends the run by
// maxFailuresInARow instead of asking the person until maxSteps.
type declinedErr struct {
	msg   string
	again bool
}

func (d declinedErr) Error() string { return d.msg }

// do carries out one action as step r.step: it describes the element
// (selector, effect), asks the person when confirm (or an interrupted
// earlier attempt) says so, records the intent, acts, and records the
// outcome.
func (r *agentRun) do(ctx context.Context, a agent.Action, pageURL string) error {
	rec := agentRecord{Phase: "intent", Step: r.step, Action: a, URL: pageURL, Effect: agent.NoEffect.String()}
	effect := agent.NoEffect
	if a.Action == agent.Navigate {
		if err := r.checkNavigate(a.URL); err != nil {
			return err
		}
	}
	if a.Ref != "" {
		d, err := snapshot.Describe(ctx, r.tb.Page(), r.refs, a.Ref)
		if err != nil {
			return err
		}
		rec.Selector = d.Selector
		effect = agent.Classify(a.Action, agent.Element{Tag: d.Tag, Type: d.Type, Name: d.Name, Submits: d.Submits, InForm: d.InForm, FormMethod: d.FormMethod, Pays: d.Pays}, agent.IsEnter(a.Value))
		rec.Effect = effect.String()
		if effect != agent.NoEffect {
			rec.Action.Text = d.Name
		}
		if a.Action == agent.Fill && d.Type == "password" {
			// A password is neither recorded nor shown to the model
			// again; a replay asks the person for it.
			rec.Action.Value, rec.Action.Secret = "***", true
		}
		r.expectNav = (a.Action == agent.Click && (d.Tag == "a" || d.Submits)) || (a.Action == agent.Press && agent.IsEnter(a.Value) && d.InForm)
	} else {
		r.expectNav = false
	}
	refusal := pageURL + "\x00" + a.Action + "\x00" + rec.Selector + "\x00" + rec.Action.Text
	if r.declined[refusal] {
		return declinedErr{msg: fmt.Sprintf("the person already said no to %s on this page; do not ask for it again: find another way or answer", describeAction(a)), again: true}
	}
	if id, msg := r.needsYes(a, rec, effect); id != "" {
		yes, err := engine.AskConfirm(ctx, r.env, id, msg)
		if err != nil {
			return err
		}
		rec.Confirmed, rec.ConfirmMessage = yes, msg
		if !yes {
			rec.Phase, rec.Outcome = "done", "not done: the person said no"
			r.declined[refusal] = true
			if err := r.record(ctx, rec); err != nil {
				return err
			}
			return declinedErr{msg: fmt.Sprintf("the person said no to %s; do not do it, find another way or answer", describeAction(a))}
		}
	}
	if err := r.record(ctx, rec); err != nil {
		return err
	}
	before := r.heading(ctx)
	outcome, err := r.perform(ctx, a, r.step)
	rec.Phase, rec.OK, rec.Outcome = "done", err == nil, outcome
	if rec.Action.Secret && a.Action == agent.Fill {
		outcome = "filled (a password: not recorded)"
		rec.Outcome = outcome
	}
	if err != nil {
		rec.Outcome = "failed: " + err.Error()
	}
	if info, ierr := r.tb.Page().Context(ctx).Info(); ierr == nil {
		rec.After = info.URL
	}
	if err == nil && rec.After != rec.URL && a.Action != agent.Navigate {
		// A replay waits for the page the action led to by its heading.
		if h := r.heading(ctx); h != before {
			rec.WaitText = h
		}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if werr := r.record(ctx, rec); werr != nil {
		return werr
	}
	return err
}

// needsYes says whether the person is asked before the action: the
// question's requestId and message, or "". The requestId is the step's,
// so a run resumed while it waited asks the same question and keeps its
// answer; the question about an interrupted action has its own, so the
// yes given before the interruption does not answer it.
func (r *agentRun) needsYes(a agent.Action, rec agentRecord, effect agent.Effect) (string, string) {
	if it := r.interrupted; it != nil && effect != agent.NoEffect && it.Action.Action == a.Action && it.Selector == rec.Selector {
		r.interrupted = nil
		return fmt.Sprintf("agent-resume-%d", it.Step),
			fmt.Sprintf("The task was interrupted while doing this on %s: %s %q. Whether it happened is unknown. Do it again?", rec.URL, a.Action, rec.Action.Text)
	}
	switch {
	case r.in.Confirm == confirmNever || effect == agent.NoEffect:
		return "", ""
	case effect == agent.Commit || r.in.Confirm == confirmAlways:
		return fmt.Sprintf("agent-confirm-%d", r.step), fmt.Sprintf("The task %q wants to %s %q on %s. Go ahead?", agentCut(r.in.Goal, 200), a.Action, rec.Action.Text, rec.URL)
	}
	return "", ""
}

// record checkpoints one record as the run's item 2×step (intent) or
// 2×step+1 (outcome), with the progress, and notes a finished one.
func (r *agentRun) record(ctx context.Context, rec agentRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	idx, msg := 2*rec.Step, fmt.Sprintf("step %d: %s", rec.Step+1, describeAction(rec.Action))
	if rec.Phase == "done" {
		idx++
		msg += " — " + rec.Outcome
	}
	it := engine.Item{Index: idx, Key: fmt.Sprintf("step %d %s", rec.Step, rec.Phase), Status: engine.ItemSucceeded, Output: raw}
	done := rec.Step
	if rec.Phase == "done" {
		done++
	}
	if err := r.env.Checkpoint(ctx, it, engine.Progress{DoneSteps: done, TotalSteps: r.in.MaxSteps, Message: agentCut(msg, 300)}); err != nil {
		return err
	}
	if rec.Phase == "done" {
		r.step = rec.Step + 1
		r.note(rec)
	}
	return nil
}

// heading is the text of the page's first h1 or h2 (cut to 200 bytes),
// once the page has loaded: what tells a replay it reached the page an
// action led to. "" when there is none.
func (r *agentRun) heading(ctx context.Context) string {
	hctx, cancel := context.WithTimeout(ctx, agentWait)
	defer cancel()
	raw, err := r.tb.WaitValue(hctx, `new Promise(ok => { const f = () => { const h = document.querySelector('h1, h2'); ok(h ? h.innerText.replace(/\s+/g, ' ').trim().slice(0, 200) : ''); }; document.readyState === 'complete' ? f() : addEventListener('load', f); })`)
	if err != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// checkNavigate holds a navigate action to the URL policy and
// allowedHosts.
func (r *agentRun) checkNavigate(u string) error {
	if err := checkURL(u, "url", urlPolicy(r.t.b, r.env.Profile())); err != nil {
		return err
	}
	if !r.in.hostAllowed(u) {
		return engine.Errorf(engine.InvalidParameter, "url: %s is not on inputs.allowedHosts", u)
	}
	return nil
}

// perform does the action on the tab and says what happened in words.
func (r *agentRun) perform(ctx context.Context, a agent.Action, step int) (string, error) {
	page := r.tb.Page()
	byRef := func(action, value string) error {
		return r.navigating(ctx, func() error {
			return pagetools.Settle(ctx, page, func() error { return snapshot.Act(ctx, page, r.refs, a.Ref, action, value) })
		})
	}
	switch a.Action {
	case agent.Navigate:
		lp, fatal := loadPage(ctx, r.tb, a.URL, "load", defaultPerPageTimeoutMs)
		if fatal != nil {
			return "", fatal
		}
		if lp.failure != nil {
			return "", lp.failure
		}
		return "loaded", nil
	case agent.Click:
		return "clicked", byRef("click", "")
	case agent.Fill:
		return "filled", byRef("fill", a.Value)
	case agent.Select:
		return "selected", byRef("select", a.Value)
	case agent.Press:
		err := r.navigating(ctx, func() error {
			return pagetools.Settle(ctx, page, func() error {
				if a.Ref != "" {
					if err := snapshot.Act(ctx, page, r.refs, a.Ref, "press", ""); err != nil {
						return err
					}
				}
				return r.tb.Press(ctx, a.Value)
			})
		})
		return "pressed", err
	case agent.Wait:
		return "appeared", r.tb.WaitText(ctx, a.Text, agentWait)
	case agent.AskPerson:
		return r.askPerson(ctx, a, step)
	case agent.Screenshot:
		return r.screenshot(ctx, step)
	}
	return "", engine.Errorf(engine.InvalidParameter, "unknown action %q", a.Action)
}

// agentNavWait bounds how long an action expected to load a page (a
// link, a form's submit button, Enter in a form's field) waits for the
// new document: a form a script handles never loads one.
const agentNavWait = 5 * time.Second

// navigating runs action and, when r.expectNav says it should load a
// page, waits until the main frame committed a new document (or
// agentNavWait passed): a form's submission is queued by the page, so
// the action's own answer comes before the navigation starts, and a
// snapshot taken then would show the page being left.
func (r *agentRun) navigating(ctx context.Context, action func() error) error {
	if !r.expectNav {
		return action()
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	page := r.tb.Page()
	committed := make(chan struct{}, 1)
	wait := page.Context(wctx).EachEvent(func(e *proto.PageFrameNavigated) {
		if e.Frame.ParentID == "" {
			select {
			case committed <- struct{}{}:
			default:
			}
		}
	})
	engine.Go(wctx, nil, "agent_task.navigating", wait, nil)
	if err := action(); err != nil {
		return err
	}
	t := time.NewTimer(agentNavWait)
	defer t.Stop()
	select {
	case <-committed:
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// screenshot takes the viewport as PNG for the model's next turn and
// keeps it as the run's artifact step-N.png (what the model saw).
func (r *agentRun) screenshot(ctx context.Context, step int) (string, error) {
	png, err := captureWithin(ctx, func(ctx context.Context) ([]byte, error) {
		return r.tb.Screenshot(ctx, browser.ScreenshotOptions{})
	}, "screenshot", "", "perPageTimeoutMs", defaultPerPageTimeoutMs)
	if err != nil {
		return "", err
	}
	id, err := r.env.PutArtifact(ctx, fmt.Sprintf("step-%d.png", step), "image/png", png)
	if err != nil {
		return "", err
	}
	r.image = png
	return "taken (artifact " + id + "); shown with the next snapshot", nil
}

// askPerson asks the person what the model asked: a takeover of the
// browser, a value typed into a field (a secret one never reaches the
// model), or a plain answer the model reads.
//
// The question's requestId is the step and a hash of what is asked: a run
// resumed while waiting that asks the same again keeps the answer given,
// and a different question at that step is not answered by it.
func (r *agentRun) askPerson(ctx context.Context, a agent.Action, step int) (string, error) {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%t|%t|%s", a.Takeover, a.Secret, a.Question)))
	id := fmt.Sprintf("agent-%d-%s", step, hex.EncodeToString(sum[:3]))
	if a.Takeover {
		_ = r.tb.BringToFront(ctx)
		err := engine.AskTakeover(ctx, r.env, id, a.Question)
		if errors.Is(err, engine.ErrDeclined) {
			return "", declinedErr{msg: "the person declined the takeover"}
		}
		if err != nil {
			return "", err
		}
		return "the person took over and pressed Done", nil
	}
	kind := engine.QuestionText
	if a.Secret {
		kind = engine.QuestionSecret
	}
	v, err := engine.AskText(ctx, r.env, id, kind, a.Question)
	if errors.Is(err, engine.ErrDeclined) {
		return "", declinedErr{msg: "the person declined to answer " + fmt.Sprintf("%q", a.Question)}
	}
	if err != nil {
		return "", err
	}
	if a.Ref == "" {
		return fmt.Sprintf("the person answered %q", agentCut(v, 500)), nil
	}
	page := r.tb.Page()
	if err := snapshot.Act(ctx, page, r.refs, a.Ref, "fill", v); err != nil {
		return "", err
	}
	if a.Secret {
		return "the person's secret answer was typed into " + a.Ref, nil
	}
	return fmt.Sprintf("the person's answer %q was typed into %s", agentCut(v, 200), a.Ref), nil
}

package templates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// stepArtifact is one screenshot or PDF a step produced.
type stepArtifact struct {
	Name       string `json:"name"`
	ArtifactID string `json:"artifactId"`
	MimeType   string `json:"mimeType"`
	StepIndex  int    `json:"stepIndex"`
}

// stepsRun is one execution of run_steps.
type stepsRun struct {
	env       engine.Env
	in        *stepsInputs
	tb        *browser.Tab
	values    map[string]any
	artifacts []stepArtifact
}

// Run executes the steps in one tab. Errors: the failing step's error with
// details.stepIndex and details.action (ELEMENT_NOT_FOUND,
// NAVIGATION_TIMEOUT, STEP_EXECUTION_FAILED, PAGE_CRASHED,
// TRUST_LEVEL_NOT_ALLOWED, INVALID_PARAMETER), SESSION_NOT_FOUND,
// EXECUTION_ERROR, ctx's cause.
func (t *RunSteps) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseStepsInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	tb, err := openTab(ctx, t.b, env, "run_steps")
	if err != nil {
		return nil, err
	}
	defer tb.Release(true)
	r := &stepsRun{env: env, in: in, tb: tb, values: map[string]any{}, artifacts: []stepArtifact{}}
	// Progress counts opening startUrl as a step, then each step. Every
	// step is an item checkpoint, which records the progress with it:
	// SetProgress alone is throttled by the engine, which dropped the last
	// steps of a quick run (a 2-step run ended at 1/3, not 3/3).
	total, opened := len(in.Steps), 0
	if in.StartURL != "" {
		total, opened = total+1, 1
	}
	vp := viewport{Width: defaultViewportWidth, Height: defaultViewportHeight}
	if in.Viewport != nil {
		vp = *in.Viewport
	}
	if err := tb.SetViewport(ctx, vp.Width, vp.Height); err != nil {
		return nil, stopErr(ctx, err)
	}
	if in.StartURL != "" {
		if err := r.navigate(ctx, in.StartURL, "", 0); err != nil {
			return nil, stopErr(ctx, stepError(err, -1, "navigate"))
		}
		env.SetProgress(engine.Progress{DoneSteps: opened, TotalSteps: total, Message: "opened startUrl"})
	}
	for i, st := range in.Steps {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		err := r.do(ctx, i, st)
		if err == nil {
			err = tb.Blocked()
		}
		if err != nil {
			serr := stepError(err, i, st.Action)
			if ctx.Err() == nil {
				// The failed step is the run's last item (best effort: the
				// run ends with the step's error either way).
				p := engine.Progress{DoneSteps: opened + i + 1, FailedSteps: 1, TotalSteps: total,
					Message: fmt.Sprintf("step %d/%d %s failed", i+1, len(in.Steps), st.Action)}
				_ = env.Checkpoint(ctx, r.stepItem(i, st, engine.AsError(serr)), p)
			}
			return nil, stopErr(ctx, serr)
		}
		p := engine.Progress{DoneSteps: opened + i + 1, TotalSteps: total, Message: fmt.Sprintf("step %d/%d %s done", i+1, len(in.Steps), st.Action)}
		if err := env.Checkpoint(ctx, r.stepItem(i, st, nil), p); err != nil {
			return nil, stopErr(ctx, err)
		}
	}
	var page struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	if raw, err := tb.Eval(ctx, `({url: location.href, title: document.title || ''})`); err == nil {
		_ = json.Unmarshal(raw, &page)
	}
	return &engine.Outcome{Result: map[string]any{"values": r.values, "artifacts": r.artifacts,
		"finalUrl": page.URL, "title": page.Title, "steps": len(in.Steps)}}, nil
}

// stepItem is step i as an item checkpoint: key "step N action", output
// its action, the URL of a navigate step and the artifactId of a
// screenshot or pdf step; failed with err when err is not nil. Nothing
// typed or answered is in it.
func (r *stepsRun) stepItem(i int, st step, err *engine.Error) engine.Item {
	out := map[string]any{"action": st.Action}
	if st.Action == "navigate" {
		out["url"] = st.URL
	}
	if n := len(r.artifacts); n > 0 && r.artifacts[n-1].StepIndex == i {
		out["artifactId"] = r.artifacts[n-1].ArtifactID
	}
	raw, _ := json.Marshal(out)
	it := engine.Item{Index: i, Key: fmt.Sprintf("step %d %s", i, st.Action), Status: engine.ItemSucceeded, Output: raw}
	if err != nil {
		it.Status, it.Error = engine.ItemFailed, err
	}
	return it
}

// stepError returns a copy of err as a domain error carrying the step's
// index and action in details.
func stepError(err error, i int, action string) error {
	e := engine.AsError(err)
	c := *e
	c.Details = map[string]any{}
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details["stepIndex"], c.Details["action"] = i, action
	if i >= 0 {
		c.Message = fmt.Sprintf("step %d (%s): %s", i, action, e.Message)
	} else {
		c.Message = "startUrl: " + e.Message
	}
	return &c
}

// navigate loads u within timeoutMs (0 = navigationTimeoutMs). HTTP >= 400
// fails the step.
func (r *stepsRun) navigate(ctx context.Context, u, waitFor string, timeoutMs int) error {
	if timeoutMs <= 0 {
		timeoutMs = r.in.NavigationTimeoutMs
	}
	if waitFor == "" {
		waitFor = browser.WaitLoad
	}
	lp, fatal := loadPage(ctx, r.tb, u, waitFor, timeoutMs)
	if fatal != nil {
		return fatal
	}
	if lp.failure != nil {
		return lp.failure
	}
	return nil
}

// do runs one step.
func (r *stepsRun) do(ctx context.Context, i int, st step) error {
	tb := r.tb
	wait := time.Duration(st.TimeoutMs) * time.Millisecond
	switch st.Action {
	case "navigate":
		return r.navigate(ctx, st.URL, st.WaitFor, st.TimeoutMs)
	case "click":
		if err := tb.Click(ctx, st.Selector, wait); err != nil {
			return err
		}
		r.front(ctx)
		return nil
	case "type":
		if st.Secret {
			return tb.TypeSecret(ctx, st.Selector, st.Text, wait)
		}
		return tb.Type(ctx, st.Selector, st.Text, wait)
	case "press":
		if err := tb.Press(ctx, st.Key); err != nil {
			return err
		}
		r.front(ctx)
		return nil
	case "select":
		return tb.Select(ctx, st.Selector, st.Value, wait)
	case "wait_for":
		if st.Selector != "" {
			return tb.WaitSelector(ctx, st.Selector, wait)
		}
		return tb.WaitText(ctx, st.Text, wait)
	case "scroll":
		return r.scroll(ctx, st, wait)
	case "extract":
		return r.extract(ctx, st, wait)
	case "screenshot":
		return r.capture(ctx, i, st.Name, "screenshot", "png", "image/png", func(ctx context.Context) ([]byte, error) {
			return tb.Screenshot(ctx, browser.ScreenshotOptions{FullPage: st.FullPage})
		})
	case "pdf":
		return r.capture(ctx, i, st.Name, "PDF", "pdf", "application/pdf", func(ctx context.Context) ([]byte, error) {
			return tb.PDF(ctx, browser.PDFOptions{})
		})
	case "ask":
		return r.ask(ctx, i, st, wait)
	case "confirm":
		yes, err := engine.AskConfirm(ctx, r.env, stepRequestID(i), st.Message)
		if err != nil {
			return err
		}
		if !yes {
			return declined("the person answered no to %q; the steps after it did not run", st.Message)
		}
		return nil
	case "takeover":
		return r.takeover(ctx, i, st)
	case "evaluate":
		if netpolicy.IsRestricted(r.env.Profile().TrustLevel) {
			return engine.Errorf(engine.TrustLevelNotAllowed, "evaluate needs trust level local; this server runs restricted")
		}
		raw, err := tb.Eval(ctx, st.Script)
		if err != nil {
			return err
		}
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("step%d", i)
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		r.values[name] = v
		return nil
	}
	return engine.Errorf(engine.InvalidParameter, "unknown action %q", st.Action)
}

// stepRequestID is the requestId of the question step i asks: the same
// for every execution of the step, so a run asked again (resumed) asks the
// same question and keeps its stored answer.
func stepRequestID(i int) string { return fmt.Sprintf("step-%d", i) }

// declined is the error of an ask step the person declined or a confirm
// step answered no: STEP_EXECUTION_FAILED with details.reason "declined".
func declined(format, message string) error {
	return engine.Errorf(engine.StepExecutionFailed, format, message).
		WithDetails(map[string]any{"reason": "declined"})
}

// ask waits for the step's element (so nobody is asked for a value the
// page has no place for), asks the person (a secret question when
// st.Secret: the engine masks the answer from then on) and types the
// answer into the element as a type step does.
func (r *stepsRun) ask(ctx context.Context, i int, st step, wait time.Duration) error {
	if err := r.tb.WaitSelector(ctx, st.Selector, wait); err != nil {
		return err
	}
	kind := engine.QuestionText
	if st.Secret {
		kind = engine.QuestionSecret
	}
	v, err := engine.AskText(ctx, r.env, stepRequestID(i), kind, st.Message)
	if errors.Is(err, engine.ErrDeclined) {
		return declined("the person declined to answer %q; the steps after it did not run", st.Message)
	}
	if err != nil {
		return err
	}
	if st.Secret {
		return r.tb.TypeSecret(ctx, st.Selector, v, wait)
	}
	return r.tb.Type(ctx, st.Selector, v, wait)
}

// takeover asks a person to act in the run's tab through the live view
// (a CAPTCHA, a consent wall) and waits until they press Done; the steps
// after it go on from wherever they left the tab.
func (r *stepsRun) takeover(ctx context.Context, i int, st step) error {
	r.front(ctx)
	err := engine.AskTakeover(ctx, r.env, stepRequestID(i), st.Message)
	switch {
	case errors.Is(err, engine.ErrDeclined):
		return declined("the person declined the takeover %q; the steps after it did not run", st.Message)
	case errors.Is(err, engine.ErrNoLiveView):
		return engine.Errorf(engine.StepExecutionFailed, "takeover %q: %v", st.Message, err).
			WithDetails(map[string]any{"reason": "no live view"})
	}
	return err
}

// front brings the run's tab to the front again after a click or a key
// press (best effort, bounded): a popup they open (a target=_blank link,
// window.open) becomes the visible tab and hides this one
// (visibilityState "hidden"), and a hidden tab stops rendering, so
// IntersectionObserver, scroll events and requestAnimationFrame stop:
// infinite scroll and lazy loading no longer worked for the rest of the
// run.
func (r *stepsRun) front(ctx context.Context) {
	c, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = r.tb.BringToFront(c)
}

// scroll scrolls to the bottom, the top or an element.
func (r *stepsRun) scroll(ctx context.Context, st step, wait time.Duration) error {
	switch st.To {
	case "bottom":
		_, err := r.tb.Eval(ctx, `(window.scrollTo(0, document.documentElement.scrollHeight), true)`)
		return err
	case "top":
		_, err := r.tb.Eval(ctx, `(window.scrollTo(0, 0), true)`)
		return err
	}
	if err := r.tb.WaitSelector(ctx, st.To, wait); err != nil {
		return err
	}
	_, err := r.tb.Eval(ctx, `(document.querySelector(`+jsonQuote(st.To)+`).scrollIntoView({block: 'center'}), true)`)
	return err
}

// extract reads text or an attribute of the first match (waiting for it)
// or of every match (all: true, no wait) into values[name].
func (r *stepsRun) extract(ctx context.Context, st step, wait time.Duration) error {
	if !st.All {
		if err := r.tb.WaitSelector(ctx, st.Selector, wait); err != nil {
			return err
		}
	}
	// The same caps as batch_extract_pages' fields (internal/extract/page/caps.go).
	cfg, _ := json.Marshal(withCaps(page.Options{Fields: map[string]page.Field{"v": {Selector: st.Selector, Attr: st.Attr, All: st.All}}}))
	raw, err := r.tb.Eval(ctx, fmt.Sprintf(extractJS, cfg))
	if err != nil {
		return err
	}
	var x page.Result
	if err := json.Unmarshal(raw, &x); err != nil {
		return engine.Wrap(engine.ExecutionError, err, "decode extracted value: %v", err)
	}
	if msg, bad := x.FieldErrors["v"]; bad {
		return engine.Errorf(engine.InvalidParameter, "invalid selector %q: %s", st.Selector, msg)
	}
	r.values[st.Name] = x.Fields["v"]
	if c, ok := x.FieldsCapped["v"]; ok {
		r.env.Logger().Warn("extract step capped", "name", st.Name, "matches", c.Matches, "kept", c.Kept, "cut", c.Cut)
	}
	return nil
}

// capture takes a screenshot or a PDF of the tab with take, bounded like a
// load (navigationTimeoutMs, see captureWithin), and stores it as the
// step's artifact name.ext.
func (r *stepsRun) capture(ctx context.Context, i int, name, what, ext, mime string, take func(context.Context) ([]byte, error)) error {
	data, err := captureWithin(ctx, take, what, "", "navigationTimeoutMs", r.in.NavigationTimeoutMs)
	if err != nil {
		return err
	}
	return r.store(ctx, i, name, name+"."+ext, mime, data)
}

// store saves a step's file as an artifact.
func (r *stepsRun) store(ctx context.Context, i int, name, file, mime string, data []byte) error {
	id, err := r.env.PutArtifact(ctx, file, mime, data)
	if err != nil {
		return err
	}
	r.artifacts = append(r.artifacts, stepArtifact{Name: name, ArtifactID: id, MimeType: mime, StepIndex: i})
	return nil
}

// jsonQuote returns v as a JSON (and JavaScript) string literal.
func jsonQuote(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}

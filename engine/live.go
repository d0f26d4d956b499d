package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Live views and takeover: the process that executes a run shows its tabs
// live on its dashboard (the browser package streams them), and a person
// may take a tab over: the run pauses, the person's input goes to the
// tab, and "Done" resumes the run where it was. A takeover is a question
// of kind QuestionTakeover: it is stored, shown and answered like any other
// (inputRequest, tasks, the dashboard), its MCP form is a URL-mode
// elicitation pointing at the live view, and while it waits the run's
// timeout clock stops.

// QuestionTakeover asks a person to act in the run's browser through the
// live view, then press Done.
const QuestionTakeover = "takeover"

// LiveTab is one tab of a running run as its live view shows it.
type LiveTab struct {
	// ID names the tab within the run (its CDP target id).
	ID    string `json:"id"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Label is the name its holder gives the tab, when it has one: the
	// interactive tools' tab id ("t1", "t2", …), which the session's
	// recorded calls name too. "" for a run's tabs.
	Label string `json:"label,omitempty"`
	// Closed is set once the tab was released; the live view then shows
	// its last frame as a still.
	Closed bool `json:"closed,omitempty"`
}

// LiveFrame is one screencast frame of a tab.
type LiveFrame struct {
	// JPEG is the frame, scaled to the viewer's size.
	JPEG []byte
	// Width and Height are the size of the page area the frame shows, in
	// CSS pixels (input coordinates are mapped through them).
	Width, Height float64
	// Seq counts the tab's frames (1 = first).
	Seq int64
}

// LiveInput is one input event of a person in a live view, in the frame's
// coordinates: X and Y are fractions (0..1) of the frame's width and
// height.
type LiveInput struct {
	// Type is one of mousemove, mousedown, mouseup, wheel, keydown, keyup,
	// text.
	Type string  `json:"type"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	// Button is left, middle or right (mouse events).
	Button string `json:"button,omitempty"`
	// Buttons is the bit mask of pressed buttons, as in DOM MouseEvent.
	Buttons int `json:"buttons,omitempty"`
	// ClickCount is 1 for a click, 2 for a double click (mousedown/up).
	ClickCount int `json:"clickCount,omitempty"`
	// DeltaX and DeltaY scroll (wheel), in CSS pixels.
	DeltaX float64 `json:"deltaX,omitempty"`
	DeltaY float64 `json:"deltaY,omitempty"`
	// Key and Code are the DOM KeyboardEvent key and code (keydown/keyup);
	// KeyCode is its legacy keyCode.
	Key     string `json:"key,omitempty"`
	Code    string `json:"code,omitempty"`
	KeyCode int    `json:"keyCode,omitempty"`
	// Text is typed as is (text).
	Text string `json:"text,omitempty"`
	// Modifiers: 1 Alt, 2 Ctrl, 4 Meta, 8 Shift (as CDP counts them).
	Modifiers int `json:"modifiers,omitempty"`
}

// Validate checks the event's type and coordinates. Errors: INVALID_PARAMETER.
func (in LiveInput) Validate() error {
	switch in.Type {
	case "mousemove", "mousedown", "mouseup", "wheel":
		if in.X < 0 || in.X > 1 || in.Y < 0 || in.Y > 1 {
			return Errorf(InvalidParameter, "input x and y must be fractions of the frame (0..1), got %g, %g", in.X, in.Y).
				WithDetails(map[string]any{"field": "x"})
		}
		switch in.Button {
		case "", "left", "middle", "right", "none":
		default:
			return Errorf(InvalidParameter, "input button must be left, middle or right, got %q", in.Button).
				WithDetails(map[string]any{"field": "button"})
		}
	case "keydown", "keyup":
		if in.Key == "" {
			return Errorf(InvalidParameter, "a %s input needs key", in.Type).WithDetails(map[string]any{"field": "key"})
		}
	case "text":
		if in.Text == "" {
			return Errorf(InvalidParameter, "a text input needs text").WithDetails(map[string]any{"field": "text"})
		}
	default:
		return Errorf(InvalidParameter, "input type must be one of mousemove, mousedown, mouseup, wheel, keydown, keyup, text; got %q", in.Type).
			WithDetails(map[string]any{"field": "type"})
	}
	return nil
}

// runIDKey carries the id of the run a context works for.
type runIDKey struct{}

// WithRunID returns ctx marked as working for run runID (the engine marks
// every run's context; the browser files the tabs a run opens under it).
func WithRunID(ctx context.Context, runID string) context.Context {
	return context.WithValue(ctx, runIDKey{}, runID)
}

// RunIDFrom returns the run ctx works for, or "".
func RunIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(runIDKey{}).(string)
	return id
}

// SetLiveBase records the base URL of this process's dashboard
// ("http://127.0.0.1:7788"), where live views and takeovers of the runs it
// executes are served; "" = none (this process serves no HTTP). Call it
// before Run: the owner row other processes read carries it.
func (e *Engine) SetLiveBase(base string) {
	base = strings.TrimRight(base, "/")
	e.liveBase.Store(&base)
}

// liveBaseURL is SetLiveBase's value ("" when unset).
func (e *Engine) liveBaseURL() string {
	if p := e.liveBase.Load(); p != nil {
		return *p
	}
	return ""
}

// LiveURL is the address of run runID's live view on base (a dashboard's
// base URL), or "" when base is "".
func LiveURL(base, runID string) string {
	if base == "" {
		return ""
	}
	return base + "/runs/" + url.PathEscape(runID) + "#live"
}

// LiveWhere says where run runID's live view is served: here (this
// process executes it), or at url by process pid (url "" when that
// process serves no dashboard). A run that is not running has none
// (ok false).
type LiveWhere struct {
	Here bool
	URL  string
	PID  int
	OK   bool
}

// LiveLocation reports where the live view of run r is served.
func (e *Engine) LiveLocation(ctx context.Context, r *Run) LiveWhere {
	if r.Status != StatusRunning || r.OwnerID == "" {
		return LiveWhere{}
	}
	if r.OwnerID == e.ownerID {
		e.mu.Lock()
		_, here := e.active[r.RunID]
		e.mu.Unlock()
		if here {
			return LiveWhere{Here: true, URL: LiveURL(e.liveBaseURL(), r.RunID), PID: os.Getpid(), OK: true}
		}
	}
	owners, err := e.store.ListOwners(ctx)
	if err != nil {
		return LiveWhere{OK: true}
	}
	for _, o := range owners {
		if o.ID == r.OwnerID {
			return LiveWhere{URL: LiveURL(o.LiveURL, r.RunID), PID: o.PID, OK: true}
		}
	}
	return LiveWhere{OK: true}
}

// takeoverRequest is the MCP form of a takeover: a URL-mode
// elicitation/create request pointing at the live view.
func takeoverRequest(requestID, message, liveURL string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":          "url",
			"message":       message,
			"url":           liveURL,
			"elicitationId": requestID,
		},
	})
	return b
}

// requestURL returns the url of a URL-mode elicitation request ("" for
// any other).
func requestURL(raw json.RawMessage) string {
	var r struct {
		Params struct {
			Mode string `json:"mode"`
			URL  string `json:"url"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Params.Mode != "url" {
		return ""
	}
	return r.Params.URL
}

// ErrNoLiveView is returned by AskTakeover when this process serves no
// dashboard, so nobody could take over.
var ErrNoLiveView = errors.New("this process serves no dashboard, so nobody can take over its browser: submit the run to `browsertask serve` or `browsertask mcp` (they serve the live view)")

// AskTakeover asks a person to take over the run's browser in the live
// view and press Done, and returns once they did. Errors: ErrNoLiveView,
// ErrDeclined (the person or their client declined), RUN_TIMEOUT "no
// answer", the context's.
func AskTakeover(ctx context.Context, env Env, requestID, message string) error {
	v, ok := env.(*runEnv)
	if !ok {
		return fmt.Errorf("AskTakeover needs the engine's run environment")
	}
	u := LiveURL(v.e.liveBaseURL(), v.run.RunID)
	if u == "" {
		return ErrNoLiveView
	}
	raw, err := env.Ask(ctx, Question{RequestID: requestID, Kind: QuestionTakeover, Message: message, Request: takeoverRequest(requestID, message, u)})
	if err != nil {
		return err
	}
	var res elicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return Errorf(ExecutionError, "the answer to %q is not an elicitation result", message)
	}
	if res.Action != "accept" {
		return ErrDeclined
	}
	return nil
}

// TakeOver lets a person take over run runID's browser now, on their own
// initiative (the live view's "Take over" button): a takeover question
// (requestId "takeover") is asked on the run's behalf, so the run shows
// it, its clock stops, and input is accepted; hold pauses the run's
// browser work and its returned release function is called when the
// person presses Done (or the question ends otherwise). A takeover
// already open is returned as is. Errors: RUN_NOT_FOUND; INVALID_PARAMETER
// when the run is not running in this process.
func (e *Engine) TakeOver(ctx context.Context, runID string, hold func() (release func())) (*WaitingQuestion, error) {
	r, err := e.Get(ctx, runID)
	if err != nil {
		return nil, err
	}
	pending, err := e.PendingQuestions(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, q := range pending {
		if q.Kind == QuestionTakeover {
			return q.Waiting(), nil
		}
	}
	e.mu.Lock()
	a := e.active[runID]
	e.mu.Unlock()
	if r.Status != StatusRunning || a == nil || a.env == nil {
		return nil, Errorf(InvalidParameter, "run %s is not running in this process: take it over on the dashboard of the process that runs it", runID).
			WithDetails(map[string]any{"field": "runId"})
	}
	requestID := fmt.Sprintf("takeover-%d", e.now())
	msg := "A person took over the browser in the live view; the run goes on when they press Done."
	u := LiveURL(e.liveBaseURL(), runID)
	asked := make(chan error, 1)
	Go(a.ctx, e.log, "engine.takeover.ask", func() {
		release := hold()
		defer release()
		q := Question{RequestID: requestID, Kind: QuestionTakeover, Message: msg, Request: takeoverRequest(requestID, msg, u)}
		_, _ = a.env.ask(a.ctx, q, func(err error) { asked <- err })
	}, func(p *Panic) {
		select {
		case asked <- InternalError(p):
		default: // ask already answered
		}
	})
	select {
	case err := <-asked:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &WaitingQuestion{RequestID: requestID, Kind: QuestionTakeover, Message: msg, URL: u}, nil
}

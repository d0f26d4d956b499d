package pagetools

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/snapshot"
	"github.com/browsertask/browsertask/mcp"
)

// Budget: a snapshot's default and largest maxTokens. 12 000 tokens
// (about 48 KB) keeps an answer inside the default inline budget (64 KiB,
// maxInlineBytes) with room for its JSON; 16 000 is that budget itself.
const (
	defaultMaxTokens = 12000
	maxMaxTokens     = 16000
)

// Tools is the plugin that adds browser_navigate, browser_snapshot,
// browser_act, browser_wait and browser_screenshot.
type Tools struct {
	pages *pages
	files fileConfig
}

var _ mcp.Plugin = (*Tools)(nil)

// New returns the tools, driving pages of browsers' sessions that sessions
// lists as open.
func New(sessions Sessions, browsers Browsers) *Tools {
	return &Tools{pages: &pages{sessions: sessions, browsers: browsers, bySess: map[string]*page{}}}
}

// Capabilities declares nothing beyond the server's tools.
func (*Tools) Capabilities(*sdk.ServerCapabilities) {}

// RunAnswer is nil for every run: these tools start none.
func (*Tools) RunAnswer(*engine.Run) (*sdk.CallToolResult, *jsonrpc.Error) { return nil, nil }

// args are every tool's arguments (each reads its own).
type args struct {
	SessionID   string   `json:"sessionId"`
	URL         string   `json:"url"`
	Ref         string   `json:"ref"`
	Action      string   `json:"action"`
	Value       string   `json:"value"`
	MaxTokens   *int     `json:"maxTokens"`
	Text        string   `json:"text"`
	TimeoutMs   int      `json:"timeoutMs"`
	From        int      `json:"from"`
	ChangedOnly bool     `json:"changedOnly"`
	Expand      []string `json:"expand"`
	FullPage    bool     `json:"fullPage"`
	fileArgs
	// Tab, Target, Since, Limit and Level: browser_tabs, browser_act's
	// drag and browser_console (tabs_tool.go, console_tool.go).
	Tab    string `json:"tab"`
	Target string `json:"target"`
	Since  *int64 `json:"since"`
	Limit  int    `json:"limit"`
	Level  string `json:"level"`
	// refLine and secret are what browser_act noted of its element for
	// the call's session event (events.go).
	refLine string
	secret  bool
}

type tool struct {
	name, description string
	props, output     map[string]any
	readOnly          bool
	run               func(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error)
}

// Install registers the tools on srv.
func (t *Tools) Install(srv *sdk.Server, _ *mcp.PluginHost) {
	sess := map[string]any{"type": "string", "description": "The browser session (create_browser_session)."}
	snapProps := map[string]any{
		"maxTokens":   map[string]any{"type": "integer", "minimum": 200, "maximum": maxMaxTokens, "description": "Budget of the snapshot, tokens estimated as bytes/4 (default 12000). A cut snapshot ends with the from= that reads on."},
		"from":        map[string]any{"type": "integer", "minimum": 0, "description": "Skip this many lines of the snapshot's body (the from= a cut snapshot gave)."},
		"changedOnly": map[string]any{"type": "boolean", "description": "Only the lines that changed since the last snapshot of this page (+ new, - gone)."},
		"expand":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "References of summarised lists or tables to show whole."},
	}
	integer := func(d string) map[string]any { return map[string]any{"type": "integer", "description": d} }
	snapOut := map[string]any{
		"tokens": integer("Size of the snapshot text, ceil(bytes/4)."),
		"lines":  integer("Body lines of the whole snapshot."),
		"next":   integer("Present when the snapshot was cut: pass it as from to read on."),
	}
	tools := []tool{
		{name: "browser_navigate", description: "Loads url in the session's page (one page per session, kept between calls) and answers its snapshot. " +
			"Requests are held to the server's URL policy and trust level like every run. Errors: SESSION_NOT_FOUND, URL_NOT_ALLOWED, NAVIGATION_TIMEOUT.",
			props:  merge(map[string]any{"url": map[string]any{"type": "string", "description": "The URL to load."}}, snapProps),
			output: merge(map[string]any{"status": integer("The document's HTTP status."), "url": map[string]any{"type": "string", "description": "The URL after redirects."}}, snapOut),
			run:    t.navigate},
		{name: "browser_snapshot", readOnly: true, description: "Reads the session's page as compact text made for a model: landmarks, headings, text trimmed, and every " +
			"link, button and form control with a reference (e12) to pass to browser_act. Long lists and tables are summarised (expand names them).",
			props: snapProps, output: snapOut, run: t.snapshot},
		{name: "browser_act", description: "Acts on an element of the session's page by its reference from the latest snapshot: click, hover, fill (replace the value), " +
			"type (append keystrokes), select (an option's value or label), scroll (the element into view; without ref the page: value down, up, top or bottom), " +
			"focus, press (value is the key, e.g. Enter), drag (onto the element target names). Answers what changed on the page; " +
			"a page the action loads may arrive after the answer: take browser_snapshot to see it. " +
			"Errors: INVALID_PARAMETER (unknown ref or action), STEP_EXECUTION_FAILED.",
			props: map[string]any{
				"ref":    map[string]any{"type": "string", "description": "The element's reference, such as e12."},
				"action": map[string]any{"type": "string", "enum": snapshot.Actions},
				"value":  map[string]any{"type": "string", "description": "Text for fill and type, the option for select, the key for press, the direction of a page scroll."},
				"target": map[string]any{"type": "string", "description": "For drag: the reference of the element to drop on."},
			},
			output: merge(map[string]any{"done": map[string]any{"type": "string", "description": "The action and reference done."}}, snapOut),
			run:    t.act},
		{name: "browser_wait", readOnly: true, description: "Waits until the session's page shows text (in its visible text or its frames', across the navigations " +
			"an action started) and answers the page's snapshot. Use it after an action that loads a page. Errors: ELEMENT_NOT_FOUND " +
			"when the text did not appear within timeoutMs (default 10000).",
			props: merge(map[string]any{
				"text":      map[string]any{"type": "string", "minLength": 1, "description": "The text to wait for."},
				"timeoutMs": map[string]any{"type": "integer", "minimum": 1, "maximum": 60000, "description": "How long to wait (default 10000)."},
			}, snapProps),
			output: snapOut, run: t.wait},
		{name: "browser_screenshot", readOnly: true, description: "Captures the session's page as a PNG image content block: the viewport, or the whole " +
			"scrollable page with fullPage. Use it when the snapshot's text does not say enough (layout, images, canvas).",
			props:  map[string]any{"fullPage": map[string]any{"type": "boolean", "description": "The whole page instead of the viewport."}},
			output: map[string]any{"mimeType": map[string]any{"type": "string"}, "size": integer("Bytes of the image.")},
			run:    t.screenshot},
	}
	tools = append(tools, t.fileTools()...)
	tools = append(tools, t.tabTools()...)
	for _, tl := range tools {
		props := merge(map[string]any{"sessionId": sess}, tl.props)
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"sessionId"}})
		ann := &sdk.ToolAnnotations{ReadOnlyHint: tl.readOnly, OpenWorldHint: ptr(true)}
		out, _ := json.Marshal(map[string]any{"type": "object", "properties": tl.output})
		srv.AddTool(&sdk.Tool{Name: tl.name, Description: tl.description, InputSchema: json.RawMessage(schema),
			OutputSchema: json.RawMessage(out), Annotations: ann},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var a args
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
						return fail(engine.Errorf(engine.InvalidParameter, "arguments: %v", err)), nil
					}
				}
				p, err := t.pages.get(ctx, a.SessionID)
				if err != nil {
					return fail(err), nil
				}
				defer p.mu.Unlock()
				start := time.Now()
				cctx, stop := ctx, func() {}
				if tl.name != "browser_tabs" { // which closes and switches tabs itself
					cctx, stop = p.bound(ctx)
				}
				res, err := tl.run(cctx, p, &a)
				stop()
				if err != nil {
					if closed, ok := p.closedUnder(ctx); ok {
						res, err = closed, nil
					}
				}
				t.record(ctx, p, tl.name, &a, start, err)
				if err != nil {
					p.failed(err)
					return withNotes(fail(err), p), nil
				}
				p.notes = append(p.notes, p.sync(ctx, p.sess)...)
				return withNotes(res, p), nil
			})
	}
}

func (t *Tools) navigate(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	if strings.TrimSpace(a.URL) == "" {
		return nil, &engine.Error{Code: engine.InvalidParameter, Message: "url is required", Recovery: "pass the URL to load, such as https://example.com/"}
	}
	if err := t.checkURL(a.URL); err != nil {
		return nil, err
	}
	nav, err := p.tab.Navigate(ctx, a.URL, "load")
	if err != nil {
		return nil, err
	}
	return t.snapshotAnswer(ctx, p, a, map[string]any{"status": nav.Status, "url": nav.FinalURL})
}

// checkURL holds url to the URL policy before the page loads it, as
// run_task_template holds a run's URLs at submission: the same codes
// (INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED) naming the field. The tab's
// interception still holds every request the page then makes.
func (t *Tools) checkURL(u string) error {
	if e := engine.AsError(engine.CheckURL(u, t.pages.browsers.Policy())); e != nil {
		e.Message = "url: " + e.Message
		return e.WithDetails(map[string]any{"field": "url"})
	}
	return nil
}

func (t *Tools) snapshot(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	return t.snapshotAnswer(ctx, p, a, map[string]any{})
}

func (t *Tools) act(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	value := a.Value
	switch {
	case a.Action == "scroll" && strings.TrimSpace(a.Ref) == "":
		return t.scrollPage(ctx, p, a)
	case a.Action == "drag":
		value = a.Target
	}
	noteTarget(ctx, p, a)
	p.noteSecret(ctx, a)
	err := settle(ctx, p.tab.Page(), func() error {
		if err := snapshot.Act(ctx, p.tab.Page(), p.refs, a.Ref, a.Action, value); err != nil {
			return err
		}
		if a.Action == "press" {
			return p.tab.Press(ctx, a.Value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.ChangedOnly = true
	return t.snapshotAnswer(ctx, p, a, map[string]any{"done": a.Action + " " + a.Ref})
}

func (t *Tools) wait(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	if a.Text == "" {
		return nil, engine.Errorf(engine.InvalidParameter, "text is required: the text to wait for").WithDetails(map[string]any{"field": "text"})
	}
	if a.TimeoutMs < 0 || a.TimeoutMs > 60000 {
		return nil, engine.Errorf(engine.InvalidParameter, "timeoutMs must be from 1 to 60000").WithDetails(map[string]any{"field": "timeoutMs"})
	}
	if err := waitText(ctx, p, a.Text, time.Duration(a.TimeoutMs)*time.Millisecond); err != nil {
		return nil, err
	}
	return t.snapshotAnswer(ctx, p, a, map[string]any{})
}

func (t *Tools) screenshot(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	png, err := p.tab.Screenshot(ctx, browser.ScreenshotOptions{FullPage: a.FullPage})
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(map[string]any{"mimeType": "image/png", "size": len(png)})
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: png, MIMEType: "image/png"}}, StructuredContent: json.RawMessage(b)}, nil
}

// snapshotAnswer takes the page's snapshot under the call's budget and
// answers it as text, with {tokens, lines, next} and extra as the
// structured content.
func (t *Tools) snapshotAnswer(ctx context.Context, p *page, a *args, extra map[string]any) (*sdk.CallToolResult, error) {
	budget := defaultMaxTokens
	if a.MaxTokens != nil {
		if *a.MaxTokens < 200 || *a.MaxTokens > maxMaxTokens {
			return nil, engine.Errorf(engine.InvalidParameter, "maxTokens must be from 200 to %d", maxMaxTokens).
				WithDetails(map[string]any{"field": "maxTokens"})
		}
		budget = *a.MaxTokens
	}
	snap, err := snapshot.Take(ctx, p.tab.Page(), p.refs, snapshot.Options{MaxTokens: budget, From: a.From, ChangedOnly: a.ChangedOnly, Expand: a.Expand})
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "read the page: %v", err)
	}
	extra["tokens"], extra["lines"] = snap.Tokens, snap.Lines
	if snap.Next > 0 {
		extra["next"] = snap.Next
	}
	b, _ := json.Marshal(extra)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: snap.Text}}, StructuredContent: json.RawMessage(b)}, nil
}

// fail is the contract's error result: isError, {errorCode, message, recovery}.
func fail(err error) *sdk.CallToolResult {
	e := engine.AsError(err)
	b, _ := json.Marshal(e)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b), IsError: true}
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func ptr[T any](v T) *T { return &v }

package templates

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// RunSteps is the run_steps template: a scripted flow of browser steps in
// one tab (click, type, extract, screenshot…).
type RunSteps struct {
	b *browser.Manager
}

var (
	_ engine.Template     = (*RunSteps)(nil)
	_ engine.SecretInputs = (*RunSteps)(nil)
)

// NewRunSteps returns the template, working in the run's session of b.
func NewRunSteps(b *browser.Manager) engine.Template { return &RunSteps{b: b} }

// step is one entry of inputs.steps (fields by action).
type step struct {
	Action    string `json:"action"`
	URL       string `json:"url,omitempty"`
	WaitFor   string `json:"waitFor,omitempty"`
	Selector  string `json:"selector,omitempty"`
	Text      string `json:"text,omitempty"`
	Secret    bool   `json:"secret,omitempty"`
	Key       string `json:"key,omitempty"`
	Value     string `json:"value,omitempty"`
	To        string `json:"to,omitempty"`
	Name      string `json:"name,omitempty"`
	Attr      string `json:"attr,omitempty"`
	All       bool   `json:"all,omitempty"`
	FullPage  bool   `json:"fullPage,omitempty"`
	Script    string `json:"script,omitempty"`
	Message   string `json:"message,omitempty"`
	TimeoutMs int    `json:"timeoutMs,omitempty"`
}

// stepsInputs are run_steps' validated inputs.
type stepsInputs struct {
	StartURL            string    `json:"startUrl"`
	Steps               []step    `json:"steps"`
	Viewport            *viewport `json:"viewport"`
	NavigationTimeoutMs int       `json:"navigationTimeoutMs"`
}

// Info describes the template.
func (t *RunSteps) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "run_steps", Version: 1, Versions: []int{1},
		Title: "Run a scripted browser flow",
		Description: "Runs a list of steps in one tab, optionally after opening startUrl: navigate{url}, " +
			"click{selector}, type{selector, text, secret?} (replaces the value; secret masks it as *** everywhere), " +
			"press{key}, select{selector, value}, wait_for{selector | text}, scroll{to: bottom|top|selector}, " +
			"extract{name, selector, attr?, all?}, screenshot{name, fullPage?}, pdf{name}, evaluate{script, name?} " +
			"(trust level local only), ask{message, selector, secret?} (waits for the element, asks the person " +
			"message, then types the answer into selector like type; secret: true asks for a secret, masked as *** " +
			"everywhere), confirm{message} (asks the person a yes/no question; no ends the run) and takeover{message} " +
			"(a person acts in the run's browser through the dashboard's live view — a CAPTCHA, a consent wall — and " +
			"presses Done; inputRequest.url is the live view to open). Element steps " +
			"wait up to timeoutMs (default 5000) for their element. While ask, confirm or takeover waits for the answer the run " +
			"stays running with an inputRequest (answer with answer_task_run or the client's form; never invent an " +
			"answer), and the wait does not count against the run's options.timeoutMs. " +
			"Use it for forms, clicks and multi-page flows; with a sessionId it continues a logged-in session. " +
			"The answer of a finished run shows its first 3 screenshots as image content (downscaled JPEG) and links " +
			"every artifact. " +
			"The result has the extracted/evaluated values by name and the artifact ids of screenshots and PDFs. " +
			"The first failing step fails the run; its error has details.stepIndex (0-based; -1 = startUrl) and " +
			"details.action: ELEMENT_NOT_FOUND, NAVIGATION_TIMEOUT, STEP_EXECUTION_FAILED, PAGE_CRASHED, " +
			"TRUST_LEVEL_NOT_ALLOWED; a declined ask or takeover or a no to confirm is STEP_EXECUTION_FAILED with " +
			"details.reason \"declined\" (the steps after it never run); no answer in time is RUN_TIMEOUT with " +
			"details.reason \"no answer\". Not resumable.",
		InputSchema: json.RawMessage(runStepsInputSchema()), ResultSchema: json.RawMessage(runStepsResultSchema),
		TrustLevel: "any", Resumable: false, NeedsBrowser: true,
		EstimatedStepsHint: "one step per entry of steps (+1 for startUrl)",
		Examples: []json.RawMessage{json.RawMessage(`{"startUrl":"https://example.com/search","steps":[` +
			`{"action":"type","selector":"#q","text":"shoes"},{"action":"press","key":"Enter"},` +
			`{"action":"wait_for","selector":".result"},{"action":"extract","name":"titles","selector":".result h2","all":true},` +
			`{"action":"screenshot","name":"results"}]}`),
			json.RawMessage(`{"startUrl":"https://shop.example.com/cart","steps":[` +
				`{"action":"ask","message":"Gift card PIN?","selector":"#pin","secret":true},` +
				`{"action":"confirm","message":"Place the order for 1 × Blue mug (12.00 EUR)?"},` +
				`{"action":"click","selector":"#place-order"},{"action":"wait_for","text":"Order placed"},` +
				`{"action":"extract","name":"order","selector":"#order"}]}`)},
	}
}

func parseStepsInputs(raw json.RawMessage) (*stepsInputs, error) {
	in := &stepsInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	if in.NavigationTimeoutMs <= 0 {
		in.NavigationTimeoutMs = defaultPerPageTimeoutMs
	}
	return in, nil
}

// SecretValues returns the text of type steps marked secret.
func (t *RunSteps) SecretValues(inputs json.RawMessage) []string {
	in, err := parseStepsInputs(inputs)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range in.Steps {
		if s.Action == "type" && s.Secret && s.Text != "" {
			out = append(out, s.Text)
		}
	}
	return out
}

// Check applies the URL policy to startUrl and navigate steps, and refuses
// evaluate under trust restricted. Errors: INVALID_PARAMETER,
// TRUST_LEVEL_NOT_ALLOWED (details.stepIndex, details.action).
func (t *RunSteps) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseStepsInputs(inputs)
	if err != nil {
		return err
	}
	pol := urlPolicy(t.b, p)
	if in.StartURL != "" {
		if err := checkURL(in.StartURL, "inputs.startUrl", pol); err != nil {
			return err
		}
	}
	names := map[string]int{}
	for i, s := range in.Steps {
		field := fmt.Sprintf("inputs.steps[%d]", i)
		at := map[string]any{"stepIndex": i, "action": s.Action, "field": field}
		switch s.Action {
		case "navigate":
			if err := checkURL(s.URL, field+".url", pol); err != nil {
				return engine.AsError(err).WithDetails(at)
			}
		case "evaluate":
			if netpolicy.IsRestricted(p.TrustLevel) {
				return engine.Errorf(engine.TrustLevelNotAllowed, "%s: the evaluate step runs arbitrary JavaScript and needs trust level local; this server runs restricted", field).
					WithDetails(at)
			}
		case "press":
			if _, ok := validKey(s.Key); !ok {
				return engine.Errorf(engine.InvalidParameter, "%s.key: unknown key %q; use a single character or one of %s", field, s.Key, strings.Join(browser.KeyNames(), ", ")).
					WithDetails(at)
			}
		}
		if s.Name != "" {
			if j, dup := names[s.Name]; dup {
				return engine.Errorf(engine.InvalidParameter, "%s.name: %q is already used by step %d", field, s.Name, j).WithDetails(at)
			}
			names[s.Name] = i
		}
	}
	return nil
}

// validKey reports whether Press accepts key.
func validKey(key string) (string, bool) {
	if len([]rune(key)) == 1 {
		return key, true
	}
	for _, k := range browser.KeyNames() {
		if k == key {
			return key, true
		}
	}
	return "", false
}

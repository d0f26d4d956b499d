package templates

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
)

// AgentTask is the agent_task template, the TaskAgent path of the v1
// contract: a goal in words that the runtime's own agent carries out in a
// browser tab (internal/agent's protocol, a model from --model-url or the
// client's through sampling), answering in the caller's
// options.outputSchema with evidence per property.
//
// options.outputSchema is required (UsesOutputSchema): the contract says
// it takes effect only on this path, and an agent with no shape for its
// answer cannot be checked; a task whose answer does not matter passes
// {"type":"object"}.
type AgentTask struct {
	b     *browser.Manager
	model modelfill.Sampler
}

var _ engine.Template = (*AgentTask)(nil)

// NewAgentTask returns the template; it works in the run's session of b
// and asks model (nil: the client's model through MCP sampling, when the
// client declared it; else the run fails saying how to give one).
func NewAgentTask(b *browser.Manager, model modelfill.Sampler) engine.Template {
	return &AgentTask{b: b, model: model}
}

// Defaults and bounds of agent_task's budgets.
const (
	agentDefaultSteps    = 25
	agentMaxSteps        = 200
	agentDefaultFailures = 3
	agentDefaultRepeats  = 3
	agentDefaultTokens   = 200000
	// agentSnapshotTokens bounds the snapshot in each prompt.
	agentSnapshotTokens = 3000
	// agentAnswerRetries is how often an answer that does not validate
	// is sent back to the model before the run fails.
	agentAnswerRetries = 2
)

// Confirm modes: which actions need a person's yes first.
const (
	confirmSideEffects = "side-effects"
	confirmNever       = "never"
	confirmAlways      = "always"
)

// agentInputs are agent_task's validated inputs.
type agentInputs struct {
	Goal         string   `json:"goal"`
	StartURL     string   `json:"startUrl"`
	AllowedHosts []string `json:"allowedHosts"`
	MaxSteps     int      `json:"maxSteps"`
	Confirm      string   `json:"confirm"`
	MaxFailures  int      `json:"maxFailuresInARow"`
	MaxRepeats   int      `json:"maxRepeatedStates"`
	MaxTokens    int64    `json:"maxTokens"`
}

// parseAgentInputs decodes inputs and applies the defaults.
func parseAgentInputs(raw json.RawMessage) (*agentInputs, error) {
	in := &agentInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Goal) == "" {
		return nil, engine.Errorf(engine.InvalidParameter, "inputs.goal is empty; say in words what the task is, e.g. \"find the price of the blue mug\"").
			WithDetails(map[string]any{"field": "inputs.goal"})
	}
	if in.MaxSteps == 0 {
		in.MaxSteps = agentDefaultSteps
	}
	if in.Confirm == "" {
		in.Confirm = confirmSideEffects
	}
	if in.MaxFailures == 0 {
		in.MaxFailures = agentDefaultFailures
	}
	if in.MaxRepeats == 0 {
		in.MaxRepeats = agentDefaultRepeats
	}
	if in.MaxTokens == 0 {
		in.MaxTokens = agentDefaultTokens
	}
	for i, h := range in.AllowedHosts {
		in.AllowedHosts[i] = strings.ToLower(strings.TrimSpace(h))
	}
	return in, nil
}

// hostAllowed reports whether u's host is one the task may visit: any
// when allowedHosts is empty, else one of them or a subdomain of one.
func (in *agentInputs) hostAllowed(u string) bool {
	if len(in.AllowedHosts) == 0 {
		return true
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.ToLower(p.Hostname())
	for _, a := range in.AllowedHosts {
		if h == a || strings.HasSuffix(h, "."+a) {
			return true
		}
	}
	return false
}

// agentInputSchema is agent_task's input JSON Schema.
func agentInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["goal", "startUrl"],
  "properties": {
    "goal": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The task in words, as you would tell a person (\"sign in and read the account's balance\")."},
    "startUrl": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "The page the task starts on (absolute http(s) URL)."},
    "allowedHosts": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 253}, "description": "Hosts the agent may visit (and their subdomains); default: any the URL policy allows. startUrl's host must be one."},
    "maxSteps": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(agentMaxSteps) + `, "default": ` + strconv.Itoa(agentDefaultSteps) + `, "description": "Actions at most (asking the person and answering count); past it the run fails with details.reason \"steps\"."},
    "confirm": {"type": "string", "enum": ["side-effects", "never", "always"], "default": "side-effects", "description": "When the person is asked before an action: \"side-effects\" before a click that pays, orders, deletes, submits or confirms (by the button's name); \"always\" also before every other form submission; \"never\" not at all. A resumed run asks before repeating any side-effecting action whose outcome was not recorded, whatever this says."},
    "maxFailuresInARow": {"type": "integer", "minimum": 1, "maximum": 20, "default": ` + strconv.Itoa(agentDefaultFailures) + `, "description": "Failed actions or unreadable replies in a row before the run fails (details.reason \"failures\"); each is shown to the model."},
    "maxRepeatedStates": {"type": "integer", "minimum": 2, "maximum": 50, "default": ` + strconv.Itoa(agentDefaultRepeats) + `, "description": "How often the same page state (URL and snapshot) may be seen before the run fails as a loop (details.reason \"loop\")."},
    "maxTokens": {"type": "integer", "minimum": 1000, "maximum": 10000000, "default": ` + strconv.Itoa(agentDefaultTokens) + `, "description": "Model tokens (prompt and answer, as the model reports them, else estimated as bytes/4) before the run fails (details.reason \"tokens\")."}
  }
}`
}

// agentResultSchema is agent_task's result JSON Schema.
const agentResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["answer", "evidence", "steps", "finalUrl", "replaySteps"],
  "properties": {
    "answer": {"type": "object", "description": "The answer; it validates against options.outputSchema."},
    "evidence": {"type": "object", "description": "Per property of answer: {url, ref, text, selector}: the page and element it was read from."},
    "steps": {"type": "integer", "description": "Actions taken, all attempts."},
    "finalUrl": {"type": "string"},
    "modelCalls": {"type": "integer"},
    "replaySteps": {"type": "object", "description": "inputs of a run_steps run that does the same with no model: startUrl and steps (CSS selectors that held, the person asked again where they were, an extract step per answered property with an element)."}
  }
}`

// Info describes the template.
func (t *AgentTask) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "agent_task",
		Version:    1,
		Versions:   []int{1},
		Title:      "Carry out a task given in words in a browser, answering in your output schema",
		Description: "Requires options.outputSchema (the JSON Schema of the answer) and a model: the server's --model-url, else your client's model through MCP sampling. " +
			"From startUrl the agent observes the page (a compact snapshot with element references e12, at most 3000 tokens), asks the model for up to 5 actions " +
			"(navigate, click, fill, select, press, wait, screenshot: an image of the page with its next turn, ask_person, answer) and does them, until the model answers. " +
			"A navigation off allowedHosts is refused, and a link that leads off them is undone (the page loaded again); the model is told. " +
			"The answer must validate against the schema and give evidence (url, element) per property; an invalid one is sent back to the model twice, then the run fails with STEP_EXECUTION_FAILED. " +
			"The person is asked (input_required) when the model is stuck, for one-time codes (typed into the page, never shown to the model), to take over the browser, and before paying, ordering, deleting, submitting or confirming (confirm). " +
			"Every action is recorded before it runs and after (run items); a resumed run looks at the page again and never repeats a side-effecting action whose outcome is unknown without asking. " +
			"Budgets: maxSteps, maxFailuresInARow, maxRepeatedStates (loop detection), maxTokens. The result's replaySteps run the same task with run_steps and no model.",
		InputSchema:        json.RawMessage(agentInputSchema()),
		ResultSchema:       json.RawMessage(agentResultSchema),
		TrustLevel:         "any",
		Resumable:          true,
		NeedsBrowser:       true,
		UsesOutputSchema:   true,
		EstimatedStepsHint: "one step per action, at most maxSteps; each waits for the model",
		Examples:           []json.RawMessage{json.RawMessage(`{"goal":"Find the price of the blue mug","startUrl":"https://shop.example/","allowedHosts":["shop.example"],"maxSteps":15}`)},
	}
}

// Check applies the URL policy to startUrl and holds it to allowedHosts.
// Errors: INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED naming the field.
func (t *AgentTask) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseAgentInputs(inputs)
	if err != nil {
		return err
	}
	if err := checkURL(in.StartURL, "inputs.startUrl", urlPolicy(t.b, p)); err != nil {
		return err
	}
	if !in.hostAllowed(in.StartURL) {
		return engine.Errorf(engine.InvalidParameter, "inputs.startUrl: its host is not one of inputs.allowedHosts; add it to allowedHosts or start elsewhere").
			WithDetails(map[string]any{"field": "inputs.startUrl"})
	}
	return nil
}

var _ engine.InputsSummarizer = (*AgentTask)(nil)

// InputsSummary is the start page's host ("task at shop.example"): the
// goal is the person's words and may name things they would not list.
func (t *AgentTask) InputsSummary(inputs json.RawMessage) string {
	var in agentInputs
	if json.Unmarshal(inputs, &in) != nil || in.StartURL == "" {
		return ""
	}
	return "task at " + summaryHost(in.StartURL)
}

package templates

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/agent"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// agentRecord is one checkpoint of agent_task: the intent of step Step
// (written before the action runs) or its outcome (after). Nothing secret
// is in it: a secret answer is typed into the page, never recorded.
type agentRecord struct {
	Phase  string       `json:"phase"` // "intent" or "done"
	Step   int          `json:"step"`
	Action agent.Action `json:"action"`
	// URL is the page the action was taken on; After the page it led to.
	URL      string `json:"url"`
	After    string `json:"after,omitempty"`
	Selector string `json:"selector,omitempty"`
	Effect   string `json:"effect"`
	// Confirmed and ConfirmMessage: a person said yes to the action first.
	Confirmed      bool   `json:"confirmed,omitempty"`
	ConfirmMessage string `json:"confirmMessage,omitempty"`
	OK             bool   `json:"ok"`
	Outcome        string `json:"outcome,omitempty"`
	// WaitText is the heading of the page the action led to, when it
	// led to another (a replay waits for it).
	WaitText string `json:"waitText,omitempty"`
}

// agentRun is one execution of agent_task.
type agentRun struct {
	t      *AgentTask
	env    engine.Env
	in     *agentInputs
	tb     *browser.Tab
	refs   *snapshot.Refs
	model  modelfill.Sampler
	schema *engine.Schema
	// schemaText is options.outputSchema as the model reads it.
	schemaText string

	step    int
	history []string
	done    []agent.Done
	seen    map[string]int
	// declined holds the actions the person refused, by page, action,
	// element selector and name (agent_task_act.go).
	declined map[string]bool
	visited  map[string]bool
	failures int
	tokens   int64
	calls    int
	answers  int
	feedback string
	// lastURL is the page of the latest record (a resumed run goes back).
	lastURL string
	// interrupted is the intent of a side-effecting action an earlier
	// attempt started and did not record the outcome of.
	interrupted *agentRecord
	// expectNav says the action being done should load a page.
	expectNav bool
	// image is the screenshot the model asked for, sent with the next
	// turn only.
	image []byte
}

// Run carries out the task. Errors: STEP_EXECUTION_FAILED with
// details.reason ("steps", "loop", "failures", "tokens", "answer") when a
// budget ends it or the model cannot answer in the schema; EXECUTION_ERROR
// when there is no model; the browser's and the person's errors.
func (t *AgentTask) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseAgentInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	schema, err := engine.CompileSchema(env.OutputSchema())
	if err != nil {
		return nil, engine.Errorf(engine.InvalidParameter, "options.outputSchema: %v", err).WithDetails(map[string]any{"field": "options.outputSchema"})
	}
	model := runModel(t.model, env)
	if model == nil {
		return nil, engine.Errorf(engine.ExecutionError, "agent_task needs a model: start the server with --model-url and --model (an OpenAI-compatible endpoint), or submit the run from an MCP client that declared the sampling capability")
	}
	tb, err := openTab(ctx, t.b, env, "agent_task")
	if err != nil {
		return nil, err
	}
	defer tb.Release(false)
	if err := tb.SetViewport(ctx, defaultViewportWidth, defaultViewportHeight); err != nil {
		return nil, stopErr(ctx, err)
	}
	r := &agentRun{t: t, env: env, in: in, tb: tb, refs: snapshot.NewRefs(), model: model, schema: schema,
		schemaText: string(env.OutputSchema()), seen: map[string]int{}, visited: map[string]bool{}, declined: map[string]bool{}}
	r.resume()
	if err := r.open(ctx); err != nil {
		return nil, stopErr(ctx, err)
	}
	out, err := r.loop(ctx)
	return out, stopErr(ctx, err)
}

// goBack returns to from, the page an action left for off, a URL not on
// allowedHosts: the model is told and goes on from there.
func (r *agentRun) goBack(ctx context.Context, off, from string) error {
	lp, fatal := loadPage(ctx, r.tb, from, browser.WaitLoad, defaultPerPageTimeoutMs)
	if fatal != nil {
		return fatal
	}
	if lp.failure != nil {
		return lp.failure
	}
	r.feedback = fmt.Sprintf("the last action led to %s, which is not on inputs.allowedHosts; the page was loaded again: stay on the allowed hosts", off)
	return nil
}

// fail is the error of a run a budget or the model ended.
func agentFail(reason, format string, args ...any) error {
	return engine.Errorf(engine.StepExecutionFailed, format, args...).WithDetails(map[string]any{"reason": reason})
}

// loop observes, asks the model, acts, until an answer validates or a
// budget ends the run.
func (r *agentRun) loop(ctx context.Context) (*engine.Outcome, error) {
	for {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if r.step >= r.in.MaxSteps {
			return nil, agentFail("steps", "agent_task: %d steps (maxSteps) without an answer; raise inputs.maxSteps or narrow the goal", r.in.MaxSteps)
		}
		snap, pageURL, err := r.observe(ctx)
		if err != nil {
			return nil, err
		}
		if r.feedback == "" {
			h := agent.StateHash(pageURL, snap)
			r.seen[h]++
			if r.seen[h] > r.in.MaxRepeats {
				return nil, agentFail("loop", "agent_task: the same page state (%s) came back %d times: the task goes in circles; rephrase the goal or raise inputs.maxRepeatedStates", pageURL, r.seen[h])
			}
		}
		reply, err := r.ask(ctx, snap)
		if err != nil {
			return nil, err
		}
		if reply == nil {
			if err := r.failed(); err != nil {
				return nil, err
			}
			continue
		}
		out, err := r.act(ctx, reply, pageURL)
		if out != nil || err != nil {
			return out, err
		}
	}
}

// observe snapshots the tab (bounded by agentSnapshotTokens) and notes
// its URL as visited.
func (r *agentRun) observe(ctx context.Context) (string, string, error) {
	// A document still loading has no tree to read yet.
	lctx, cancel := context.WithTimeout(ctx, timeoutDur(defaultPerPageTimeoutMs))
	_ = r.tb.WaitJS(lctx, `new Promise(ok => document.readyState === 'complete' ? ok(true) : addEventListener('load', () => ok(true)))`)
	cancel()
	s, err := snapshot.Take(ctx, r.tb.Page(), r.refs, snapshot.Options{MaxTokens: agentSnapshotTokens})
	if err != nil {
		return "", "", engine.Wrap(engine.StepExecutionFailed, err, "agent_task: reading the page: %v", err)
	}
	info, err := r.tb.Page().Context(ctx).Info()
	if err != nil {
		return "", "", engine.Wrap(engine.StepExecutionFailed, err, "agent_task: reading the page: %v", err)
	}
	r.visited[info.URL] = true
	r.lastURL = info.URL
	return s.Text, info.URL, nil
}

// ask sends one turn to the model and parses its reply; nil (with
// r.feedback set) when the reply does not follow the protocol.
func (r *agentRun) ask(ctx context.Context, snap string) (*agent.Reply, error) {
	prompt := agent.Prompt(agent.Turn{Goal: r.in.Goal, Schema: r.schemaText, History: r.history, Snapshot: snap, Feedback: r.feedback})
	r.feedback = ""
	msg := modelfill.Message{Role: "user", Content: prompt}
	if r.image != nil {
		msg.Images = []modelfill.Image{{MimeType: "image/png", Data: r.image}}
		r.image = nil
	}
	resp, err := r.model.Sample(ctx, modelfill.SampleRequest{System: agent.System,
		Messages: []modelfill.Message{msg}, MaxTokens: 1024})
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, engine.Wrap(engine.StepExecutionFailed, err, "agent_task: asking the model: %v", err).WithDetails(map[string]any{"reason": "model"})
	}
	r.calls++
	used := resp.PromptTokens + resp.CompletionTokens
	if used == 0 {
		used = int64(snapshot.Tokens(agent.System) + snapshot.Tokens(prompt) + snapshot.Tokens(resp.Text))
	}
	r.tokens += used
	if r.tokens > r.in.MaxTokens {
		return nil, agentFail("tokens", "agent_task: the model used %d tokens, over inputs.maxTokens %d", r.tokens, r.in.MaxTokens)
	}
	reply, err := agent.Parse(resp.Text)
	if err != nil {
		r.feedback = err.Error()
		return nil, nil
	}
	if reply.Thought != "" {
		r.env.SetProgress(engine.Progress{DoneSteps: r.step, TotalSteps: r.in.MaxSteps, Message: "thinking: " + agentCut(reply.Thought, 200)})
	}
	return reply, nil
}

// failed counts a failure in a row; past the budget the run fails.
func (r *agentRun) failed() error {
	r.failures++
	if r.failures >= r.in.MaxFailures {
		return agentFail("failures", "agent_task: %d failures in a row (maxFailuresInARow), the last: %s", r.failures, r.feedback)
	}
	return nil
}

// act does the reply's actions in order, stopping at the first that fails
// or leads to another page (the model then sees the new page). It returns
// the outcome when an answer validated.
func (r *agentRun) act(ctx context.Context, reply *agent.Reply, pageURL string) (*engine.Outcome, error) {
	for i, a := range reply.Actions {
		if a.Action == agent.Answer {
			return r.answer(ctx, a)
		}
		if r.step >= r.in.MaxSteps {
			return nil, nil
		}
		err := r.do(ctx, a, pageURL)
		if err != nil {
			if ctx.Err() != nil || engine.CodeOf(err) == engine.RunTimeout {
				return nil, stopErr(ctx, err)
			}
			var d declinedErr
			if errors.As(err, &d) {
				r.feedback = d.msg
				if d.again {
					return nil, r.failed()
				}
				return nil, nil
			}
			r.feedback = fmt.Sprintf("actions[%d] %s failed: %v", i, describeAction(a), err)
			return nil, r.failed()
		}
		r.failures = 0
		if u, err := r.tb.Page().Context(ctx).Info(); err == nil && u.URL != pageURL {
			if !r.in.hostAllowed(u.URL) {
				return nil, r.goBack(ctx, u.URL, pageURL)
			}
			return nil, nil
		}
	}
	return nil, nil
}

// agentCut shortens s to n bytes at a rune boundary, marking the cut.
func agentCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// describeAction is an action in a few words, for history and messages
// (never a value typed for a secret: those are not in actions).
func describeAction(a agent.Action) string {
	switch a.Action {
	case agent.Navigate:
		return "navigate " + a.URL
	case agent.Fill, agent.Select:
		return fmt.Sprintf("%s %s = %q", a.Action, a.Ref, agentCut(a.Value, 80))
	case agent.Press:
		return strings.TrimSpace("press " + a.Value + " " + a.Ref)
	case agent.Wait:
		return fmt.Sprintf("wait for %q", agentCut(a.Text, 80))
	case agent.Screenshot:
		return "screenshot"
	case agent.AskPerson:
		return fmt.Sprintf("ask the person %q", agentCut(a.Question, 120))
	}
	return a.Action + " " + a.Ref
}

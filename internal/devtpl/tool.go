package devtpl

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// ToolJobID is the template id of ToolJob.
const ToolJobID = "dev_tool_job"

// ToolJob is the "dev_tool_job" template: the durable body of the MCP
// fixture tools that answer with a task (the conformance suite's
// slow_compute, confirm_delete, ...; internal/conformance). It sleeps sleepMs,
// then asks every question of ask at once and waits for all the answers,
// then ends: failed with rpcError in its details when one is given,
// otherwise succeeded with {tool, arguments, answers}, which the fixture
// tool renders into its CallToolResult. It never touches the browser.
type ToolJob struct{}

var _ engine.Template = ToolJob{}

// toolJobInputs are dev_tool_job's inputs.
type toolJobInputs struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	SleepMs   int             `json:"sleepMs"`
	Ask       []toolJobAsk    `json:"ask"`
	RPCError  json.RawMessage `json:"rpcError,omitempty"`
}

// toolJobAsk is one question: the request id and either its MCP input
// request, or a kind (text, secret, confirm, takeover) asked as templates
// ask a person (engine.AskText, engine.AskConfirm, engine.AskTakeover).
type toolJobAsk struct {
	RequestID string          `json:"requestId"`
	Message   string          `json:"message"`
	Request   json.RawMessage `json:"request"`
	Kind      string          `json:"kind"`
}

// Info describes dev_tool_job.
func (ToolJob) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: ToolJobID, Version: 1, Versions: []int{1},
		Title:       "Tool job (development)",
		Description: "Development template behind the MCP fixture tools that run as tasks: sleeps sleepMs, asks the questions of ask (MCP input requests, or text/secret/confirm questions for a person; all at once) and waits for their answers, then fails with rpcError or succeeds with {tool, arguments, answers}. Never touches the browser.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["tool"],"properties":{
			"tool":{"type":"string","minLength":1},
			"arguments":{},
			"sleepMs":{"type":"integer","minimum":0,"maximum":600000},
			"ask":{"type":"array","items":{"type":"object","required":["requestId"],"properties":{
				"requestId":{"type":"string","minLength":1},"message":{"type":"string"},"request":{"type":"object"},
				"kind":{"enum":["text","secret","confirm","takeover"]}},
				"oneOf":[{"required":["request"]},{"required":["kind"]}]}},
			"rpcError":{"type":"object","required":["code","message"]}}}`),
		ResultSchema: json.RawMessage(`{"type":"object"}`),
		TrustLevel:   "any",
		Resumable:    true,
		Examples:     []json.RawMessage{json.RawMessage(`{"tool":"slow_compute","sleepMs":1000}`)},
	}
}

// Check has nothing beyond the schema to check.
func (ToolJob) Check(json.RawMessage, engine.Profile) error { return nil }

// Run sleeps, asks, and ends as its inputs say.
func (ToolJob) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	var in toolJobInputs
	if err := json.Unmarshal(env.Inputs(), &in); err != nil {
		return nil, engine.Errorf(engine.InvalidParameter, "inputs: %v", err)
	}
	if in.SleepMs > 0 {
		env.SetProgress(engine.Progress{TotalSteps: 1, Message: fmt.Sprintf("%s: working for %d ms", in.Tool, in.SleepMs)})
		if err := sleep(ctx, in.SleepMs); err != nil {
			return nil, err
		}
	}
	answers, err := askAll(ctx, env, in.Ask)
	if err != nil {
		return nil, err
	}
	if len(in.RPCError) > 0 {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(in.RPCError, &e)
		return nil, engine.Errorf(engine.ExecutionError, "%s", e.Message).WithDetails(map[string]any{"jsonrpcError": in.RPCError})
	}
	return &engine.Outcome{Result: map[string]any{"tool": in.Tool, "arguments": in.Arguments, "answers": answers}}, nil
}

// askAll asks every question at once and waits for all the answers.
func askAll(ctx context.Context, env engine.Env, asks []toolJobAsk) (map[string]json.RawMessage, error) {
	answers := map[string]json.RawMessage{}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	for _, a := range asks {
		wg.Add(1)
		fail := func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if firstErr == nil {
				firstErr = err
			}
		}
		engine.Go(ctx, env.Logger(), "devtpl.ask", func() {
			resp, err := ask(ctx, env, a)
			if err != nil {
				fail(err)
			} else {
				mu.Lock()
				answers[a.RequestID] = resp
				mu.Unlock()
			}
			wg.Done()
		}, func(p *engine.Panic) { fail(engine.InternalError(p)); wg.Done() })
	}
	wg.Wait()
	return answers, firstErr
}

// ask asks one question and returns its answer: the MCP result, or
// {"value"} / {"confirm"} for a person's question.
func ask(ctx context.Context, env engine.Env, a toolJobAsk) (json.RawMessage, error) {
	switch a.Kind {
	case engine.QuestionText, engine.QuestionSecret:
		v, err := engine.AskText(ctx, env, a.RequestID, a.Kind, a.Message)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"value": v})
	case engine.QuestionConfirm:
		yes, err := engine.AskConfirm(ctx, env, a.RequestID, a.Message)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]bool{"confirm": yes})
	case engine.QuestionTakeover:
		if err := engine.AskTakeover(ctx, env, a.RequestID, a.Message); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]bool{"done": true})
	}
	return env.Ask(ctx, engine.Question{RequestID: a.RequestID, Kind: engine.QuestionMCP, Message: a.Message, Request: a.Request})
}

// sleep waits ms milliseconds or until ctx ends (its error).
func sleep(ctx context.Context, ms int) error {
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

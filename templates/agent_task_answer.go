package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/agent"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// agentEvidence is the evidence of one answered property in the result:
// the model's, with the selector of its element when it named one.
type agentEvidence struct {
	agent.Evidence
	Selector string `json:"selector,omitempty"`
}

// answer checks the model's answer: it must validate against the output
// schema and give evidence on a page the run saw for every property. A
// failing answer goes back to the model (agentAnswerRetries times), then
// the run fails with details.reason "answer".
func (r *agentRun) answer(ctx context.Context, a agent.Action) (*engine.Outcome, error) {
	problems, obj, ev := r.checkAnswer(ctx, a)
	if len(problems) > 0 {
		r.answers++
		r.feedback = "your answer was refused: " + strings.Join(problems, "; ")
		if r.answers > agentAnswerRetries {
			return nil, agentFail("answer", "agent_task: the model's answer does not hold after %d tries: %s", r.answers, strings.Join(problems, "; "))
		}
		return nil, r.failed()
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	sels := map[string]string{}
	for k, e := range ev {
		sels[k] = e.Selector
	}
	steps := agent.ReplaySteps(r.done, sels, names)
	if len(steps) == 0 {
		steps = []map[string]any{{"action": "wait_for", "selector": "body"}}
	}
	info, err := r.tb.Page().Context(ctx).Info()
	final := r.lastURL
	if err == nil {
		final = info.URL
	}
	return &engine.Outcome{Result: map[string]any{
		"answer": obj, "evidence": ev, "steps": r.step, "finalUrl": final, "modelCalls": r.calls,
		"replaySteps": map[string]any{"startUrl": r.in.StartURL, "steps": steps},
	}}, nil
}

// checkAnswer returns the problems of an answer (none: it holds), the
// answer as an object and its evidence with selectors.
func (r *agentRun) checkAnswer(ctx context.Context, a agent.Action) ([]string, map[string]any, map[string]agentEvidence) {
	var problems []string
	if err := r.schema.Validate(a.Result, "result"); err != nil {
		problems = append(problems, err.Error())
	}
	var obj map[string]any
	if err := json.Unmarshal(a.Result, &obj); err != nil {
		return append(problems, "result is not a JSON object"), nil, nil
	}
	ev := map[string]agentEvidence{}
	for k := range obj {
		e, ok := a.Evidence[k]
		if !ok || e.URL == "" {
			problems = append(problems, fmt.Sprintf("evidence.%s is missing: give the url (and ref) the value was read from", k))
			continue
		}
		if !r.visited[e.URL] {
			problems = append(problems, fmt.Sprintf("evidence.%s.url %s is not a page this task saw", k, e.URL))
			continue
		}
		out := agentEvidence{Evidence: e}
		if e.Ref != "" {
			d, err := snapshot.Describe(ctx, r.tb.Page(), r.refs, e.Ref)
			if err != nil {
				problems = append(problems, fmt.Sprintf("evidence.%s.ref: %v", k, err))
				continue
			}
			out.Selector = d.Selector
		} else if e.Text != "" && e.URL == r.lastURL {
			// Best effort: a value read from text is replayed from
			// the element that holds it, when it is on this page.
			out.Selector, _ = snapshot.SelectorOfText(ctx, r.tb.Page(), e.Text)
		}
		ev[k] = out
	}
	sort.Strings(problems)
	return problems, obj, ev
}

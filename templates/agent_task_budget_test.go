package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestAgentTaskBudgetsEndTheRun: each budget ends a run that does not
// progress with STEP_EXECUTION_FAILED and its reason, after exactly as
// many model calls as it allows; an answer that breaks the schema or
// lacks evidence is sent back (the model reads why) before the run fails.
func TestAgentTaskBudgetsEndTheRun(t *testing.T) {
	srv := fixture.New(t)
	const schema = `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`
	for _, c := range []struct {
		name   string
		inputs map[string]any
		reply  func(prompt string) string
		reason string
		calls  int
		told   string
	}{
		{"loop", map[string]any{"maxRepeatedStates": 2},
			func(string) string { return `{"action":"wait","text":"Catalog"}` }, "loop", 2, ""},
		{"failures", map[string]any{"maxFailuresInARow": 3},
			func(string) string { return `I would click the search box.` }, "failures", 3, "holds no JSON object"},
		{"steps", map[string]any{"maxSteps": 2, "maxRepeatedStates": 10},
			func(string) string { return `{"action":"wait","text":"Catalog"}` }, "steps", 2, ""},
		{"tokens", map[string]any{"maxTokens": 1000, "maxRepeatedStates": 50, "maxSteps": 200},
			func(string) string { return `{"action":"wait","text":"Catalog"}` }, "tokens", -1, ""},
		{"answer", map[string]any{"maxFailuresInARow": 10},
			func(prompt string) string {
				if strings.Contains(prompt, "refused") {
					return `{"action":"answer","result":{"n":2},"evidence":{"n":{"url":"https://elsewhere.example/"}}}`
				}
				return `{"action":"answer","result":{"n":"one"}}`
			}, "answer", 3, "not a page this task saw"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, model, prompts := agentModel(t, func(prompt, _ string) string { return c.reply(prompt) })
			in := map[string]any{"goal": "count", "startUrl": srv.URL("/agent/catalog")}
			for k, v := range c.inputs {
				in[k] = v
			}
			_, err := runAgent(t, model, newEnv(t, mustJSON(t, in)), schema)
			e := engine.AsError(err)
			if e == nil || e.Code != engine.StepExecutionFailed || e.Details["reason"] != c.reason {
				t.Fatalf("got %v (details %v), want STEP_EXECUTION_FAILED reason %s", err, detailsOf(e), c.reason)
			}
			ps := prompts()
			if c.calls < 0 {
				// The scripted model reports (len(prompt)+3)/4 + 20 tokens a
				// call: the run stops at the call that passes maxTokens.
				used, want := 0, 0
				for used <= 1000 {
					used += (len(ps[want])+3)/4 + 20
					want++
				}
				c.calls = want
			}
			if m.Calls() != c.calls {
				t.Fatalf("model calls = %d, want %d", m.Calls(), c.calls)
			}
			if c.told != "" && !strings.Contains(ps[len(ps)-1], c.told) {
				t.Fatalf("the last prompt does not tell %q:\n%s", c.told, ps[len(ps)-1])
			}
			if c.name == "answer" && (!strings.Contains(ps[1], "result.n") || !strings.Contains(ps[1], "evidence.n is missing")) {
				t.Fatalf("the second prompt does not say why the first answer was refused:\n%s", ps[1])
			}
		})
	}
}

// TestAgentTaskCheckRefusals: bad inputs are refused naming the field.
func TestAgentTaskCheckRefusals(t *testing.T) {
	tpl := NewAgentTask(nil, nil)
	p := engine.Profile{TrustLevel: "local"}
	for _, c := range []struct{ in, field, says string }{
		{`{"goal":"  ","startUrl":"https://a.example/"}`, "inputs.goal", "is empty"},
		{`{"goal":"x","startUrl":"ftp://a.example/"}`, "inputs.startUrl", "inputs.startUrl"},
		{`{"goal":"x","startUrl":"https://a.example/","allowedHosts":["b.example"]}`, "inputs.startUrl", "allowedHosts"},
	} {
		err := tpl.Check(json.RawMessage(c.in), p)
		e := engine.AsError(err)
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != c.field || !strings.Contains(e.Message, c.says) {
			t.Errorf("%s: %v (details %v), want INVALID_PARAMETER on %s saying %q", c.in, err, detailsOf(e), c.field, c.says)
		}
	}
	if err := tpl.Check(json.RawMessage(`{"goal":"x","startUrl":"https://shop.a.example/","allowedHosts":["A.example"]}`), p); err != nil {
		t.Fatalf("a subdomain of an allowed host: %v", err)
	}
}

// TestAgentTaskSchemaDefaultsAreApplied: every default agent_task's input
// schema states is the value parseAgentInputs applies.
func TestAgentTaskSchemaDefaultsAreApplied(t *testing.T) {
	in, err := parseAgentInputs(json.RawMessage(`{"goal":"x","startUrl":"https://a.example/"}`))
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]any{"maxSteps": in.MaxSteps, "confirm": in.Confirm, "maxFailuresInARow": in.MaxFailures,
		"maxRepeatedStates": in.MaxRepeats, "maxTokens": in.MaxTokens}
	var doc struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(agentInputSchema()), &doc); err != nil {
		t.Fatal(err)
	}
	for prop, v := range applied {
		b, _ := json.Marshal(v)
		if got := string(doc.Properties[prop].Default); got != string(b) {
			t.Errorf("inputs.%s: default %s in the schema, %s applied", prop, got, b)
		}
	}
}

// TestAgentTaskStaysOnAllowedHosts: a navigate to another host is refused
// and a link that leads to one is undone (the page is loaded again); the
// model is told each time and the other host never gets a page request
// from the run.
func TestAgentTaskStaysOnAllowedHosts(t *testing.T) {
	srv := fixture.New(t)
	_, model, prompts := agentModel(t, func(prompt, page string) string {
		switch {
		case strings.Contains(prompt, "not on inputs.allowedHosts; the page was loaded again"):
			return act(map[string]any{"action": "answer", "result": map[string]any{"ok": true},
				"evidence": map[string]any{"ok": map[string]any{"url": urlOf(prompt), "text": "Links"}}})
		case strings.Contains(prompt, "is not on inputs.allowedHosts"):
			return act(map[string]any{"action": "click", "ref": fixture.Ref(page, "link", "Partner site")})
		}
		return act(map[string]any{"action": "navigate", "url": "http://localhost:" + strings.Split(srv.Host(), ":")[1] + "/agent/catalog"})
	})
	env := newEnv(t, mustJSON(t, map[string]any{"goal": "x", "startUrl": srv.URL("/agent/away"), "allowedHosts": []string{"127.0.0.1"}}))
	if _, err := runAgent(t, model, env, `{"type":"object","properties":{"ok":{"type":"boolean"}}}`); err != nil {
		t.Fatal(err)
	}
	if n := srv.HostHits("localhost", "/agent/catalog"); n != 1 {
		// The click's page loads before the run sees where it went; the
		// navigate action never reached it.
		t.Fatalf("localhost /agent/catalog requests = %d, want 1 (the click's, undone)", n)
	}
	if p := prompts(); len(p) != 3 || !strings.Contains(p[1], "localhost") {
		t.Fatalf("prompts %d:\n%s", len(p), strings.Join(p, "\n----\n"))
	}
	if n := srv.Hits("/agent/away"); n != 2 {
		t.Fatalf("/agent/away loaded %d times, want 2 (start, back)", n)
	}
}

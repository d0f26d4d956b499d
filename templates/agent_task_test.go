package templates

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/agent"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// pageOf is the current page of an agent prompt: its snapshot, after
// the history (which names references of earlier pages).
func pageOf(prompt string) string {
	if i := strings.LastIndex(prompt, "Current page:\n"); i >= 0 {
		return prompt[i:]
	}
	return ""
}

// urlOf is the URL of the current page in a prompt (the snapshot's
// header: page "Title" URL).
func urlOf(prompt string) string {
	m := regexp.MustCompile(`(?m)^page "(?:[^"\\]|\\.)*" (\S+)$`).FindStringSubmatch(pageOf(prompt))
	if m == nil {
		return ""
	}
	return m[1]
}

// agentScript is a scripted model's turn: the reply for a prompt, or ""
// for a state the script does not know (the test fails).
type agentScript func(prompt, page string) string

// agentModel starts a ScriptedModel whose unknown states fail the
// test, and records every prompt.
func agentModel(t *testing.T, script agentScript) (*fixture.ScriptedModel, modelfill.Sampler, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var prompts []string
	m := fixture.NewScriptedModel(t, func(prompt string) string {
		mu.Lock()
		prompts = append(prompts, prompt)
		mu.Unlock()
		if out := script(prompt, pageOf(prompt)); out != "" {
			return out
		}
		t.Errorf("the scripted model does not know this state:\n%s", prompt)
		return `{"action":"ask_person","question":"unscripted state"}`
	})
	s, err := modelfill.NewOpenAI(modelfill.OpenAIConfig{BaseURL: m.BaseURL(), Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	return m, s, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), prompts...) }
}

// act writes one reply of the protocol.
func act(actions ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"thought": "scripted", "actions": actions})
	return string(b)
}

// runAgent checks and runs agent_task with inputs and schema in env.
func runAgent(t *testing.T, model modelfill.Sampler, env *fakeEnv, schema string) (map[string]any, error) {
	t.Helper()
	tpl := NewAgentTask(testManager(t), model)
	s, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if verr := s.Validate(env.inputs, "inputs"); verr != nil {
		t.Fatalf("inputs rejected by the schema: %v", verr)
	}
	if err := tpl.Check(env.inputs, env.profile); err != nil {
		t.Fatalf("Check: %v", err)
	}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := tpl.Run(ctx, schemaEnv{fakeEnv: env, schema: json.RawMessage(schema)})
	if err != nil {
		return nil, err
	}
	return resultOf(t, out), nil
}

// answerOf is the result's answer as JSON, for exact comparison.
func answerOf(t *testing.T, res map[string]any) string {
	t.Helper()
	return mustJSON(t, res["answer"])
}

// TestAgentTaskSignsInWithOneTimeCode: the model fills the login form by
// the snapshot's references, asks the person for the code as a secret
// typed into the code field, and answers from the members page; the code
// reaches the site once and never the model.
func TestAgentTaskSignsInWithOneTimeCode(t *testing.T) {
	srv := fixture.New(t)
	m, model, prompts := agentModel(t, func(prompt, page string) string {
		switch {
		case strings.Contains(page, "Welcome alice"):
			return act(map[string]any{"action": "answer", "result": map[string]any{"user": "alice", "secret": "members-only-42"},
				"evidence": map[string]any{"user": map[string]any{"url": urlOf(prompt), "text": "Welcome alice"},
					"secret": map[string]any{"url": urlOf(prompt), "text": "members-only-42"}}})
		case strings.Contains(page, "Enter the 6-digit code"):
			return act(map[string]any{"action": "ask_person", "question": "The one-time code we sent you?", "secret": true, "ref": fixture.RefOfRole(page, "textbox")},
				map[string]any{"action": "click", "ref": fixture.Ref(page, "button", "Verify")})
		case fixture.Ref(page, "textbox", "Username") != "":
			return act(map[string]any{"action": "fill", "ref": fixture.Ref(page, "textbox", "Username"), "value": fixture.LoginUser},
				map[string]any{"action": "fill", "ref": fixture.Ref(page, "textbox", "Password"), "value": fixture.LoginPassword},
				map[string]any{"action": "click", "ref": fixture.Ref(page, "button", "Sign in")})
		}
		return ""
	})
	env, a := askEnv(t, map[string]any{"goal": "Sign in as alice and read the members' secret", "startUrl": srv.URL("/login-otp/a")},
		elicitAccept("value", fixture.OTPCode))
	res, err := runAgent(t, model, env, `{"type":"object","required":["user","secret"],"properties":{"user":{"type":"string"},"secret":{"type":"string"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(t, res); got != `{"secret":"members-only-42","user":"alice"}` {
		t.Fatalf("answer = %s", got)
	}
	qs := a.questions()
	if len(qs) != 1 || qs[0].Kind != engine.QuestionSecret || qs[0].Message != "The one-time code we sent you?" {
		t.Fatalf("questions = %+v, want one secret question", qs)
	}
	if n := srv.OTPSubmissions(); n != 1 {
		t.Fatalf("codes submitted = %d, want 1", n)
	}
	if m.Calls() != 3 {
		t.Fatalf("model calls = %d, want 3 (login form, code page, members page)", m.Calls())
	}
	// The password the model typed is not in the run's records, and
	// the replay asks for it.
	env.mu.Lock()
	recorded := mustJSON(t, env.items)
	env.mu.Unlock()
	if strings.Contains(recorded, fixture.LoginPassword) {
		t.Fatalf("the password is in the checkpoints: %s", recorded)
	}
	if replay := mustJSON(t, res["replaySteps"]); strings.Contains(replay, fixture.LoginPassword) || !strings.Contains(replay, `"secret":true`) {
		t.Fatalf("replaySteps: %s", replay)
	}
	for _, p := range prompts() {
		if strings.Contains(p, fixture.OTPCode) {
			t.Fatalf("a prompt holds the one-time code:\n%s", p)
		}
	}
}

// TestAgentTaskSearchesAndPaginates: the model searches the catalog and
// follows "Next page" until the last, collecting every mug shown, and the
// answer holds the mugs in the catalog's order.
func TestAgentTaskSearchesAndPaginates(t *testing.T) {
	srv := fixture.New(t)
	var mugs []map[string]any
	_, model, prompts := agentModel(t, func(prompt, page string) string {
		switch {
		case strings.Contains(page, "results"):
			for _, p := range fixture.AgentProducts {
				if strings.Contains(p.Name, "mug") && strings.Contains(page, p.Name) && strings.Contains(page, p.Price) {
					var price float64
					fmt.Sscan(p.Price, &price)
					mugs = append(mugs, map[string]any{"name": p.Name, "price": price})
				}
			}
			if next := fixture.Ref(page, "link", "Next page"); next != "" {
				return act(map[string]any{"action": "click", "ref": next})
			}
			return act(map[string]any{"action": "answer", "result": map[string]any{"mugs": mugs},
				"evidence": map[string]any{"mugs": map[string]any{"url": urlOf(prompt), "text": "results"}}})
		case fixture.Ref(page, "searchbox", "Search") != "" || fixture.Ref(page, "textbox", "Search") != "":
			box := fixture.Ref(page, "searchbox", "Search") + fixture.Ref(page, "textbox", "Search")
			return act(map[string]any{"action": "fill", "ref": box, "value": "mug"},
				map[string]any{"action": "press", "ref": box, "value": "Enter"})
		}
		return ""
	})
	env := newEnv(t, mustJSON(t, map[string]any{"goal": "List every mug with its price", "startUrl": srv.URL("/agent/catalog"), "confirm": "always"}))
	res, err := runAgent(t, model, env, `{"type":"object","required":["mugs"],"properties":{"mugs":{"type":"array","minItems":1,"items":{"type":"object","required":["name","price"],"properties":{"name":{"type":"string"},"price":{"type":"number"}}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mugs":[{"name":"Blue mug","price":12},{"name":"Red mug","price":9.5},{"name":"Green mug","price":11},{"name":"Yellow mug","price":8.25},{"name":"Travel mug","price":15.75}]}`
	if got := answerOf(t, res); got != want {
		t.Fatalf("answer = %s\nwant %s", got, want)
	}
	// Three result pages read: the search, then two clicks on Next page.
	if n := srv.Hits("/agent/catalog"); n != 4 {
		t.Fatalf("catalog requests = %d, want 4 (start page, 3 result pages)", n)
	}
	// Each turn is small: the system prompt and the turn, in tokens
	// (bytes/4), stay far under the snapshot's own bound.
	for i, p := range prompts() {
		n := snapshot.Tokens(agent.System) + snapshot.Tokens(p)
		t.Logf("turn %d: %d tokens", i, n)
		if n > agentSnapshotTokens {
			t.Fatalf("turn %d is %d tokens", i, n)
		}
	}
}

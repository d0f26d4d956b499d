package templates

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

func TestRunStepsFlow(t *testing.T) {
	srv := fixture.New(t)
	env := newEnv(t, mustJSON(t, map[string]any{
		"startUrl": srv.URL("/form"),
		"steps": []map[string]any{
			{"action": "type", "selector": "#q", "text": "world"},
			{"action": "select", "selector": "#color", "value": "Blue"},
			{"action": "click", "selector": "#go"},
			{"action": "wait_for", "text": "Hello world"},
			{"action": "extract", "name": "result", "selector": "#result"},
			{"action": "extract", "name": "items", "selector": "#list li", "all": true},
			{"action": "wait_for", "selector": "#late"},
			{"action": "scroll", "to": "bottom"},
			{"action": "evaluate", "name": "scrolled", "script": "window.scrollY > 1000"},
			{"action": "type", "selector": "#q", "text": "pw-123456", "secret": true},
			{"action": "press", "key": "Enter"},
			{"action": "extract", "name": "entered", "selector": "#result"},
			{"action": "screenshot", "name": "final"},
			{"action": "click", "selector": "#home"},
			{"action": "wait_for", "selector": "#name"},
			{"action": "extract", "name": "href", "selector": "#next", "attr": "href"},
		},
	}))
	tpl := NewRunSteps(testManager(t))
	if got := tpl.(engine.SecretInputs).SecretValues(env.inputs); !reflect.DeepEqual(got, []string{"pw-123456"}) {
		t.Fatalf("SecretValues = %v", got)
	}
	out, err := runTemplate(t, tpl, env)
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, out)
	want := map[string]any{"result": "Hello world (blue)", "items": []any{"one", "two", "three"}, "scrolled": true,
		"entered": "Entered pw-123456", "href": srv.URL("/page/2")}
	if !reflect.DeepEqual(res["values"], want) {
		t.Fatalf("values = %v\nwant %v", res["values"], want)
	}
	arts := res["artifacts"].([]any)
	if len(arts) != 1 || arts[0].(map[string]any)["artifactId"] != "art_final.png" || arts[0].(map[string]any)["stepIndex"] != 12.0 {
		t.Fatalf("artifacts = %v", arts)
	}
	if png, mime := env.artifact("final.png"); mime != "image/png" || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %s", mime)
	}
	if res["finalUrl"] != srv.URL("/page/1") {
		t.Fatalf("finalUrl %v", res["finalUrl"])
	}
}

func TestRunStepsErrors(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	cases := []struct {
		name   string
		inputs map[string]any
		code   engine.ErrorCode
		step   int
		action string
	}{
		{"missing selector", map[string]any{"startUrl": srv.URL("/form"), "steps": []map[string]any{
			{"action": "click", "selector": "#go"}, {"action": "click", "selector": "#nope", "timeoutMs": 300}}},
			engine.ElementNotFound, 1, "click"},
		{"never-loading startUrl", map[string]any{"startUrl": srv.URL("/hang"), "navigationTimeoutMs": 1000,
			"steps": []map[string]any{{"action": "click", "selector": "#x"}}}, engine.NavigationTimeout, -1, "navigate"},
		{"never-loading navigate step", map[string]any{"steps": []map[string]any{
			{"action": "navigate", "url": srv.URL("/page/1")}, {"action": "navigate", "url": srv.URL("/hang"), "timeoutMs": 1000}}},
			engine.NavigationTimeout, 1, "navigate"},
		{"wait_for text", map[string]any{"startUrl": srv.URL("/page/1"), "steps": []map[string]any{
			{"action": "wait_for", "text": "never there", "timeoutMs": 300}}}, engine.ElementNotFound, 0, "wait_for"},
		{"select without option", map[string]any{"startUrl": srv.URL("/form"), "steps": []map[string]any{
			{"action": "select", "selector": "#color", "value": "purple"}}}, engine.StepExecutionFailed, 0, "select"},
		{"script throws", map[string]any{"startUrl": srv.URL("/form"), "steps": []map[string]any{
			{"action": "evaluate", "script": "(() => { throw new Error('boom') })()"}}}, engine.StepExecutionFailed, 0, "evaluate"},
	}
	for _, c := range cases {
		env := newEnv(t, mustJSON(t, c.inputs))
		_, err := runTemplate(t, NewRunSteps(m), env)
		e := engine.AsError(err)
		if e == nil || e.Code != c.code || e.Details["stepIndex"] != c.step || e.Details["action"] != c.action {
			t.Errorf("%s: got %v (details %v), want %s at step %d (%s)", c.name, err, detailsOf(e), c.code, c.step, c.action)
		}
	}
	// evaluate is refused under trust restricted before any run exists.
	inputs := json.RawMessage(mustJSON(t, map[string]any{"steps": []map[string]any{{"action": "scroll", "to": "top"}, {"action": "evaluate", "script": "1"}}}))
	err := NewRunSteps(m).Check(inputs, engine.Profile{TrustLevel: "restricted", MaxTabsPerSession: 20})
	if e := engine.AsError(err); e == nil || e.Code != engine.TrustLevelNotAllowed || e.Details["stepIndex"] != 1 || e.Details["action"] != "evaluate" {
		t.Fatalf("evaluate under restricted: %v", err)
	}
}

func detailsOf(e *engine.Error) map[string]any {
	if e == nil {
		return nil
	}
	return e.Details
}

package templates

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// asked records the questions a run asked and answers each with the next
// of answers (a test failure when it asks more).
type asked struct {
	t       *testing.T
	answers []json.RawMessage

	mu sync.Mutex
	qs []engine.Question
}

func (a *asked) ask(q engine.Question) (json.RawMessage, error) {
	n := a.record(q)
	if n > len(a.answers) {
		a.t.Errorf("unexpected question %d: %+v", n, q)
		return nil, engine.Errorf(engine.ExecutionError, "no answer prepared")
	}
	return a.answers[n-1], nil
}

// record notes q and returns how many questions were asked so far.
func (a *asked) record(q engine.Question) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.qs = append(a.qs, q)
	return len(a.qs)
}

// questions returns the questions asked so far.
func (a *asked) questions() []engine.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]engine.Question(nil), a.qs...)
}

// askEnv is a fakeEnv whose questions get answers, in order.
func askEnv(t *testing.T, inputs map[string]any, answers ...json.RawMessage) (*fakeEnv, *asked) {
	t.Helper()
	env := newEnv(t, mustJSON(t, inputs))
	a := &asked{t: t, answers: answers}
	env.ask = a.ask
	return env, a
}

// checkQuestion fails unless q is the question of step i, of kind, asking
// message, in its MCP form (an elicitation/create form request).
func checkQuestion(t *testing.T, q engine.Question, i int, kind, message string) {
	t.Helper()
	if q.RequestID != stepRequestID(i) || q.Kind != kind || q.Message != message {
		t.Fatalf("question = %s %s %q, want %s %s %q", q.RequestID, q.Kind, q.Message, stepRequestID(i), kind, message)
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Mode    string `json:"mode"`
			Message string `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal(q.Request, &req); err != nil || req.Method != "elicitation/create" || req.Params.Mode != "form" || req.Params.Message != message {
		t.Fatalf("question's MCP form = %s (%v)", q.Request, err)
	}
}

// confirmOrder is the confirm step of the shop flows.
var confirmOrder = map[string]any{"action": "confirm", "message": "Place the order for 1 × Blue mug (12.00 EUR)?"}

// shopFlow is a run_steps flow on the fixture shop: the cart opens, the
// steps of before run, the order is placed (its number extracted as
// values.order), then the steps of after run.
func shopFlow(srv *fixture.Server, before []map[string]any, after ...map[string]any) map[string]any {
	steps := append(before,
		map[string]any{"action": "click", "selector": "#place-order"},
		map[string]any{"action": "wait_for", "text": "Order placed"},
		map[string]any{"action": "extract", "name": "order", "selector": "#order"},
	)
	return map[string]any{"startUrl": srv.URL("/shop/cart"), "steps": append(steps, after...)}
}

func TestRunStepsConfirmYesPlacesOrder(t *testing.T) {
	srv := fixture.New(t)
	env, a := askEnv(t, shopFlow(srv, []map[string]any{confirmOrder}), elicitAccept("confirm", true))
	out, err := runTemplate(t, NewRunSteps(testManager(t)), env)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultOf(t, out)["values"].(map[string]any)["order"]; got != "Order placed #1" {
		t.Fatalf("order = %v", got)
	}
	if srv.Orders() != 1 {
		t.Fatalf("orders = %d, want 1", srv.Orders())
	}
	qs := a.questions()
	if len(qs) != 1 {
		t.Fatalf("asked %d questions, want 1", len(qs))
	}
	checkQuestion(t, qs[0], 0, engine.QuestionConfirm, confirmOrder["message"].(string))
}

func TestRunStepsConfirmNoEndsRun(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	for _, c := range []struct {
		name   string
		answer json.RawMessage
	}{
		{"no", elicitAccept("confirm", false)},
		{"decline", elicitDecline()},
		{"cancel", json.RawMessage(`{"action":"cancel"}`)},
	} {
		env, a := askEnv(t, shopFlow(srv, []map[string]any{{"action": "type", "selector": "#note", "text": "ring twice"}, confirmOrder}), c.answer)
		_, err := runTemplate(t, NewRunSteps(m), env)
		e := engine.AsError(err)
		if e == nil || e.Code != engine.StepExecutionFailed || e.Details["reason"] != "declined" ||
			e.Details["stepIndex"] != 1 || e.Details["action"] != "confirm" {
			t.Fatalf("%s: got %v (details %v), want STEP_EXECUTION_FAILED declined at step 1 (confirm)", c.name, err, detailsOf(e))
		}
		if len(a.questions()) != 1 {
			t.Fatalf("%s: asked %d questions, want 1", c.name, len(a.questions()))
		}
		// The click after the confirm step never ran: no order.
		if srv.Orders() != 0 {
			t.Fatalf("%s: orders = %d, want 0", c.name, srv.Orders())
		}
	}
}

func TestRunStepsAskTypesAnswer(t *testing.T) {
	srv := fixture.New(t)
	const note = "Leave it with the neighbour, flat 3"
	env, a := askEnv(t, shopFlow(srv,
		[]map[string]any{{"action": "ask", "message": "Delivery note?", "selector": "#note"}, confirmOrder},
		map[string]any{"action": "extract", "name": "note", "selector": "#note"},
	), elicitAccept("value", note), elicitAccept("confirm", true))
	out, err := runTemplate(t, NewRunSteps(testManager(t)), env)
	if err != nil {
		t.Fatal(err)
	}
	// The server received the answer: the order page echoes the note.
	vals := resultOf(t, out)["values"].(map[string]any)
	if vals["order"] != "Order placed #1" || vals["note"] != "Note: "+note {
		t.Fatalf("values = %v", vals)
	}
	qs := a.questions()
	if len(qs) != 2 {
		t.Fatalf("asked %d questions, want 2", len(qs))
	}
	checkQuestion(t, qs[0], 0, engine.QuestionText, "Delivery note?")
	checkQuestion(t, qs[1], 1, engine.QuestionConfirm, confirmOrder["message"].(string))
}

func TestRunStepsAskSecret(t *testing.T) {
	srv := fixture.New(t)
	pin := fixture.ShopGiftCardPIN
	env, a := askEnv(t, shopFlow(srv,
		[]map[string]any{{"action": "ask", "message": "Gift card PIN?", "selector": "#pin", "secret": true}},
		map[string]any{"action": "extract", "name": "giftcard", "selector": "#giftcard"},
	), elicitAccept("value", pin))
	tpl := NewRunSteps(testManager(t))
	// Nothing in the inputs is secret: the PIN arrives as an answer, which
	// the engine masks once received.
	if got := tpl.(engine.SecretInputs).SecretValues(env.inputs); len(got) != 0 {
		t.Fatalf("SecretValues = %v", got)
	}
	out, err := runTemplate(t, tpl, env)
	if err != nil {
		t.Fatal(err)
	}
	// The PIN reached the server (it accepts only ShopGiftCardPIN)...
	vals := resultOf(t, out)["values"].(map[string]any)
	if vals["order"] != "Order placed #1" || vals["giftcard"] != "Gift card applied" {
		t.Fatalf("values = %v", vals)
	}
	qs := a.questions()
	if len(qs) != 1 {
		t.Fatalf("asked %d questions, want 1", len(qs))
	}
	checkQuestion(t, qs[0], 0, engine.QuestionSecret, "Gift card PIN?")
	// ...and nothing the run produced carries it.
	env.mu.Lock()
	produced := mustJSON(t, map[string]any{"result": out.Result, "items": env.items, "progress": env.progress})
	env.mu.Unlock()
	if strings.Contains(produced, pin) {
		t.Fatalf("the secret answer appears in what the run produced: %s", produced)
	}
}

func TestRunStepsAskSchema(t *testing.T) {
	tpl := NewRunSteps(nil)
	s, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range tpl.Info().Examples {
		if err := s.Validate(ex, "inputs"); err != nil {
			t.Fatalf("example %s: %v", ex, err)
		}
	}
	click := map[string]any{"action": "click", "selector": "#go"}
	cases := []struct {
		name  string
		step  map[string]any
		field string // details.field
		msg   string // the whole message
	}{
		{"confirm without message", map[string]any{"action": "confirm"},
			"inputs.steps[1]", "inputs.steps[1]: missing property 'message'"},
		{"ask without message", map[string]any{"action": "ask", "selector": "#pin"},
			"inputs.steps[1]", "inputs.steps[1]: missing property 'message'"},
		{"ask without selector", map[string]any{"action": "ask", "message": "PIN?"},
			"inputs.steps[1]", "inputs.steps[1]: missing property 'selector'"},
		{"empty message", map[string]any{"action": "confirm", "message": ""},
			"inputs.steps[1].message", "inputs.steps[1].message: minLength: got 0, want 1"},
		{"confirm with a selector", map[string]any{"action": "confirm", "message": "OK?", "selector": "#go"},
			"inputs.steps[1].selector", "inputs.steps[1]: additional properties 'selector' not allowed"},
		{"secret not a boolean", map[string]any{"action": "ask", "message": "PIN?", "selector": "#pin", "secret": "yes"},
			"inputs.steps[1].secret", "inputs.steps[1].secret: got string, want boolean"},
		{"unknown action", map[string]any{"action": "approve", "message": "OK?"},
			"inputs.steps[1].action", "inputs.steps[1].action: value must be one of 'navigate', 'click', 'type', 'press', 'select', " +
				"'wait_for', 'scroll', 'extract', 'screenshot', 'pdf', 'ask', 'confirm', 'takeover', 'evaluate'"},
	}
	for _, c := range cases {
		err := s.Validate(json.RawMessage(mustJSON(t, map[string]any{"steps": []map[string]any{click, c.step}})), "inputs")
		e := engine.AsError(err)
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != c.field || e.Message != c.msg {
			t.Errorf("%s: got %v (details %v), want INVALID_PARAMETER %q on %s", c.name, err, detailsOf(e), c.msg, c.field)
		}
	}
}

func TestRunStepsAskFailures(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	noAnswer := engine.Errorf(engine.RunTimeout, "no answer within 600000 ms").WithDetails(map[string]any{"reason": "no answer"})
	cases := []struct {
		name    string
		step    map[string]any
		answers []json.RawMessage
		env     error // returned by Ask instead of an answer
		code    engine.ErrorCode
		reason  string
		asked   int
	}{
		{"declined", map[string]any{"action": "ask", "message": "Gift card PIN?", "selector": "#pin", "secret": true},
			[]json.RawMessage{elicitDecline()}, nil, engine.StepExecutionFailed, "declined", 1},
		{"no field, nobody asked", map[string]any{"action": "ask", "message": "Gift card PIN?", "selector": "#nope", "timeoutMs": 300},
			nil, nil, engine.ElementNotFound, "", 0},
		{"no answer in time", map[string]any{"action": "ask", "message": "Delivery note?", "selector": "#note"},
			nil, noAnswer, engine.RunTimeout, "no answer", 1},
		{"confirm, no answer in time", confirmOrder, nil, noAnswer, engine.RunTimeout, "no answer", 1},
	}
	for _, c := range cases {
		env, a := askEnv(t, shopFlow(srv, []map[string]any{{"action": "wait_for", "selector": "#place-order"}, c.step}), c.answers...)
		if c.env != nil {
			envErr := c.env
			env.ask = func(q engine.Question) (json.RawMessage, error) {
				a.record(q)
				return nil, envErr
			}
		}
		_, err := runTemplate(t, NewRunSteps(m), env)
		e := engine.AsError(err)
		if e == nil || e.Code != c.code || e.Details["stepIndex"] != 1 || e.Details["action"] != c.step["action"] ||
			(c.reason != "" && e.Details["reason"] != c.reason) {
			t.Fatalf("%s: got %v (details %v), want %s (reason %q) at step 1", c.name, err, detailsOf(e), c.code, c.reason)
		}
		if len(a.questions()) != c.asked {
			t.Fatalf("%s: asked %d questions, want %d", c.name, len(a.questions()), c.asked)
		}
	}
	if srv.Orders() != 0 {
		t.Fatalf("orders = %d, want 0", srv.Orders())
	}
}

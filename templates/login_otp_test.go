package templates

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// asker answers the run's questions with answer and records them.
type asker struct {
	mu     sync.Mutex
	asked  []engine.InputRequest
	answer json.RawMessage
}

func (a *asker) ask(q engine.InputRequest) (json.RawMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answer, nil
}

func otpLoginInputs(t *testing.T, srv *fixture.Server, page string, extra map[string]any) string {
	in := map[string]any{"url": srv.URL(page), "username": fixture.LoginUser, "password": fixture.LoginPassword}
	for k, v := range extra {
		in[k] = v
	}
	return mustJSON(t, in)
}

// TestLoginAsksForTheOneTimeCode: on each of the three markups of a
// one-time-code step the run asks one secret question (requestId "otp",
// the host in the message), types the answer, and is logged in.
func TestLoginAsksForTheOneTimeCode(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	for i, page := range fixture.OTPLoginPages {
		a := &asker{answer: elicitAccept("value", fixture.OTPCode)}
		env := newEnv(t, otpLoginInputs(t, srv, page, nil))
		env.sessionID = "sess_otp_" + string(rune('a'+i))
		env.ask = a.ask
		out, err := runTemplate(t, NewLogin(m), env)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		res := resultOf(t, out)
		if res["loggedIn"] != true || res["oneTimeCode"] != true || !strings.HasSuffix(res["finalUrl"].(string), "/members") {
			t.Fatalf("%s: result %v", page, res)
		}
		if len(a.asked) != 1 || a.asked[0].RequestID != "otp" || a.asked[0].Kind != engine.InputSecret ||
			!strings.Contains(a.asked[0].Message, srv.Host()) || !strings.Contains(a.asked[0].Message, "one-time code") {
			t.Fatalf("%s: questions %+v", page, a.asked)
		}
		if st := membersStatus(t, srv, env.sessionID); st != 200 {
			t.Fatalf("%s: members page after the code: HTTP %d", page, st)
		}
	}
}

// TestLoginOneTimeCodeGivenOrWrong: inputs.otp is used without asking; a
// wrong code fails the run with the page's message; a declined question
// fails with reason "declined"; a login without a second step never asks.
func TestLoginOneTimeCodeGivenOrWrong(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)

	a := &asker{answer: elicitAccept("value", "000000")}
	env := newEnv(t, otpLoginInputs(t, srv, fixture.OTPLoginPages[0], map[string]any{"otp": fixture.OTPCode}))
	env.sessionID, env.ask = "sess_otp_given", a.ask
	out, err := runTemplate(t, NewLogin(m), env)
	if err != nil || resultOf(t, out)["oneTimeCode"] != true || len(a.asked) != 0 {
		t.Fatalf("otp given up front: %v, asked %+v", err, a.asked)
	}

	env = newEnv(t, otpLoginInputs(t, srv, fixture.OTPLoginPages[1], map[string]any{"successTimeoutMs": 2000}))
	env.sessionID, env.ask = "sess_otp_wrong", a.ask
	_, err = runTemplate(t, NewLogin(m), env)
	if engine.CodeOf(err) != engine.StepExecutionFailed || !strings.Contains(err.Error(), "Invalid code") || len(a.asked) != 1 {
		t.Fatalf("wrong code: %v (asked %d)", err, len(a.asked))
	}
	if st := membersStatus(t, srv, "sess_otp_wrong"); st != 401 {
		t.Fatalf("a wrong code logged in: HTTP %d", st)
	}

	d := &asker{answer: elicitDecline()}
	env = newEnv(t, otpLoginInputs(t, srv, fixture.OTPLoginPages[2], nil))
	env.sessionID, env.ask = "sess_otp_declined", d.ask
	_, err = runTemplate(t, NewLogin(m), env)
	var e *engine.Error
	if engine.CodeOf(err) != engine.StepExecutionFailed || !asEngineError(err, &e) || e.Details["reason"] != "declined" {
		t.Fatalf("declined: %v", err)
	}

	n := &asker{answer: elicitAccept("value", fixture.OTPCode)}
	env = newEnv(t, otpLoginInputs(t, srv, "/login", nil))
	env.sessionID, env.ask = "sess_no_otp", n.ask
	if out, err := runTemplate(t, NewLogin(m), env); err != nil || resultOf(t, out)["oneTimeCode"] != false || len(n.asked) != 0 {
		t.Fatalf("login without a second step: %v, asked %+v", err, n.asked)
	}
}

func asEngineError(err error, target **engine.Error) bool { return errors.As(err, target) }

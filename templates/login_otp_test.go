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
	asked  []engine.Question
	answer json.RawMessage
}

func (a *asker) ask(q engine.Question) (json.RawMessage, error) {
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

// TestLoginAsksForTheOneTimeCode: on each markup of a one-time-code step
// the run asks one secret question (requestId "otp", the host in the
// message), types the answer, submits it once, and is logged in.
func TestLoginAsksForTheOneTimeCode(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	for i, page := range fixture.OTPLoginPages {
		a := &asker{answer: elicitAccept("value", fixture.OTPCode)}
		env := newEnv(t, otpLoginInputs(t, srv, page, nil))
		env.sessionID = "sess_otp_" + string(rune('a'+i))
		env.ask = a.ask
		before := srv.OTPSubmissions()
		out, err := runTemplate(t, NewLogin(m), env)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		res := resultOf(t, out)
		if res["loggedIn"] != true || res["oneTimeCode"] != true || !strings.HasSuffix(res["finalUrl"].(string), "/members") {
			t.Fatalf("%s: result %v", page, res)
		}
		if len(a.asked) != 1 || a.asked[0].RequestID != "otp" || a.asked[0].Kind != engine.QuestionSecret ||
			!strings.Contains(a.asked[0].Message, srv.Host()) || !strings.Contains(a.asked[0].Message, "one-time code") {
			t.Fatalf("%s: questions %+v", page, a.asked)
		}
		if n := srv.OTPSubmissions() - before; n != 1 {
			t.Fatalf("%s: %d codes submitted, want 1", page, n)
		}
		if st := membersStatus(t, srv, env.sessionID); st != 200 {
			t.Fatalf("%s: members page after the code: HTTP %d", page, st)
		}
	}
}

// TestLoginOneTimeCodeRejectedOnTheSamePage: a wrong code on a page that
// stays (the field keeps its value, an error appears) fails at once with
// reason "rejected" and the page's message, without waiting for the
// success check; the session is not logged in.
func TestLoginOneTimeCodeRejectedOnTheSamePage(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	a := &asker{answer: elicitAccept("value", "111111")}
	env := newEnv(t, otpLoginInputs(t, srv, "/login-otp/d", map[string]any{"successTimeoutMs": 120000}))
	env.sessionID, env.ask = "sess_otp_rejected", a.ask
	_, err := runTemplate(t, NewLogin(m), env)
	var e *engine.Error
	if !asEngineError(err, &e) || e.Code != engine.StepExecutionFailed || e.Details["reason"] != "rejected" ||
		e.Details["pageMessage"] != "Invalid code" || !strings.Contains(e.Message, "did not accept the one-time code") {
		t.Fatalf("wrong code: %v", err)
	}
	if strings.Contains(e.Message, "111111") || len(a.asked) != 1 || srv.OTPSubmissions() != 1 {
		t.Fatalf("message %q, asked %d, submitted %d", e.Message, len(a.asked), srv.OTPSubmissions())
	}
	if st := membersStatus(t, srv, env.sessionID); st != 401 {
		t.Fatalf("a wrong code logged in: HTTP %d", st)
	}
}

// TestLoginCodeLikeFieldsAreNoSecondStep: a login whose next page has a
// promo code and a ZIP code field succeeds without asking, with the
// default success check and with an explicit one.
func TestLoginCodeLikeFieldsAreNoSecondStep(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	for i, extra := range []map[string]any{nil, {"success": map[string]string{"selector": "#welcome"}}} {
		a := &asker{answer: elicitAccept("value", fixture.OTPCode)}
		env := newEnv(t, otpLoginInputs(t, srv, fixture.OTPNoSecondStepPage, extra))
		env.sessionID, env.ask = "sess_promo_"+string(rune('a'+i)), a.ask
		out, err := runTemplate(t, NewLogin(m), env)
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		if res := resultOf(t, out); res["loggedIn"] != true || res["oneTimeCode"] != false || len(a.asked) != 0 ||
			!strings.HasSuffix(res["finalUrl"].(string), "/login-otp/none/home") {
			t.Fatalf("%v: result %v, asked %+v", extra, res, a.asked)
		}
	}
	if srv.OTPSubmissions() != 0 {
		t.Fatalf("%d codes submitted", srv.OTPSubmissions())
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

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
// stays (the field keeps its value, an error appears) is asked for again,
// twice, the site's message in the question; after the third the run
// fails with reason "rejected", the attempts and the page's message,
// without waiting for the success check; the session is not logged in
// and the last progress says how it ended.
func TestLoginOneTimeCodeRejectedOnTheSamePage(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	a := &asker{answer: elicitAccept("value", "111111")}
	env := newEnv(t, otpLoginInputs(t, srv, "/login-otp/d", map[string]any{"successTimeoutMs": 120000}))
	env.sessionID, env.ask = "sess_otp_rejected", a.ask
	_, err := runTemplate(t, NewLogin(m), env)
	var e *engine.Error
	if !asEngineError(err, &e) || e.Code != engine.StepExecutionFailed || e.Details["reason"] != "rejected" || e.Details["attempts"] != 3 ||
		e.Details["pageMessage"] != "Invalid code" || !strings.Contains(e.Message, "did not accept the one-time code in 3 attempts") {
		t.Fatalf("wrong code: %v", err)
	}
	if strings.Contains(e.Message, "111111") || len(a.asked) != 3 || srv.OTPSubmissions() != 3 {
		t.Fatalf("message %q, asked %d, submitted %d", e.Message, len(a.asked), srv.OTPSubmissions())
	}
	for i, id := range []string{"otp", "otp2", "otp3"} {
		if q := a.asked[i]; q.RequestID != id || q.Kind != engine.QuestionSecret || (i > 0 && !strings.Contains(q.Message, `did not accept the one-time code: it says "Invalid code"`)) {
			t.Fatalf("question %d: %+v", i, q)
		}
	}
	if !strings.Contains(a.asked[2].Message, "(attempt 3 of 3)") {
		t.Fatalf("the last question: %q", a.asked[2].Message)
	}
	if p := env.lastProgress(); !strings.HasPrefix(p.Message, "login failed: login did not succeed: the site did not accept the one-time code in 3 attempts") {
		t.Fatalf("last progress %+v", p)
	}
	if st := membersStatus(t, srv, env.sessionID); st != 401 {
		t.Fatalf("a wrong code logged in: HTTP %d", st)
	}
}

// seqAsker answers the run's questions with answers in turn.
type seqAsker struct {
	asker
	answers []json.RawMessage
}

func (a *seqAsker) ask(q engine.Question) (json.RawMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answers[min(len(a.asked), len(a.answers))-1], nil
}

// TestLoginSecondChanceForAMistypedCode: a mistyped code, then the right
// one, logs in without redoing the password, on a code page that comes
// back (b) and one that stays (d); a given inputs.otp that is wrong is
// followed by a question.
func TestLoginSecondChanceForAMistypedCode(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	for _, page := range []string{"/login-otp/b", "/login-otp/d"} {
		a := &seqAsker{answers: []json.RawMessage{elicitAccept("value", "000000"), elicitAccept("value", fixture.OTPCode)}}
		env := newEnv(t, otpLoginInputs(t, srv, page, nil))
		env.sessionID, env.ask = "sess_second"+page[len(page)-1:], a.ask
		out, err := runTemplate(t, NewLogin(m), env)
		if err != nil || resultOf(t, out)["loggedIn"] != true || len(a.asked) != 2 || a.asked[1].RequestID != "otp2" ||
			!strings.Contains(a.asked[1].Message, `it says "Invalid code"`) || !strings.Contains(a.asked[1].Message, "(attempt 2 of 3)") {
			t.Fatalf("%s: %v, asked %+v", page, err, a.asked)
		}
		if p := env.lastProgress(); p.Message != "logged in" || p.DoneSteps != 4 {
			t.Fatalf("%s: last progress %+v", page, p)
		}
		if st := membersStatus(t, srv, env.sessionID); st != 200 {
			t.Fatalf("%s: not logged in: HTTP %d", page, st)
		}
	}
	a := &seqAsker{answers: []json.RawMessage{elicitAccept("value", fixture.OTPCode)}}
	env := newEnv(t, otpLoginInputs(t, srv, "/login-otp/a", map[string]any{"otp": "999999"}))
	env.sessionID, env.ask = "sess_given_wrong", a.ask
	if out, err := runTemplate(t, NewLogin(m), env); err != nil || resultOf(t, out)["loggedIn"] != true || len(a.asked) != 1 || a.asked[0].RequestID != "otp2" {
		t.Fatalf("wrong inputs.otp: %v, asked %+v", err, a.asked)
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
	if engine.CodeOf(err) != engine.StepExecutionFailed || !strings.Contains(err.Error(), "Invalid code") || len(a.asked) != 3 {
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

// lastProgress is the progress the run reported last.
func (e *fakeEnv) lastProgress() engine.Progress {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.progress) == 0 {
		return engine.Progress{}
	}
	return e.progress[len(e.progress)-1]
}

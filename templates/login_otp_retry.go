package templates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// otpAttempts is how many codes a login enters before it gives up: a
// mistyped code (or one that expired while typed) gets a second and a
// third chance, asked for again with the site's own message, so the
// session and the password need not be redone. Sites lock an account
// after a few wrong codes (often 5): three stays below that.
const otpAttempts = 3

// otpRequestIDs are the requestIds of the code questions, one per attempt
// (a question is answered once; the first keeps the documented "otp").
var otpRequestIDs = [otpAttempts]string{otpRequestID, "otp2", "otp3"}

// enterCodes enters one-time codes into the field (and its submit
// control) found after the password, until the site accepts one or
// otpAttempts were rejected. The first code is inputs.otp when given;
// every other is asked of the person, the question quoting what the site
// said of the last one. Errors: STEP_EXECUTION_FAILED with reason
// "rejected" (attempts, the page's last message) or "declined".
func (t *Login) enterCodes(ctx context.Context, env engine.Env, tb *browser.Tab, in *loginInputs, p *loginProgress, field string, submit *string) (bool, time.Duration, error) {
	host := in.URL
	if u, err := url.Parse(in.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	wait := timeoutDur(in.TimeoutMs)
	var last otpRejection
	for attempt := 1; ; attempt++ {
		code := ""
		if attempt == 1 {
			code = in.OTP
		}
		if code == "" {
			q := fmt.Sprintf("%s asks for a one-time code to finish logging in as %s (from your authenticator app, a text message or an e-mail)", host, in.Username)
			if attempt > 1 {
				q = fmt.Sprintf("%s did not accept the one-time code: it says %q. Enter a new code to log in as %s (attempt %d of %d)", host, last.Message, in.Username, attempt, otpAttempts)
			}
			p.set(3, fmt.Sprintf("waiting for the one-time code (attempt %d of %d)", attempt, otpAttempts))
			var err error
			code, err = engine.AskText(ctx, env, otpRequestIDs[attempt-1], engine.QuestionSecret, q)
			if errors.Is(err, engine.ErrDeclined) {
				msg := fmt.Sprintf("login stopped: the one-time code %s asked for was declined", host)
				if attempt > 1 {
					msg += fmt.Sprintf(" after %d rejected code(s) (the site said %q)", attempt-1, last.Message)
				}
				return attempt > 1, 0, engine.Errorf(engine.StepExecutionFailed, "%s", msg).
					WithDetails(map[string]any{"step": "otp", "reason": "declined", "attempts": attempt - 1})
			}
			if err != nil {
				return attempt > 1, 0, err
			}
		}
		p.set(3, fmt.Sprintf("entering the one-time code (attempt %d of %d)", attempt, otpAttempts))
		rej, left, err := submitCode(ctx, tb, in, field, submit, code, wait)
		if err != nil || rej == nil {
			return true, left, err
		}
		last = *rej
		if attempt == otpAttempts {
			return true, 0, engine.Errorf(engine.StepExecutionFailed, "login did not succeed: the site did not accept the one-time code in %d attempts; the page is %s (%q) and says %q", otpAttempts, last.URL, last.Title, last.Message).
				WithDetails(map[string]any{"step": "otp", "reason": "rejected", "attempts": otpAttempts, "url": last.URL, "title": last.Title, "pageMessage": last.Message})
		}
		p.set(3, fmt.Sprintf("the site did not accept the one-time code (%q): asking for another (attempt %d of %d)", last.Message, attempt+1, otpAttempts))
		// The code page again (the same one, or a new one): find its field.
		fctx, cancel := context.WithTimeout(ctx, wait)
		raw, ferr := tb.WaitValue(fctx, otpFieldAgainJS)
		cancel()
		var again struct {
			Field  string  `json:"field"`
			Submit *string `json:"submit"`
		}
		if ferr != nil || json.Unmarshal(raw, &again) != nil || again.Field == "" {
			if ctx.Err() != nil {
				return true, 0, context.Cause(ctx)
			}
			return true, 0, engine.Errorf(engine.StepExecutionFailed, "login did not succeed: the site did not accept the one-time code and shows no code field to try again; the page is %s (%q) and says %q", last.URL, last.Title, last.Message).
				WithDetails(map[string]any{"step": "otp", "reason": "rejected", "attempts": attempt, "url": last.URL, "title": last.Title, "pageMessage": last.Message})
		}
		field, submit = again.Field, again.Submit
	}
}

// otpRejection is what a code page said when the site refused a code.
type otpRejection struct {
	Message, URL, Title string
}

// submitCode types code into field, submits it and waits for the page to
// tell: accepted (nil, and how long verify may still wait) or rejected.
func submitCode(ctx context.Context, tb *browser.Tab, in *loginInputs, field string, submit *string, code string, wait time.Duration) (*otpRejection, time.Duration, error) {
	if err := tb.TypeSecret(ctx, field, code, wait); err != nil {
		return nil, 0, err
	}
	if _, err := tb.Eval(ctx, otpMarkMessagesJS); err != nil {
		return nil, 0, err
	}
	var err error
	if submit != nil {
		err = tb.Click(ctx, *submit, wait)
	} else {
		err = tb.Press(ctx, "Enter")
	}
	if err != nil {
		return nil, 0, err
	}
	// The code page goes away (navigation, or the field is removed) before
	// the success check, so the code page itself never passes for success;
	// a code page that stays or comes back with a new error message means
	// the site did not take the code: no need to wait for the success
	// check then.
	gctx, gcancel := context.WithTimeout(ctx, timeoutDur(in.SuccessTimeoutMs))
	defer gcancel()
	raw, err := tb.WaitValue(gctx, otpAfterCodeJS)
	if ctx.Err() != nil {
		return nil, 0, context.Cause(ctx)
	}
	var after struct {
		Rejected string `json:"rejected"`
		URL      string `json:"url"`
		Title    string `json:"title"`
	}
	if err == nil && json.Unmarshal(raw, &after) == nil && after.Rejected != "" {
		return &otpRejection{Message: after.Rejected, URL: after.URL, Title: after.Title}, 0, nil
	}
	if gctx.Err() != nil {
		return nil, loginLastLook, nil
	}
	return nil, timeoutDur(in.SuccessTimeoutMs), nil
}

// otpFieldAgainJS resolves to the code field (and its submit control) of
// the page shown after a rejected code, once the page has loaded.
const otpFieldAgainJS = `new Promise(resolve => {` + otpFindJS + `
  const f = () => {
    const otp = document.readyState === 'complete' && otpFind();
    if (otp) return resolve(otp);
    setTimeout(f, 100);
  };
  f();
})`

// loginProgress reports a login's progress, remembering the steps done
// so the last message (how it ended) keeps them.
type loginProgress struct {
	env   engine.Env
	total int
	done  int
}

// set reports done steps of total with msg.
func (p *loginProgress) set(done int, msg string) {
	p.done = done
	p.env.SetProgress(engine.Progress{DoneSteps: done, TotalSteps: p.total, Message: msg})
}

// failureReason is an error's message for the last progress line, cut
// to a line.
func failureReason(err error) string {
	msg := err.Error()
	var e *engine.Error
	if errors.As(err, &e) {
		msg = e.Message
	}
	if r := []rune(msg); len(r) > 160 {
		msg = string(r[:157]) + "…"
	}
	return msg
}

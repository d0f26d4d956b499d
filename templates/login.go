package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// Login is the login template: fill and submit a login form inside a named
// session, so later runs in that session are logged in. The password is a
// secret: stored and shown as "***", held in memory only for the run.
type Login struct {
	b *browser.Manager
}

var (
	_ engine.Template        = (*Login)(nil)
	_ engine.SessionRequirer = (*Login)(nil)
)

// NewLogin returns the template, working in the run's session of b.
func NewLogin(b *browser.Manager) engine.Template { return &Login{b: b} }

// loginInputs are login's validated inputs.
type loginInputs struct {
	URL      string `json:"url"`
	Username string `json:"username"`
	Password string `json:"password"`
	// OTP is a one-time code given up front, used when the site asks for
	// one (login_otp.go).
	OTP    string `json:"otp"`
	Fields struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Submit   string `json:"submit"`
	} `json:"fields"`
	Success struct {
		URLContains string `json:"urlContains,omitempty"`
		Selector    string `json:"selector,omitempty"`
	} `json:"success"`
	TimeoutMs        int `json:"timeoutMs"`
	SuccessTimeoutMs int `json:"successTimeoutMs"`
	PerPageTimeoutMs int `json:"perPageTimeoutMs"`
}

func loginInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["url", "username", "password"],
  "properties": {
    "url": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "The login page."},
    "username": {"type": "string", "minLength": 1, "maxLength": 1000},
    "password": {"type": "string", "minLength": 1, "maxLength": 1000, "format": "password", "x-secret": true,
      "description": "Secret: never stored, logged or shown (\"***\" everywhere)."},
    "otp": {"type": "string", "minLength": 1, "maxLength": 100, "format": "password", "x-secret": true,
      "description": "A one-time code to use if the site asks for one after the password (secret like password). Without it the run asks the person for the code when the site wants one."},
    "fields": {"type": "object", "additionalProperties": false, "description": "CSS selectors, when the semantic detection picks the wrong fields.",
      "properties": {"username": {"type": "string", "minLength": 1, "maxLength": 1000},
                     "password": {"type": "string", "minLength": 1, "maxLength": 1000},
                     "submit": {"type": "string", "minLength": 1, "maxLength": 1000}}},
    "success": {"type": "object", "additionalProperties": false,
      "description": "How to tell the login worked: the URL contains urlContains and/or selector matches. Default: the page no longer shows a password field.",
      "properties": {"urlContains": {"type": "string", "minLength": 1, "maxLength": 2000},
                     "selector": {"type": "string", "minLength": 1, "maxLength": 1000}}},
    "timeoutMs": {"type": "integer", "minimum": 100, "maximum": 60000, "default": ` + strconv.Itoa(defaultLoginFormTimeoutMs) + `, "description": "How long to wait for the form's fields to appear."},
    "successTimeoutMs": {"type": "integer", "minimum": 500, "maximum": 120000, "default": ` + strconv.Itoa(defaultLoginSuccessTimeoutMs) + `, "description": "How long the success check may take after submitting."},
    "perPageTimeoutMs": ` + perPageTimeoutSchema() + `
  }
}`
}

const loginResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["loggedIn", "sessionId", "finalUrl"],
  "properties": {"loggedIn": {"type": "boolean"}, "sessionId": {"type": "string"}, "finalUrl": {"type": "string"},
    "title": {"type": "string"}, "fields": {"type": "object", "description": "How each field was found: given or detected."},
    "oneTimeCode": {"type": "boolean", "description": "True when the site asked for a one-time code and it was entered."}}
}`

// Info describes the template.
func (t *Login) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "login", Version: 1, Versions: []int{1},
		Title: "Log in to a website inside a browser session",
		Description: "Opens url in the given browser session (sessionId is required: create one with " +
			"create_browser_session), fills username and password and submits the form, then checks success " +
			"(success.urlContains and/or success.selector; by default: no password field is shown any more). " +
			"Later runs with the same sessionId are logged in; export_session_state saves the login for later. " +
			"Without fields selectors the form is found semantically (autocomplete attributes, input types, labels, " +
			"names, placeholders, in that order). The password is a secret: it is never stored, logged or shown " +
			"(\"***\"). When the site then asks for a one-time code (2FA: authenticator app, SMS, e-mail), inputs.otp is " +
			"used, or the run waits for the person: inputRequest {requestId: \"otp\", kind: \"secret\"} - ask your user " +
			"for the code and answer with answer_task_run; never invent one. Errors: TPL_LOGIN_FIELD_NOT_FOUND (a field cannot be located: give fields.*), " +
			"STEP_EXECUTION_FAILED (the success check failed: wrong credentials or an unexpected page; details.reason " +
			"\"declined\" when the person declined to give the one-time code, \"rejected\" when the site did not accept 3 codes: " +
			"after a rejected code the run asks again, requestId \"otp2\" then \"otp3\", quoting the site's message, also after a wrong inputs.otp; details.attempts counts them), " +
			"NAVIGATION_TIMEOUT, INVALID_PARAMETER (no sessionId). Not resumable.",
		InputSchema: json.RawMessage(loginInputSchema()), ResultSchema: json.RawMessage(loginResultSchema),
		TrustLevel: "any", Resumable: false, NeedsBrowser: true, RequiresSession: true,
		EstimatedStepsHint: "4 steps: open, fill, submit, verify",
		Examples:           []json.RawMessage{json.RawMessage(`{"url":"https://example.com/login","username":"alice","password":"…","success":{"urlContains":"/dashboard"}}`)},
	}
}

// RequiresSession reports that login needs a named session.
func (t *Login) RequiresSession() bool { return true }

// login's own waits when the inputs leave them out, applied by
// parseLoginInputs and stated by loginInputSchema.
const (
	defaultLoginFormTimeoutMs    = 5000
	defaultLoginSuccessTimeoutMs = 15000
)

func parseLoginInputs(raw json.RawMessage) (*loginInputs, error) {
	in := &loginInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	if in.TimeoutMs <= 0 {
		in.TimeoutMs = defaultLoginFormTimeoutMs
	}
	if in.SuccessTimeoutMs <= 0 {
		in.SuccessTimeoutMs = defaultLoginSuccessTimeoutMs
	}
	if in.PerPageTimeoutMs <= 0 {
		in.PerPageTimeoutMs = defaultPerPageTimeoutMs
	}
	return in, nil
}

// Check applies the URL policy. Errors: INVALID_PARAMETER,
// TRUST_LEVEL_NOT_ALLOWED.
func (t *Login) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseLoginInputs(inputs)
	if err != nil {
		return err
	}
	return checkURL(in.URL, "inputs.url", urlPolicy(t.b, p))
}

// loginFields is what loginDetectJS found.
type loginFields struct {
	Username *string `json:"username"`
	Password *string `json:"password"`
	Submit   *string `json:"submit"`
	InForm   bool    `json:"inForm"`
}

// Run logs in. Errors: TPL_LOGIN_FIELD_NOT_FOUND, STEP_EXECUTION_FAILED,
// NAVIGATION_TIMEOUT, TRUST_LEVEL_NOT_ALLOWED, SESSION_NOT_FOUND,
// PAGE_CRASHED, EXECUTION_ERROR, ctx's cause.
func (t *Login) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	p := &loginProgress{env: env, total: 4}
	out, err := t.run(ctx, env, p)
	if err != nil && ctx.Err() == nil {
		// The last progress says how it ended, not the step it was at.
		p.set(p.done, "login failed: "+failureReason(err))
	}
	return out, err
}

// run is Run with its progress reported through p.
func (t *Login) run(ctx context.Context, env engine.Env, p *loginProgress) (*engine.Outcome, error) {
	in, err := parseLoginInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	tb, err := openTab(ctx, t.b, env, "login")
	if err != nil {
		return nil, err
	}
	defer tb.Release(true)
	p.set(0, "opening the login page")
	lp, err := loadPage(ctx, tb, in.URL, browser.WaitLoad, in.PerPageTimeoutMs)
	if err != nil {
		return nil, stopErr(ctx, err)
	}
	if lp.failure != nil {
		return nil, stopErr(ctx, lp.failure)
	}
	f, err := t.findFields(ctx, tb, in)
	if err != nil {
		return nil, stopErr(ctx, err)
	}
	p.set(1, "filling the form")
	wait := timeoutDur(in.TimeoutMs)
	if err := tb.Type(ctx, *f.Username, in.Username, wait); err != nil {
		return nil, stopErr(ctx, err)
	}
	if err := tb.TypeSecret(ctx, *f.Password, in.Password, wait); err != nil {
		return nil, stopErr(ctx, err)
	}
	p.set(2, "submitting")
	if _, err := tb.Eval(ctx, loginMarkSeenJS); err != nil {
		return nil, stopErr(ctx, err)
	}
	if f.Submit != nil {
		err = tb.Click(ctx, *f.Submit, wait)
	} else {
		err = tb.Press(ctx, "Enter")
	}
	if err != nil {
		return nil, stopErr(ctx, err)
	}
	p.set(3, "checking success")
	usedOTP, left, err := t.secondStep(ctx, env, tb, in, p)
	if err != nil {
		return nil, stopErr(ctx, err)
	}
	if err := t.verify(ctx, tb, in, left); err != nil {
		return nil, stopErr(ctx, err)
	}
	var state struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	if raw, err := tb.Eval(ctx, loginPageStateJS); err == nil {
		_ = json.Unmarshal(raw, &state)
	}
	p.set(p.total, "logged in")
	how := func(given string) string {
		if given != "" {
			return "given"
		}
		return "detected"
	}
	return &engine.Outcome{Result: map[string]any{
		"loggedIn": true, "sessionId": env.SessionID(), "finalUrl": state.URL, "title": state.Title,
		"fields":      map[string]string{"username": how(in.Fields.Username), "password": how(in.Fields.Password), "submit": how(in.Fields.Submit)},
		"oneTimeCode": usedOTP,
	}}, nil
}

// findFields polls the detection until username and password are found
// or TimeoutMs passes. Errors: TPL_LOGIN_FIELD_NOT_FOUND naming the
// missing fields, INVALID_PARAMETER (a given selector does not parse).
func (t *Login) findFields(ctx context.Context, tb *browser.Tab, in *loginInputs) (*loginFields, error) {
	cfg, _ := json.Marshal(map[string]string{"username": in.Fields.Username, "password": in.Fields.Password, "submit": in.Fields.Submit})
	deadline := time.Now().Add(timeoutDur(in.TimeoutMs))
	for {
		var f loginFields
		raw, err := tb.Eval(ctx, fmt.Sprintf(loginDetectJS, cfg))
		if err != nil && engine.CodeOf(err) == engine.InvalidParameter {
			return nil, engine.Errorf(engine.InvalidParameter, "inputs.fields: %s", engine.AsError(err).Message).
				WithDetails(map[string]any{"field": "inputs.fields"})
		}
		if err == nil && json.Unmarshal(raw, &f) == nil && f.Username != nil && f.Password != nil &&
			(f.Submit != nil || in.Fields.Submit == "") {
			return &f, nil
		}
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			var missing []string
			for _, m := range []struct {
				name  string
				found *string
				want  bool
			}{{"username", f.Username, true}, {"password", f.Password, true}, {"submit", f.Submit, in.Fields.Submit != ""}} {
				if m.want && m.found == nil {
					missing = append(missing, m.name)
				}
			}
			if err != nil && len(missing) == 0 {
				return nil, err
			}
			return nil, engine.Errorf(engine.TplLoginFieldNotFound, "the login form's %v field could not be found on %s within %d ms; give its CSS selector in inputs.fields", missing, in.URL, in.TimeoutMs).
				WithDetails(map[string]any{"missing": missing, "url": in.URL})
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// verify waits up to wait for the success check. Errors:
// STEP_EXECUTION_FAILED with the page's URL, title and visible error text;
// the URL policy's error when the form posted somewhere not allowed.
func (t *Login) verify(ctx context.Context, tb *browser.Tab, in *loginInputs, wait time.Duration) error {
	cfg, _ := json.Marshal(in.Success)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err := tb.WaitJS(wctx, fmt.Sprintf(loginSuccessJS, cfg))
	if err == nil {
		return tb.Blocked()
	}
	if ctx.Err() != nil || wctx.Err() == nil {
		return err
	}
	if blocked := tb.Blocked(); blocked != nil {
		return blocked
	}
	var state struct {
		URL     string `json:"url"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	if raw, err := tb.Eval(ctx, loginPageStateJS); err == nil {
		_ = json.Unmarshal(raw, &state)
	}
	check := "no password field shown"
	if in.Success.URLContains != "" || in.Success.Selector != "" {
		b, _ := json.Marshal(in.Success)
		check = string(b)
	}
	msg := fmt.Sprintf("login did not succeed: the success check (%s) did not pass within %d ms; the page is %s (%q)", check, in.SuccessTimeoutMs, state.URL, state.Title)
	if state.Message != "" {
		msg += fmt.Sprintf(" and says %q", state.Message)
	}
	return engine.Errorf(engine.StepExecutionFailed, "%s", msg).
		WithDetails(map[string]any{"step": "verify", "url": state.URL, "title": state.Title, "pageMessage": state.Message})
}

// stopErr returns ctx's cause when ctx ended (the engine maps it), else err.
func stopErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

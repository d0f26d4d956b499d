package templates

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// ProfileSignIn is the profile_sign_in template: it opens a persistent
// profile's browser on a page and hands it to a person in the live view
// (a takeover) until they press Done, so they sign in by hand — CAPTCHAs,
// security keys, SSO, "trust this device" included — and later runs with
// the profile are signed in. The sign_in_profile tool, the dashboard's
// "New profile" and `browsertask profiles new` submit it.
type ProfileSignIn struct{ b *browser.Manager }

// NewProfileSignIn builds the template on the browser manager b.
func NewProfileSignIn(b *browser.Manager) *ProfileSignIn { return &ProfileSignIn{b: b} }

// profileSignInInputs are the template's inputs.
type profileSignInInputs struct {
	URL     string `json:"url"`
	Message string `json:"message"`
}

const profileSignInSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["url"],
  "properties": {
    "url": {"type": "string", "minLength": 1, "maxLength": 8000, "description": "Where the person starts: the site's sign-in page."},
    "message": {"type": "string", "maxLength": 1000, "description": "What the person is asked to do (default: sign in, then press Done)."}
  }
}`

const profileSignInResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["profile", "finalUrl"],
  "properties": {"profile": {"type": "string"}, "finalUrl": {"type": "string"}, "title": {"type": "string"}}
}`

// Info describes the template.
func (t *ProfileSignIn) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "profile_sign_in", Version: 1, Versions: []int{1},
		Title: "Let a person sign in to a site in a persistent browser profile",
		Description: "Opens url in the browser of the given profile (profile is required) and waits for a person to sign in " +
			"by hand in the dashboard's live view, then press Done (inputRequest kind \"takeover\" with the live view's URL: " +
			"give it to your user). Later runs with the same profile are signed in, across restarts. Usually submitted by " +
			"the sign_in_profile tool. Errors: STEP_EXECUTION_FAILED (details.reason \"declined\": the person declined; " +
			"\"no live view\": this process serves no dashboard), RUN_TIMEOUT (no answer), INVALID_PARAMETER (no profile).",
		InputSchema: json.RawMessage(profileSignInSchema), ResultSchema: json.RawMessage(profileSignInResultSchema),
		TrustLevel: "local", NeedsBrowser: true, RequiresProfile: true,
		EstimatedStepsHint: "2 steps: open, the person signs in",
		Examples:           []json.RawMessage{json.RawMessage(`{"url":"https://example.com/login"}`)},
	}
}

// RequiresProfile reports that the template needs a profile.
func (t *ProfileSignIn) RequiresProfile() bool { return true }

// Check validates the start URL against the URL policy.
func (t *ProfileSignIn) Check(inputs json.RawMessage, p engine.Profile) error {
	var in profileSignInInputs
	if err := decodeInputs(inputs, &in); err != nil {
		return err
	}
	return checkURL(in.URL, "inputs.url", urlPolicy(t.b, p))
}

// Run opens the page and asks for the takeover.
func (t *ProfileSignIn) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	var in profileSignInInputs
	if err := decodeInputs(env.Inputs(), &in); err != nil {
		return nil, err
	}
	if env.BrowserProfile() == "" {
		return nil, engine.Errorf(engine.InvalidParameter, "profile_sign_in needs a profile").WithDetails(map[string]any{"field": "profile"})
	}
	tb, err := openTab(ctx, t.b, env, "profile_sign_in")
	if err != nil {
		return nil, err
	}
	defer tb.Release(false)
	// A page that fails to load is still the person's to fix (a typo in
	// the address, a redirect loop): they see it in the live view.
	if _, err := tb.Navigate(ctx, in.URL, "load"); err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	_ = tb.BringToFront(ctx)
	msg := in.Message
	if msg == "" {
		msg = "Sign in to the site in this browser (profile " + env.BrowserProfile() + "), then press Done"
	}
	err = engine.AskTakeover(ctx, env, "sign-in", msg)
	switch {
	case errors.Is(err, engine.ErrDeclined):
		return nil, engine.Errorf(engine.StepExecutionFailed, "the person declined to sign in").WithDetails(map[string]any{"reason": "declined"})
	case errors.Is(err, engine.ErrNoLiveView):
		return nil, engine.Errorf(engine.StepExecutionFailed, "%v", err).WithDetails(map[string]any{"reason": "no live view"})
	case err != nil:
		return nil, err
	}
	res := map[string]any{"profile": env.BrowserProfile(), "finalUrl": ""}
	if v, err := tb.Eval(ctx, `({url: location.href, title: document.title})`); err == nil {
		var st struct{ URL, Title string }
		if json.Unmarshal(v, &st) == nil {
			res["finalUrl"], res["title"] = st.URL, st.Title
		}
	}
	return &engine.Outcome{Result: res}, nil
}

// InputsSummary is the host the person signs in to ("sign in at
// accounts.example").
func (t *ProfileSignIn) InputsSummary(inputs json.RawMessage) string {
	var in profileSignInInputs
	if json.Unmarshal(inputs, &in) != nil || in.URL == "" {
		return ""
	}
	return "sign in at " + summaryHost(in.URL)
}

package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProfileEngine is what the profile tools need of the engine
// (*engine.Engine implements it).
type ProfileEngine interface {
	Profiles(ctx context.Context) ([]engine.BrowserProfile, error)
	SignInProfile(ctx context.Context, name, note, startURL string, mode engine.Mode) (*engine.BrowserProfile, *engine.SubmitResult, error)
	LiveViewURL(runID string) string
}

var _ ProfileEngine = (*engine.Engine)(nil)

// profileEngine returns the engine's profile side, or an EXECUTION_ERROR.
func (s *Server) profileEngine() (ProfileEngine, error) {
	pe, ok := s.eng.(ProfileEngine)
	if !ok {
		return nil, engine.Errorf(engine.ExecutionError, "this server keeps no browser profiles")
	}
	return pe, nil
}

// profileView is one profile as list_profiles shows it: names of sites,
// never a cookie value; the directory never leaves the server.
type profileView struct {
	Name       string   `json:"name"`
	Note       string   `json:"note"`
	Sites      []string `json:"sites"`
	CreatedAt  int64    `json:"createdAt"`
	LastUsedAt int64    `json:"lastUsedAt"`
	SizeBytes  int64    `json:"sizeBytes"`
	InUse      bool     `json:"inUse"`
}

func (s *Server) listProfilesTool() toolDef {
	return toolDef{
		name:  "list_profiles",
		title: "List browser profiles",
		description: "Lists the persistent browser profiles a person signed into by hand: {profiles: [{name, note, sites, " +
			"createdAt, lastUsedAt, sizeBytes, inUse}]}. sites are the domains the profile holds cookies for (names only; " +
			"cookie values are never shown). Pass profile: NAME to run_task_template to run signed in; if no profile " +
			"holds the site you need, ask your user to sign in with sign_in_profile.",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input:       object(map[string]any{}),
		output: outputOf(object(map[string]any{
			"profiles": map[string]any{"type": "array", "items": object(map[string]any{
				"name": str("Profile name."), "note": str("What it is for."),
				"sites":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"createdAt":  map[string]any{"type": "integer"},
				"lastUsedAt": map[string]any{"type": "integer"},
				"sizeBytes":  map[string]any{"type": "integer"},
				"inUse":      map[string]any{"type": "boolean"},
			}, "name", "note", "sites", "createdAt", "lastUsedAt", "sizeBytes", "inUse")},
		}, "profiles")),
		handle: s.listProfiles,
	}
}

func (s *Server) listProfiles(ctx context.Context, _ *sdk.CallToolRequest, _ json.RawMessage) *sdk.CallToolResult {
	pe, err := s.profileEngine()
	if err != nil {
		return errorResult(err)
	}
	list, err := pe.Profiles(ctx)
	out := []profileView{}
	for _, p := range list {
		out = append(out, profileView{Name: p.Name, Note: p.Note, Sites: p.Sites, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt,
			SizeBytes: p.SizeBytes, InUse: p.HolderID != ""})
	}
	return s.answer("list_profiles", map[string]any{"profiles": out}, err)
}

// signInArgs are sign_in_profile's arguments.
type signInArgs struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Note string `json:"note"`
}

// signInReply is sign_in_profile's answer: the run's async handle plus
// where the person goes.
type signInReply struct {
	asyncHandle
	Profile      string `json:"profile"`
	DashboardURL string `json:"dashboardUrl"`
}

func (s *Server) signInProfileTool() toolDef {
	return toolDef{
		name:  "sign_in_profile",
		title: "Ask a person to sign in to a site in a browser profile",
		description: "Creates the persistent browser profile name (when new) and opens url in its browser for a person: " +
			"give your user dashboardUrl, where they sign in by hand (passwords, CAPTCHAs, security keys, SSO all work) " +
			"and press Done. Answers at once {profile, dashboardUrl, runId, status, inputRequest}: the run " +
			"(template profile_sign_in) waits for the person; a client with tasks gets it as a task that completes " +
			"when they press Done, others wait with subscribe_task_run_events or get_task_run. Afterwards pass " +
			"profile: name to run_task_template to run signed in. Names: " + engine.ProfileNameRule + ". " +
			"Errors: INVALID_PARAMETER (name, url), TRUST_LEVEL_NOT_ALLOWED (trust restricted without --allow-profiles-restricted).",
		annotations: &sdk.ToolAnnotations{OpenWorldHint: ptr(true), DestructiveHint: ptr(false)},
		input: object(map[string]any{
			"name": map[string]any{"type": "string", "minLength": 1, "maxLength": 63, "description": "Profile name, e.g. \"work\"."},
			"url":  map[string]any{"type": "string", "minLength": 1, "maxLength": 8000, "description": "The site's sign-in page."},
			"note": map[string]any{"type": "string", "maxLength": 1000, "description": "What the profile is for (new profiles)."},
		}, "name", "url"),
		output: outputOf(signInReplySchema()),
		handle: s.signInProfile,
	}
}

func (s *Server) signInProfile(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a signInArgs
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	pe, err := s.profileEngine()
	if err != nil {
		return errorResult(err)
	}
	p, sub, err := pe.SignInProfile(ctx, a.Name, a.Note, a.URL, engine.ModeAsync)
	if err != nil {
		return s.errorResultLogged("sign_in_profile", err)
	}
	offerTask(ctx, sub.Run, false)
	return jsonResult(signInReply{
		asyncHandle: asyncHandle{RunID: sub.Run.RunID, SessionID: sub.Run.SessionID, Status: sub.Run.Status, Mode: engine.ModeAsync,
			Question: sub.Run.Question},
		Profile: p.Name, DashboardURL: pe.LiveViewURL(sub.Run.RunID),
	}, false)
}

// signInReplySchema is the async handle plus profile and dashboardUrl.
func signInReplySchema() map[string]any {
	sch := asyncHandleSchema()
	props := sch["properties"].(map[string]any)
	props["profile"] = str("The profile the person signs into.")
	props["dashboardUrl"] = str("Where the person signs in (the run's live view); empty when this server serves no dashboard.")
	sch["required"] = append(append([]string(nil), sch["required"].([]string)...), "profile", "dashboardUrl")
	return sch
}

// ptr returns a pointer to v (tool annotations).
func ptr[T any](v T) *T { return &v }

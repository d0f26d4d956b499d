package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// ParseTemplateRef splits "id@N" into id and version (0 when absent).
// Errors: INVALID_PARAMETER for an empty id or a version that is not a
// positive integer.
func ParseTemplateRef(ref string) (string, int, error) {
	id, ver, hasVer := strings.Cut(strings.TrimSpace(ref), "@")
	if id == "" {
		return "", 0, Errorf(InvalidParameter, "templateId is required (e.g. \"batch_extract_pages\" or \"batch_extract_pages@1\")")
	}
	if !hasVer {
		return id, 0, nil
	}
	n, err := strconv.Atoi(ver)
	if err != nil || n < 1 {
		return "", 0, Errorf(InvalidParameter, "templateId version must be a positive integer after '@', got %q", ref)
	}
	return id, n, nil
}

// resolveTemplate finds a template and version. Errors: TEMPLATE_NOT_FOUND,
// TEMPLATE_VERSION_UNSUPPORTED, INVALID_PARAMETER.
func (e *Engine) resolveTemplate(ref string) (Template, int, error) {
	id, ver, err := ParseTemplateRef(ref)
	if err != nil {
		return nil, 0, err
	}
	tpl, ok := e.templates[id]
	if !ok {
		known := append([]string(nil), e.order...)
		sort.Strings(known)
		return nil, 0, Errorf(TemplateNotFound, "unknown templateId %q; available: %s", id, strings.Join(known, ", ")).
			WithDetails(map[string]any{"templateId": id, "available": known})
	}
	info := tpl.Info()
	if ver == 0 {
		return tpl, info.Version, nil
	}
	for _, v := range info.Versions {
		if v == ver {
			return tpl, ver, nil
		}
	}
	return nil, 0, Errorf(TemplateVersionUnsupported, "template %s has no version %d; supported versions: %v", id, ver, info.Versions).
		WithDetails(map[string]any{"templateId": id, "version": ver, "versions": info.Versions})
}

// SubmitRequest is a run_task_template submission.
type SubmitRequest struct {
	// TemplateID is "id" or "id@N".
	TemplateID string
	// SessionID names an existing live session; empty = a fresh owned session.
	SessionID string
	// Profile names a persistent browser profile to run in (list_profiles);
	// it excludes SessionID.
	Profile string
	// Inputs are validated against the template's input schema (nil = {}).
	Inputs json.RawMessage
	// Mode is the requested mode ("" = auto).
	Mode Mode
	// TimeoutMs bounds the running phase: 1..MaxTimeoutMs, at most
	// syncTimeoutMs in sync mode; 0 = the mode's default.
	TimeoutMs int64
	// IdempotencyKey deduplicates submissions within the run TTL.
	IdempotencyKey string
	// TaskTTLMs is a task's requested ttl (0 = not a task); capped and floored.
	TaskTTLMs int64
	// OutputSchema is options.outputSchema: required by templates that use
	// it, ignored by the others.
	OutputSchema json.RawMessage
	// ClientSampling says the submitting client declared MCP sampling
	// (Run.ClientSampling).
	ClientSampling bool
}

// SubmitResult is the run created (or found through the idempotency key).
type SubmitResult struct {
	Run *Run
	// Mode is the mode this submission asked for ("" resolved to auto).
	// It is how the caller answers, even when Run was found through the
	// idempotency key and was submitted in another mode.
	Mode         Mode
	Deduplicated bool
	// InputsMatch, when Deduplicated, says whether the request's inputs
	// (secrets masked, as stored) equal the existing run's: false means an
	// idempotency key was reused for different work.
	InputsMatch bool
}

// MaxTimeoutMs is the contract's upper bound of options.timeoutMs.
const MaxTimeoutMs = 600000

// MaxIdempotencyKeyChars is the longest options.idempotencyKey, in
// characters (Unicode code points, as JSON Schema's maxLength counts). It is
// defined here, where Submit enforces it, and mcp's tool schema reads it, so
// the schema a client sees and the check it meets cannot drift apart.
const MaxIdempotencyKeyChars = 200

// Submit validates r and creates a queued run, or returns the existing run
// for a live idempotency key. It does not wait. Errors: INVALID_PARAMETER,
// TEMPLATE_NOT_FOUND, TEMPLATE_VERSION_UNSUPPORTED, SESSION_NOT_FOUND,
// TRUST_LEVEL_NOT_ALLOWED.
func (e *Engine) Submit(ctx context.Context, r SubmitRequest) (*SubmitResult, error) {
	// The options are checked before the template is looked up: a sync
	// timeout above syncTimeoutMs is INVALID_PARAMETER whatever the template.
	mode, timeout, err := e.runOptions(r)
	if err != nil {
		return nil, err
	}
	tpl, version, err := e.resolveTemplate(r.TemplateID)
	if err != nil {
		return nil, err
	}
	info := tpl.Info()
	inputs := r.Inputs
	if len(bytes.TrimSpace(inputs)) == 0 || bytes.Equal(bytes.TrimSpace(inputs), []byte("null")) {
		inputs = json.RawMessage("{}")
	}
	if err := e.schemas[info.TemplateID].Validate(inputs, "inputs"); err != nil {
		return nil, err
	}
	if err := tpl.Check(inputs, e.Profile()); err != nil {
		return nil, AsError(err)
	}
	outputSchema, err := checkOutputSchema(tpl, r.OutputSchema)
	if err != nil {
		return nil, err
	}
	if sr, ok := tpl.(SessionRequirer); ok && sr.RequiresSession() && r.SessionID == "" {
		return nil, Errorf(InvalidParameter, "sessionId is required: %s only makes sense in a browser session that outlives the run; create one with create_browser_session and pass its sessionId", info.TemplateID).
			WithDetails(map[string]any{"field": "sessionId"})
	}
	if err := e.checkRunProfile(ctx, r); err != nil {
		return nil, err
	}
	if pr, ok := tpl.(ProfileRequirer); ok && pr.RequiresProfile() && r.Profile == "" {
		return nil, Errorf(InvalidParameter, "profile is required: %s works in a persistent browser profile; create one with sign_in_profile or list them with list_profiles", info.TemplateID).
			WithDetails(map[string]any{"field": "profile"})
	}
	// Secrets are masked in the stored copy and kept in memory (secrets.go).
	storedInputs, secrets := protectSecrets(tpl, inputs)
	now := e.now()
	ttl := e.cfg.RunTTL.Milliseconds()
	if r.TaskTTLMs > 0 {
		ttl = min(max(r.TaskTTLMs, ttl), e.cfg.MaxTaskTTL.Milliseconds())
	}
	run := &Run{
		RunID: "run_" + uuid.NewString(), TemplateID: info.TemplateID, TemplateVersion: version,
		Status: StatusQueued, Mode: mode, Progress: Progress{}, ArtifactIDs: []string{},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now + ttl,
		Inputs: compactJSON(storedInputs), TimeoutMs: timeout, TTLMs: ttl, IdempotencyKey: r.IdempotencyKey,
		OutputSchema: outputSchema, ClientSampling: r.ClientSampling,
	}
	run.Profile = r.Profile
	if r.SessionID != "" {
		s, err := e.liveSession(ctx, r.SessionID)
		if err != nil {
			return nil, err
		}
		run.SessionID, run.SessionOwnerID = s.ID, s.OwnerID
		e.touchSession(ctx, s)
	} else {
		run.SessionID, run.OwnsSession = "sess_"+uuid.NewString(), true
	}
	if secrets != nil {
		if run.SessionOwnerID != "" && run.SessionOwnerID != e.ownerID {
			return nil, Errorf(InvalidParameter, "inputs with secrets must be submitted to the browsertask process that owns session %s (secrets never leave the process that receives them)", run.SessionID).
				WithDetails(map[string]any{"sessionId": run.SessionID})
		}
		// Only this process holds the secrets, so only it may run the run.
		run.SessionOwnerID = e.ownerID
		e.secrets.put(run.RunID, compactJSON(inputs), secrets)
	}
	var idem *IdempotencyClaim
	if r.IdempotencyKey != "" {
		idem = &IdempotencyClaim{TemplateID: info.TemplateID, Key: r.IdempotencyKey, Now: now, ExpiresAt: now + e.cfg.RunTTL.Milliseconds()}
	}
	stored, dedup, err := e.store.CreateRun(ctx, run, idem)
	if err != nil || dedup {
		e.secrets.forget(run.RunID)
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "store run: %v", err)
	}
	if !dedup {
		e.kick()
	}
	e.present(stored, now)
	res := &SubmitResult{Run: stored, Mode: mode, Deduplicated: dedup}
	if dedup {
		res.InputsMatch = sameJSON(stored.Inputs, run.Inputs)
	}
	return res, nil
}

// runOptions checks r's mode, timeout and idempotency key and returns the
// mode ("" means auto) and the timeout (0 means the mode's default).
// Errors: INVALID_PARAMETER naming the option.
func (e *Engine) runOptions(r SubmitRequest) (Mode, int64, error) {
	mode := r.Mode
	switch mode {
	case "":
		mode = ModeAuto
	case ModeSync, ModeAsync, ModeAuto:
	default:
		return "", 0, Errorf(InvalidParameter, "options.mode must be one of sync, async, auto, got %q", string(mode))
	}
	timeout := r.TimeoutMs
	if timeout < 0 || timeout > MaxTimeoutMs {
		return "", 0, Errorf(InvalidParameter, "options.timeoutMs must be 1..%d, got %d", MaxTimeoutMs, timeout)
	}
	// The run keeps its timeout in ms, as the contract shows it.
	syncMax := e.cfg.SyncTimeout.Milliseconds()
	if mode == ModeSync && timeout > syncMax {
		return "", 0, Errorf(InvalidParameter, "options.timeoutMs must be at most syncTimeoutMs (%d) in sync mode, got %d; use mode async for longer runs",
			syncMax, timeout).WithDetails(map[string]any{"field": "options.timeoutMs"})
	}
	if timeout == 0 {
		timeout = e.cfg.AsyncTimeout.Milliseconds()
		if mode == ModeSync {
			timeout = syncMax
		}
	}
	if n := utf8.RuneCountInString(r.IdempotencyKey); r.IdempotencyKey != "" && n > MaxIdempotencyKeyChars {
		return "", 0, Errorf(InvalidParameter, "options.idempotencyKey must be 1..%d characters, got %d", MaxIdempotencyKeyChars, n)
	}
	return mode, timeout, nil
}

func compactJSON(b json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// sameJSON reports whether two JSON documents are equal as values (key order
// and spacing do not matter).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// submit validates r and creates the run (or finds it by idempotency key).
func (e *Engine) submit(ctx context.Context, r SubmitRequest) (*SubmitResult, error) {
	tpl, version, err := e.resolveTemplate(r.TemplateID)
	if err != nil {
		return nil, err
	}
	info := tpl.Info()
	mode := r.Mode
	switch mode {
	case "":
		mode = ModeAuto
	case ModeSync, ModeAsync, ModeAuto:
	default:
		return nil, Errorf(InvalidParameter, "options.mode must be one of sync, async, auto, got %q", string(mode))
	}
	timeout := r.TimeoutMs
	if timeout < 0 || timeout > 600000 {
		return nil, Errorf(InvalidParameter, "options.timeoutMs must be 1..600000, got %d", timeout)
	}
	if mode == ModeSync && timeout > e.cfg.SyncTimeoutMs {
		return nil, Errorf(InvalidParameter, "options.timeoutMs must be <= syncTimeoutMs (%d) in sync mode, got %d; use mode async or auto for longer runs", e.cfg.SyncTimeoutMs, timeout)
	}
	if timeout == 0 {
		timeout = e.cfg.AsyncTimeoutMs
		if mode == ModeSync {
			timeout = e.cfg.SyncTimeoutMs
		}
	}
	if n := utf8.RuneCountInString(r.IdempotencyKey); r.IdempotencyKey != "" && n > 200 {
		return nil, Errorf(InvalidParameter, "options.idempotencyKey must be 1..200 characters, got %d", n)
	}
	inputs := r.Inputs
	if len(bytes.TrimSpace(inputs)) == 0 || bytes.Equal(bytes.TrimSpace(inputs), []byte("null")) {
		inputs = json.RawMessage("{}")
	}
	if verr := e.schemas[info.TemplateID].Validate(inputs, "inputs"); verr != nil {
		return nil, verr
	}
	if err := tpl.Check(inputs, e.Profile()); err != nil {
		return nil, AsError(err)
	}
	if sr, ok := tpl.(SessionRequirer); ok && sr.RequiresSession() && r.SessionID == "" {
		return nil, Errorf(InvalidParameter, "sessionId is required: %s only makes sense in a browser session that outlives the run; create one with create_browser_session and pass its sessionId", info.TemplateID).
			WithDetails(map[string]any{"field": "sessionId"})
	}
	// Secrets are masked in the stored copy and kept in memory (secrets.go).
	storedInputs, secrets := protectSecrets(tpl, inputs)
	now := e.now()
	ttl := e.cfg.RunTTLMs
	if r.TaskTTLMs > 0 {
		ttl = min(max(r.TaskTTLMs, e.cfg.RunTTLMs), e.cfg.MaxTaskTTLMs)
	}
	run := &Run{
		RunID: "run_" + uuid.NewString(), TemplateID: info.TemplateID, TemplateVersion: version,
		Status: StatusQueued, Mode: mode, Progress: Progress{}, ArtifactIDs: []string{},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now + ttl,
		Inputs: compactJSON(storedInputs), TimeoutMs: timeout, TTLMs: ttl, IdempotencyKey: r.IdempotencyKey,
	}
	if r.SessionID != "" {
		s, err := e.store.GetSession(ctx, r.SessionID)
		if errors.Is(err, ErrNotFound) || (err == nil && (s.ClosedAt != nil || s.ExpiresAt <= now)) {
			return nil, Errorf(SessionNotFound, "session %q does not exist, was closed or expired", r.SessionID).
				WithDetails(map[string]any{"sessionId": r.SessionID})
		}
		if err != nil {
			return nil, Wrap(ExecutionError, err, "look up session: %v", err)
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
		idem = &IdempotencyClaim{TemplateID: info.TemplateID, Key: r.IdempotencyKey, Now: now, ExpiresAt: now + e.cfg.RunTTLMs}
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
	e.withMetrics(stored, now)
	res := &SubmitResult{Run: stored, Deduplicated: dedup}
	if dedup {
		res.InputsMatch = sameJSON(stored.Inputs, run.Inputs)
	}
	return res, nil
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

package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Secret inputs (a login password, a run_steps "type" step marked secret)
// never reach the database, the event log, the logs or any answer:
//
//   - at submission the secret values are found (schema properties marked
//     "x-secret": true or "format": "password", plus SecretInputs), the
//     stored copy of the inputs carries "***" in their place, and the real
//     inputs stay only in this process's memory, keyed by runId;
//   - the run is bound to this process (as a session's runs are), so no
//     other process claims a run whose secrets it does not hold;
//   - every write of the run (result, error, items, progress, events, text
//     artifacts) and its log lines have the values replaced by "***";
//   - the memory copy is dropped when the run ends. Such templates are not
//     resumable: a run interrupted by a crash fails, its secrets are gone.

// SecretMask replaces a secret in everything stored or shown.
const SecretMask = "***"

// minRedactLen is the shortest secret replaced inside longer text; shorter
// ones are masked only where a whole value equals them (replacing every
// "ab" in a page's text would destroy results and protect little).
const minRedactLen = 3

// SecretInputs is implemented by templates whose inputs hold secrets the
// schema alone cannot mark (run_steps: a "type" step with secret: true).
// SecretValues returns those values; it is called on validated inputs.
type SecretInputs interface {
	SecretValues(inputs json.RawMessage) []string
}

// runSecrets is what the process keeps about one run's secrets.
type runSecrets struct {
	inputs json.RawMessage // the real inputs, handed to the template
	values []string
}

// secretVault holds runs' secrets in memory. It is safe for concurrent use.
type secretVault struct {
	mu    sync.RWMutex
	byRun map[string]*runSecrets
}

func newSecretVault() *secretVault { return &secretVault{byRun: map[string]*runSecrets{}} }

// put registers a run's real inputs and secret values, with every encoded
// form of each value (secretForms).
func (v *secretVault) put(runID string, inputs json.RawMessage, values []string) {
	var all []string
	for _, sec := range values {
		all = append(all, secretForms(sec)...)
	}
	// Longest first, so a form that contains another is replaced whole.
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	values = all
	v.mu.Lock()
	v.byRun[runID] = &runSecrets{inputs: inputs, values: values}
	v.mu.Unlock()
}

// get returns a run's secrets (nil when it has none here).
func (v *secretVault) get(runID string) *runSecrets {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.byRun[runID]
}

// add registers one more secret value of a run (an answer given while it
// runs), creating the run's entry when it had no secret inputs.
func (v *secretVault) add(runID, value string) {
	if value == "" {
		return
	}
	forms := secretForms(value)
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.byRun[runID]
	if cur == nil {
		cur = &runSecrets{}
		v.byRun[runID] = cur
	}
	all := append(append([]string{}, cur.values...), forms...)
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	// A new slice, so readers holding the old one see a consistent list.
	cur.values = all
}

// values returns a run's secret values (nil when it has none here).
func (v *secretVault) values(runID string) []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if r := v.byRun[runID]; r != nil {
		return r.values
	}
	return nil
}

// forget drops a run's secrets.
func (v *secretVault) forget(runID string) {
	v.mu.Lock()
	delete(v.byRun, runID)
	v.mu.Unlock()
}

// secretValues returns every secret value of inputs for tpl: schema-marked
// properties and the template's own SecretInputs.
func secretValues(tpl Template, inputs json.RawMessage) []string {
	var schema, inst any
	if json.Unmarshal(tpl.Info().InputSchema, &schema) != nil || json.Unmarshal(inputs, &inst) != nil {
		return nil
	}
	var out []string
	collectSecrets(schema, inst, &out)
	if si, ok := tpl.(SecretInputs); ok {
		out = append(out, si.SecretValues(inputs)...)
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, s := range out {
		if s != "" && !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	return uniq
}

// collectSecrets walks an instance along its schema and appends the string
// values of properties marked secret.
func collectSecrets(schema, inst any, out *[]string) {
	sm, ok := schema.(map[string]any)
	if !ok {
		return
	}
	if sm["x-secret"] == true || sm["format"] == "password" {
		if s, ok := inst.(string); ok {
			*out = append(*out, s)
		}
		return
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if alts, ok := sm[k].([]any); ok {
			for _, a := range alts {
				collectSecrets(a, inst, out)
			}
		}
	}
	switch v := inst.(type) {
	case map[string]any:
		props, _ := sm["properties"].(map[string]any)
		for name, val := range v {
			if ps, ok := props[name]; ok {
				collectSecrets(ps, val, out)
			} else if ap, ok := sm["additionalProperties"].(map[string]any); ok {
				collectSecrets(ap, val, out)
			}
		}
	case []any:
		for _, el := range v {
			collectSecrets(sm["items"], el, out)
		}
	}
}

// maskJSON returns doc with every string value equal to a secret, and every
// occurrence of a secret of minRedactLen or more inside other strings,
// replaced by SecretMask. Object keys are redacted too.
func maskJSON(doc json.RawMessage, values []string) json.RawMessage {
	if len(values) == 0 || len(doc) == 0 {
		return doc
	}
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return json.RawMessage(redactText(string(doc), values))
	}
	b, err := json.Marshal(maskValue(v, values))
	if err != nil {
		return doc
	}
	return b
}

func maskValue(v any, values []string) any {
	switch x := v.(type) {
	case string:
		return redactText(x, values)
	case []any:
		for i := range x {
			x[i] = maskValue(x[i], values)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[redactText(k, values)] = maskValue(val, values)
		}
		return out
	}
	return v
}

// redactText replaces secrets in s: whole-value matches always, inner
// occurrences of secrets of minRedactLen or more.
func redactText(s string, values []string) string {
	for _, sec := range values {
		if s == sec {
			return SecretMask
		}
	}
	for _, sec := range values {
		if len(sec) >= minRedactLen && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, SecretMask)
		}
	}
	return s
}

// redactError returns a copy of e with message and details redacted.
func redactError(e *Error, values []string) *Error {
	if e == nil || len(values) == 0 {
		return e
	}
	c := *e
	c.Message = redactText(c.Message, values)
	c.Err = nil
	if c.Details != nil {
		if b, err := json.Marshal(c.Details); err == nil {
			var d map[string]any
			if json.Unmarshal(maskJSON(b, values), &d) == nil {
				c.Details = d
			}
		}
	}
	return &c
}

// redactHandler is a slog.Handler that masks a run's secrets in the
// message and in every string attribute. It reads the values at each line,
// so a secret the run receives while it runs (a one-time code) is masked
// from then on.
type redactHandler struct {
	h     slog.Handler
	vault *secretVault
	runID string
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	values := r.vault.values(r.runID)
	if len(values) == 0 {
		return r.h.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, redactText(rec.Message, values), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a, values))
		return true
	})
	return r.h.Handle(ctx, out)
}

// attr masks an attribute with the values known now (WithAttrs).
func (r redactHandler) attr(a slog.Attr) slog.Attr { return redactAttr(a, r.vault.values(r.runID)) }

func redactAttr(a slog.Attr, values []string) slog.Attr {
	if len(values) == 0 {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redactText(v.String(), values))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, 0, len(attrs))
		for _, g := range attrs {
			out = append(out, redactAttr(g, values))
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, redactText(err.Error(), values))
		}
		return slog.String(a.Key, redactText(v.String(), values))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, 0, len(as))
	for _, a := range as {
		out = append(out, r.attr(a))
	}
	return redactHandler{h: r.h.WithAttrs(out), vault: r.vault, runID: r.runID}
}

func (r redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h: r.h.WithGroup(name), vault: r.vault, runID: r.runID}
}

// runLogger returns log masking the run's secrets: those of its inputs and
// those it receives while it runs.
func (e *Engine) runLogger(runID string, log *slog.Logger) *slog.Logger {
	return slog.New(redactHandler{h: log.Handler(), vault: e.secrets, runID: runID})
}

// protectSecrets prepares a submission's inputs: it returns the inputs to
// store (secrets masked) and the secret values, or the inputs unchanged and
// nil when there are none.
func protectSecrets(tpl Template, inputs json.RawMessage) (json.RawMessage, []string) {
	values := secretValues(tpl, inputs)
	if len(values) == 0 {
		return inputs, nil
	}
	return maskJSON(inputs, values), values
}

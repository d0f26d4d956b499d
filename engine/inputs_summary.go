package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// InputsSummarizer is implemented by a template that can say in one line
// what a run of it works on, from its stored inputs (secrets there are
// "***" already): the first URL of a URL list and how many more, the host
// a login signs in to, a scripted flow's step count. Only the template
// knows which of its inputs say that; the engine knows none of their keys.
type InputsSummarizer interface {
	// InputsSummary returns the line, or "" when the inputs say nothing
	// the template can show (the engine's generic summary is used then).
	// It must never show strings that may be secrets, answers or notes,
	// nor the user info of a URL.
	InputsSummary(inputs json.RawMessage) string
}

// InputsSummary says in one line what a run of templateID works on: the
// template's own summary (InputsSummarizer) or, for a template without
// one (or unknown here, as in an old history row) or one that has
// nothing to say, the numbers and booleans of its inputs ("items 5 ·
// sleepMs 250"), never an input whose name may hold a secret. "" when
// there is nothing to say. The dashboard's runs list, the run history and
// `browsertask runs` show it.
func (e *Engine) InputsSummary(templateID string, inputs json.RawMessage) string {
	if s, ok := e.templates[templateID].(InputsSummarizer); ok {
		if line := s.InputsSummary(inputs); line != "" {
			return line
		}
	}
	var in map[string]any
	if json.Unmarshal(inputs, &in) != nil || len(in) == 0 {
		return ""
	}
	return strings.Join(scalarInputs(in), " · ")
}

// secretWords mark input names whose values are never shown, even numbers.
func secretWords() []string {
	return []string{"password", "passwd", "secret", "token", "apikey", "api_key", "credential", "cookie", "pin", "otp", "code"}
}

// scalarInputs lists the number and boolean inputs, sorted by name, at
// most four ("items 5", "fail true"); names that may hold secrets are
// left out.
func scalarInputs(in map[string]any) []string {
	var keys []string
	for k, v := range in {
		switch v.(type) {
		case float64, bool:
			name := strings.ToLower(k)
			secret := false
			for _, w := range secretWords() {
				secret = secret || strings.Contains(name, w)
			}
			if !secret {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys[:min(len(keys), 4)] {
		out = append(out, fmt.Sprintf("%s %v", k, in[k]))
	}
	return out
}

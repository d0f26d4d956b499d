package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// ago renders how long before now t (Unix ms) was: "12s ago", "3m ago".
func ago(now time.Time, ms int64) string {
	d := now.Sub(time.UnixMilli(ms))
	if d < time.Second {
		return "just now"
	}
	return span(d) + " ago"
}

// inTime renders how long after now t (Unix ms) is: "in 9m 48s", or
// "now" once it has passed.
func inTime(now time.Time, ms int64) string {
	d := time.UnixMilli(ms).Sub(now)
	if d < time.Second {
		return "now"
	}
	return "in " + span(d.Truncate(time.Second))
}

// span renders a duration compactly: "850ms", "12.3s", "4m 05s", "2h 03m".
func span(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// clock renders Unix ms as a local date-time, "" for nil.
func clock(ms *int64) string {
	if ms == nil {
		return ""
	}
	return time.UnixMilli(*ms).Format("2006-01-02 15:04:05")
}

// size renders a byte count: "812 B", "14.2 KiB", "3.1 MiB".
func size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// pretty indents JSON for display; invalid JSON is returned as it is.
func pretty(raw []byte) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// progressView turns counters into bar widths.
func progressView(p engine.Progress) ProgressView {
	v := ProgressView{Done: p.DoneSteps, Total: p.TotalSteps, Failed: p.FailedSteps, Message: p.Message}
	if p.TotalSteps > 0 {
		ok := max(p.DoneSteps-p.FailedSteps, 0)
		v.DonePct = min(100, ok*100/p.TotalSteps)
		v.FailPct = min(100-v.DonePct, p.FailedSteps*100/p.TotalSteps)
	}
	return v
}

// shortID trims the "run_"/"sess_" prefix and keeps the first 8 characters.
func shortID(id string) string {
	s := id
	if i := strings.IndexByte(s, '_'); i >= 0 && i < 6 {
		s = s[i+1:]
	}
	if len(s) > 8 {
		s = s[:8]
	}
	return s
}

// secretNames are input names shown as *** even when the schema does not
// mark them (belt and braces: templates should mark them).
var secretNames = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "credential", "cookie"}

// maskInputs replaces the values of secret inputs with "***": those the
// schema marks (writeOnly, format password, x-secret) and those whose name
// says so, at any depth.
func maskInputs(raw json.RawMessage, schema json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "(inputs not shown: not JSON)"
	}
	var sch map[string]any
	_ = json.Unmarshal(schema, &sch)
	doc = maskValue(doc, sch, "")
	// Shown as text (templ escapes it), so & < > stay as they are
	// instead of \u0026 and the like.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return "(inputs not shown)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// maskValue walks v alongside its schema.
func maskValue(v any, sch map[string]any, name string) any {
	if isSecret(sch, name) {
		return "***"
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := sch["properties"].(map[string]any)
		for k, val := range x {
			sub, _ := props[k].(map[string]any)
			x[k] = maskValue(val, sub, k)
		}
		return x
	case []any:
		items, _ := sch["items"].(map[string]any)
		for i, val := range x {
			x[i] = maskValue(val, items, "")
		}
		return x
	}
	return v
}

// isSecret reports whether a value is a secret by its schema or its name.
func isSecret(sch map[string]any, name string) bool {
	if sch != nil {
		if w, _ := sch["writeOnly"].(bool); w {
			return true
		}
		if s, _ := sch["x-secret"].(bool); s {
			return true
		}
		if f, _ := sch["format"].(string); f == "password" {
			return true
		}
	}
	n := strings.ToLower(name)
	for _, s := range secretNames {
		if n != "" && strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// errorView turns a domain error into its view (nil for nil).
func errorView(e *engine.Error) *ErrorView {
	if e == nil {
		return nil
	}
	v := &ErrorView{Code: string(e.Code), Message: contractSpelling(e.Message), Recovery: contractSpelling(e.Recovery)}
	if v.Recovery == "" {
		v.Recovery = e.Code.Recovery()
	}
	if len(e.Details) > 0 {
		b, _ := json.MarshalIndent(e.Details, "", "  ")
		v.Details = string(b)
	}
	return v
}

// maxShownResult bounds the result a run page shows: a longer one is cut
// to a prefix of whole items as MCP replies are (engine.InlineResult,
// naming the artifact that holds everything).
const maxShownResult = 256 << 10

// shownResult is the part of a run's result its page shows.
func shownResult(raw []byte) []byte {
	out, _ := engine.InlineResult(raw, maxShownResult)
	return out
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
)

// Replies sized for a model. Every tool reply has a budget, the
// profile's maxInlineBytes (--max-inline-bytes, default 64 KiB), measured
// on the reply's JSON (the text block; structuredContent is the same
// JSON). A run's inline result that does not fit is cut to a prefix of
// whole items of its largest list (pages, screenshots, steps…) and gains
//
//	truncated: true, itemsInline: k, itemsTotal: n, artifactId
//
// where artifactId names the artifact that holds every item: the
// template's own (pages.json) or, for a result that names none, result.json,
// which the engine stores whole when the run finishes with a result over
// the budget. The stored result is never cut; only replies are.

const (
	// DefaultMaxInlineBytes is the default reply budget.
	DefaultMaxInlineBytes = 64 << 10
	// MinInlineBytes is the smallest budget accepted: a run's own fields
	// and the truncation marker need room.
	MinInlineBytes = 4 << 10
)

// InlineResult returns result cut to at most budget bytes as described
// above, and whether it was cut. A result that fits, or budget <= 0, is
// returned as it is.
func InlineResult(result json.RawMessage, budget int) (json.RawMessage, bool) {
	if budget <= 0 || len(result) <= budget {
		return result, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(result, &fields); err != nil || fields == nil {
		return cutWhole(len(result), "", budget), true
	}
	var artifactID string
	_ = json.Unmarshal(fields["artifactId"], &artifactID)
	key, items := largestList(fields)
	if key == "" {
		return cutWhole(len(result), artifactID, budget), true
	}
	// Sizes add up: the object with an empty list, then each item and its
	// comma. Items are compacted so their length is what Marshal writes.
	for i, it := range items {
		var b bytes.Buffer
		if json.Compact(&b, it) == nil {
			items[i] = b.Bytes()
		}
	}
	fields["truncated"] = json.RawMessage("true")
	fields["itemsTotal"] = intJSON(len(items))
	fields["itemsInline"] = intJSON(len(items))
	fields[key] = json.RawMessage("[]")
	base, err := json.Marshal(fields)
	if err != nil {
		return cutWhole(len(result), artifactID, budget), true
	}
	k, size := 0, len(base)
	for k < len(items) {
		add := len(items[k])
		if k > 0 {
			add++
		}
		if size+add > budget {
			break
		}
		size += add
		k++
	}
	if size > budget {
		return cutWhole(len(result), artifactID, budget), true
	}
	list, _ := json.Marshal(items[:k])
	fields[key] = list
	fields["itemsInline"] = intJSON(k)
	out, err := json.Marshal(fields)
	if err != nil {
		return cutWhole(len(result), artifactID, budget), true
	}
	return out, true
}

// largestList returns the key of the longest (in bytes) top-level array of
// fields and its items ("" when there is none).
func largestList(fields map[string]json.RawMessage) (string, []json.RawMessage) {
	var (
		key   string
		items []json.RawMessage
		size  int
	)
	for k, v := range fields {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] != '[' || len(v) <= size {
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			continue
		}
		key, items, size = k, list, len(v)
	}
	return key, items
}

// cutWhole stands for a result with no list to cut: its size and the
// artifact that holds it.
func cutWhole(n int, artifactID string, budget int) json.RawMessage {
	m := map[string]any{"truncated": true, "resultBytes": n, "itemsInline": 0}
	if artifactID != "" {
		m["artifactId"] = artifactID
	}
	b, _ := json.Marshal(m)
	if len(b) > budget {
		return json.RawMessage(`{"truncated":true}`)
	}
	return b
}

// intJSON is n as JSON.
func intJSON(n int) json.RawMessage {
	b, _ := json.Marshal(n)
	return b
}

// keepWholeResult stores a result over the budget that names no artifact
// as result.json and returns the result with artifactId naming it (the
// result itself otherwise, or when the artifact cannot be stored: logged).
func (e *Engine) keepWholeResult(ctx context.Context, env *runEnv, res json.RawMessage) json.RawMessage {
	if int64(len(res)) <= e.cfg.MaxInlineBytes {
		return res
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(res, &fields) != nil || fields == nil || fields["artifactId"] != nil {
		return res
	}
	id, err := env.PutArtifact(ctx, "result.json", "application/json", res)
	if err != nil {
		env.log.Warn("storing the whole result failed", "err", err)
		return res
	}
	fields["artifactId"], _ = json.Marshal(id)
	out, err := json.Marshal(fields)
	if err != nil {
		return res
	}
	return out
}

package templates

import (
	"context"
	"encoding/json"
	"io"

	"github.com/browsertask/browsertask/engine"
)

// pages.json is written as it is produced: the pages are read back from
// their checkpoints one at a time and each is encoded straight into the
// artifact (engine.ItemStreamer), so a 2000-page crawl with 1000 links a
// page never has more than one page's output in memory. The bytes are the
// ones json.MarshalIndent(pages, "", "  ") wrote when the list was built
// whole. The pool keeps only each page's slim output (slimOutput) for the
// run's result.

// pagesWriter writes a JSON array of pages, one element at a time, as
// json.MarshalIndent with a two-space indent would.
type pagesWriter struct {
	w io.Writer
	n int
}

// add writes one page. Each page is one Write call, so the engine's
// redaction of a run's secrets sees whole pages.
func (p *pagesWriter) add(page any) error {
	b, err := json.MarshalIndent(page, "  ", "  ")
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "encode pages.json: %v", err)
	}
	sep := ",\n  "
	if p.n == 0 {
		sep = "[\n  "
	}
	p.n++
	if _, err := p.w.Write(append([]byte(sep), b...)); err != nil {
		return engine.Wrap(engine.ExecutionError, err, "write pages.json: %v", err)
	}
	return nil
}

// close ends the array.
func (p *pagesWriter) close() error {
	end := "\n]"
	if p.n == 0 {
		end = "[]"
	}
	if _, err := io.WriteString(p.w, end); err != nil {
		return engine.Wrap(engine.ExecutionError, err, "write pages.json: %v", err)
	}
	return nil
}

// streamPages stores pages.json from the pages each gives (it calls add
// once per page, in order) and returns the artifact's id. Errors:
// EXECUTION_ERROR, ctx's cause when ctx ended.
func streamPages(ctx context.Context, env engine.Env, name string, each func(add func(page any) error) error) (string, error) {
	id, err := env.PutArtifactStream(ctx, name, "application/json", func(w io.Writer) error {
		pw := &pagesWriter{w: w}
		if err := each(pw.add); err != nil {
			return err
		}
		return pw.close()
	})
	if err != nil && ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	return id, err
}

// checkpointsInOrder calls fn with each position of indexes and the
// checkpoint at that index (Output and Error nil when there is none, or
// the index is -1), reading one checkpoint at a time. Errors: the
// store's, fn's.
func checkpointsInOrder(ctx context.Context, env engine.Env, indexes []int, fn func(pos int, it engine.Item) error) error {
	for pos, idx := range indexes {
		it := engine.Item{Index: idx}
		if idx >= 0 {
			err := env.EachItem(ctx, engine.ItemsQuery{Indexes: []int{idx}}, func(got engine.Item) error {
				it = got
				return nil
			})
			if err != nil {
				return err
			}
		}
		if err := fn(pos, it); err != nil {
			return err
		}
	}
	return nil
}

// maxResultBytes bounds the fields the run's result holds (and the pool
// keeps in memory for it) over all pages: once the slim outputs kept so
// far reach 8 MiB, a page's entry in the result has fields {} and
// fieldsOmitted: true (pages.json still has them). With the per-page
// caps (200000 characters of fields) a result would otherwise grow with
// the number of pages alone.
const maxResultBytes = 8 << 20

// withoutFields is a slim output past maxResultBytes: its fields dropped
// and marked as omitted.
func withoutFields(slim json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(slim, &m) != nil || m == nil {
		return slim
	}
	m["fields"], m["fieldsCapped"] = json.RawMessage("{}"), nil
	delete(m, "fieldsCapped")
	m["fieldsOmitted"] = json.RawMessage("true")
	// The content formats too (formats_content.go): pages.json and
	// pages.md have them.
	for _, k := range []string{"markdown", "html", "metadata"} {
		if _, ok := m[k]; ok {
			delete(m, k)
			m["contentOmitted"] = json.RawMessage("true")
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return slim
	}
	return b
}

// slimOutput is a page's checkpointed output without what only pages.json
// shows (text, links, the crawl frontier's record): what the pool keeps in
// memory for the run's result. Anything that is not a JSON object is kept
// as it is.
func slimOutput(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	for _, k := range []string{"text", "links", "frontier"} {
		delete(m, k)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

package engine

import (
	"bufio"
	"context"
	"io"
	"os"
	"time"

	"github.com/google/uuid"
)

// Bounded memory whatever the result: a template writes a large artifact
// (pages.json of a 2000-page crawl) as it produces it, item by item, from
// the checkpoints it reads back one at a time, instead of assembling the
// whole file in memory. The bytes go to a temporary file first, then into
// the store in one transaction (PutArtifactFrom, one chunk in memory at a
// time): a crash mid-write leaves no visible, half-written artifact, only
// a temporary file the operating system's temp cleaning removes, and the
// database's write lock is held only while the finished file is copied in,
// never while the template is still producing it.

// ItemsQuery selects the checkpoints Store.EachItem reads.
type ItemsQuery struct {
	RunID string
	// Indexes, when set, selects these indexes in this order (an index
	// without a checkpoint is skipped); otherwise checkpoints with an
	// index above After (-1: all) in index order, at most Limit (0: no
	// limit).
	Indexes []int
	After   int
	Limit   int
	// NoOutput leaves Item.Output nil (counting, listing keys and
	// statuses without reading the outputs).
	NoOutput bool
}

// StreamStore is the part of Store that lets results be written and read
// without holding them whole in memory.
type StreamStore interface {
	// EachItem calls fn with each checkpoint q selects, one at a time,
	// from one snapshot; fn's error stops it and is returned.
	EachItem(ctx context.Context, q ItemsQuery, fn func(Item) error) error
	// PutArtifactFrom stores artifact a of a.Size bytes read from r as
	// PutArtifact does (one transaction, an "artifact" event), holding one
	// chunk in memory at a time. Errors: as PutArtifact; an error when r
	// ends before a.Size bytes. Unlike PutArtifact it is not redacted on
	// the way in (a secret could straddle two reads): its one caller,
	// PutArtifactStream, redacts each write before it reaches r.
	PutArtifactFrom(ctx context.Context, a Artifact, r io.Reader) error
}

// ItemStreamer is the part of Env that reads a run's checkpoints back and
// writes an artifact as it is produced.
type ItemStreamer interface {
	// EachItem calls fn with this run's checkpoints q selects (q.RunID is
	// ignored), one at a time.
	EachItem(ctx context.Context, q ItemsQuery, fn func(Item) error) error
	// PutArtifactStream stores the bytes write produces as an artifact
	// and returns its id. write should pass whole items to each Write
	// call: a text artifact of a run with secrets is redacted one Write at
	// a time. Errors: EXECUTION_ERROR; write's own error.
	PutArtifactStream(ctx context.Context, name, mimeType string, write func(w io.Writer) error) (string, error)
}

// EachItem reads this run's checkpoints (ItemStreamer).
func (v *runEnv) EachItem(ctx context.Context, q ItemsQuery, fn func(Item) error) error {
	q.RunID = v.run.RunID
	if err := v.e.store.EachItem(ctx, q, fn); err != nil {
		if _, ok := err.(*Error); ok {
			return err
		}
		return Wrap(ExecutionError, err, "read checkpoints: %v", err)
	}
	return nil
}

// redactWriter redacts each Write with the run's secret values.
type redactWriter struct {
	w      io.Writer
	values []string
}

func (r redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, redactText(string(p), r.values)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// PutArtifactStream writes an artifact as it is produced (ItemStreamer).
func (v *runEnv) PutArtifactStream(ctx context.Context, name, mimeType string, write func(w io.Writer) error) (string, error) {
	f, err := os.CreateTemp("", "browsertask-artifact-*")
	if err != nil {
		return "", Wrap(ExecutionError, err, "store artifact %s: temporary file: %v", name, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := bufio.NewWriterSize(f, 64<<10)
	cw := &countWriter{w: buf}
	var w io.Writer = cw
	if vals := v.e.secrets.values(v.run.RunID); len(vals) > 0 && IsTextMime(mimeType) {
		w = redactWriter{w: cw, values: vals}
	}
	if err := write(w); err != nil {
		return "", err
	}
	if err := buf.Flush(); err != nil {
		return "", Wrap(ExecutionError, err, "store artifact %s: %v", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", Wrap(ExecutionError, err, "store artifact %s: %v", name, err)
	}
	now := v.e.now()
	a := Artifact{
		ID: "art_" + uuid.NewString(), RunID: v.run.RunID, Name: name, MimeType: mimeType,
		Size: cw.n, CreatedAt: now, ExpiresAt: now + v.e.cfg.ArtifactTTL.Milliseconds(),
	}
	// As writeCtx, with time for the size (at least 4 MiB/s).
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second+time.Duration(cw.n/(4<<20))*time.Second)
	defer cancel()
	if err := v.e.store.PutArtifactFrom(wctx, a, bufio.NewReaderSize(f, 64<<10)); err != nil {
		return "", Wrap(ExecutionError, err, "store artifact %s: %v", name, err)
	}
	return a.ID, nil
}

package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// streamTemplate checkpoints `items` outputs of `size` bytes, each holding
// the input's secret pin, then writes them back into one text artifact
// through PutArtifactStream, one Write per item read back with EachItem;
// failAt > 0 makes the write fail after that many items.
type streamTemplate struct{}

func (streamTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "test_stream", Version: 1, Versions: []int{1}, Title: "stream", Description: "test",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"items":{"type":"integer"},"size":{"type":"integer"},
			"failAt":{"type":"integer"},"pin":{"type":"string","x-secret":true}}}`),
		TrustLevel: "any",
	}
}

func (streamTemplate) Check(json.RawMessage, engine.Profile) error { return nil }

func (streamTemplate) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	var in struct {
		Items, Size, FailAt int
		Pin                 string
	}
	_ = json.Unmarshal(env.Inputs(), &in)
	for i := range in.Items {
		out, _ := json.Marshal(map[string]string{"pin": in.Pin, "pad": strings.Repeat("x", in.Size)})
		if err := env.Checkpoint(ctx, engine.Item{Index: i, Key: fmt.Sprint(i), Status: engine.ItemSucceeded, Output: out},
			engine.Progress{DoneSteps: i + 1, TotalSteps: in.Items}); err != nil {
			return nil, err
		}
	}
	id, err := env.PutArtifactStream(ctx, "all.ndjson", "application/x-ndjson", func(w io.Writer) error {
		n := 0
		return env.EachItem(ctx, engine.ItemsQuery{After: -1}, func(it engine.Item) error {
			if n++; in.FailAt > 0 && n > in.FailAt {
				return engine.Errorf(engine.StepExecutionFailed, "asked to fail after %d items", in.FailAt)
			}
			// The template writes the secret itself: the engine redacts.
			_, err := fmt.Fprintf(w, "%d %s %d\n", it.Index, in.Pin, len(it.Output))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return &engine.Outcome{Result: map[string]any{"artifactId": id}}, nil
}

// streamHarness runs streamTemplate on a fresh database; run submits
// inputs and waits for the run's end.
func streamHarness(t *testing.T) (*engine.Engine, func(in string) *engine.Run) {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{streamTemplate{}},
		Config: engine.Config{PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; store.Close() })
	run := func(in string) *engine.Run {
		res, err := eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "test_stream", Inputs: json.RawMessage(in), Mode: engine.ModeAsync})
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer wcancel()
		r, err := eng.Wait(wctx, res.Run.RunID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return eng, run
}

// TestPutArtifactStream: an artifact written as it is produced holds every
// item in order with the run's secret redacted, is read back whole; one
// whose writing fails leaves no artifact at all (never a partial one).
func TestPutArtifactStream(t *testing.T) { synctest.Test(t, testPutArtifactStream) }

func testPutArtifactStream(t *testing.T) {
	eng, run := streamHarness(t)
	const pin = "PinZq9-4711"
	r := run(`{"items":300,"size":70000,"pin":"` + pin + `"}`)
	if r.Status != engine.StatusSucceeded || len(r.ArtifactIDs) != 1 {
		t.Fatalf("run %s, artifacts %v, error %v", r.Status, r.ArtifactIDs, r.Error)
	}
	b, err := eng.ArtifactBytes(context.Background(), r.ArtifactIDs[0], 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 300 || lines[0] != "0 *** 70022" || lines[299] != "299 *** 70022" || strings.Contains(string(b), pin) {
		t.Fatalf("artifact: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}

	r = run(`{"items":5,"size":10,"failAt":3,"pin":"` + pin + `"}`)
	if r.Status != engine.StatusFailed || r.Error == nil || r.Error.Code != engine.StepExecutionFailed || len(r.ArtifactIDs) != 0 {
		t.Fatalf("failed write: run %s, error %v, artifacts %v", r.Status, r.Error, r.ArtifactIDs)
	}
}

// TestDetailReadsABoundedSlice (issue 26 item 3): the run page's Detail
// reads the first 500 checkpoints with their outputs reduced to top-level
// scalars and counts the others; before, it loaded every output whole
// (1.7 GB to open a 1000-page crawl with 2000 links a page).
func TestDetailReadsABoundedSlice(t *testing.T) { synctest.Test(t, testDetailReadsABoundedSlice) }

func testDetailReadsABoundedSlice(t *testing.T) {
	eng, run := streamHarness(t)
	r := run(`{"items":620,"size":5000,"pin":"PinZq9-4711"}`)
	d, err := eng.Detail(context.Background(), r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != engine.DetailItemLimit || d.ItemsTotal != 620 {
		t.Fatalf("%d items, total %d", len(d.Items), d.ItemsTotal)
	}
	if got := string(d.Items[499].Output); got != `{"pin":"***"}` || d.Items[499].Index != 499 {
		t.Fatalf("item 499: index %d, output %.100s", d.Items[499].Index, got)
	}
}

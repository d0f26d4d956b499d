package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/browsertask/browsertask/engine"
)

// fakeEngine implements Engine in memory for the MCP layer's tests (the real
// engine is tested in its own package and black-box through the binary).
// Templates: "instant" succeeds on submit, "failing" fails on submit,
// "slow" stays queued until the test finishes it or it is cancelled.
type fakeEngine struct {
	mu       sync.Mutex
	runs     map[string]*engine.Run
	keys     map[string]string // idempotencyKey -> runId
	submits  []engine.SubmitRequest
	cancels  []cancelCall
	lists    []engine.ListQuery
	waiting  int
	changed  chan struct{} // closed and replaced on every change
	seq      int
	budgetMs int64
}

type cancelCall struct{ runID, reason string }

func newFakeEngine() *fakeEngine {
	return &fakeEngine{runs: map[string]*engine.Run{}, keys: map[string]string{}, changed: make(chan struct{}), budgetMs: 300}
}

// broadcast wakes every waiter; callers hold f.mu.
func (f *fakeEngine) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeEngine) Submit(_ context.Context, r engine.SubmitRequest) (*engine.SubmitResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submits = append(f.submits, r)
	if r.IdempotencyKey != "" {
		if id, ok := f.keys[r.TemplateID+"/"+r.IdempotencyKey]; ok {
			c := *f.runs[id]
			return &engine.SubmitResult{Run: &c, Deduplicated: true}, nil
		}
	}
	switch r.TemplateID {
	case "instant", "failing", "slow":
	default:
		return nil, engine.Errorf(engine.TemplateNotFound, "template %q does not exist", r.TemplateID)
	}
	if len(r.Inputs) > 0 {
		var m map[string]any
		_ = json.Unmarshal(r.Inputs, &m)
		for k := range m {
			if k != "urls" {
				return nil, engine.Errorf(engine.InvalidParameter, "inputs.%s: unknown property", k).
					WithDetails(map[string]any{"field": "inputs." + k})
			}
		}
	}
	f.seq++
	run := &engine.Run{
		RunID: fmt.Sprintf("run_%04d", f.seq), TemplateID: r.TemplateID, TemplateVersion: 1,
		SessionID: "sess_1", OwnsSession: true, Status: engine.StatusQueued, Mode: r.Mode,
		CreatedAt: int64(1000 + f.seq), UpdatedAt: int64(1000 + f.seq), ExpiresAt: 99999,
	}
	switch r.TemplateID {
	case "instant":
		run.Status, run.Result = engine.StatusSucceeded, json.RawMessage(`{"pages":1}`)
		run.ArtifactIDs = []string{"art_1"}
	case "failing":
		run.Status, run.Error = engine.StatusFailed, engine.Errorf(engine.StepExecutionFailed, "step 2 failed")
	}
	f.runs[run.RunID] = run
	if r.IdempotencyKey != "" {
		f.keys[r.TemplateID+"/"+r.IdempotencyKey] = run.RunID
	}
	c := *run
	return &engine.SubmitResult{Run: &c}, nil
}

func (f *fakeEngine) Get(_ context.Context, id string) (*engine.Run, error) {
	if id == "run_panic" {
		panic("fake engine asked to panic")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.runs[id]
	if !ok {
		return nil, engine.Errorf(engine.RunNotFound, "run %q does not exist or expired", id)
	}
	c := *r
	return &c, nil
}

func (f *fakeEngine) List(_ context.Context, q engine.ListQuery) (*engine.RunList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists = append(f.lists, q)
	var runs []*engine.Run
	for _, r := range f.runs {
		if q.Status == "" || string(r.Status) == q.Status {
			c := *r
			runs = append(runs, &c)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].CreatedAt > runs[j].CreatedAt })
	total := len(runs)
	if q.Offset < len(runs) {
		runs = runs[q.Offset:]
	} else {
		runs = nil
	}
	if len(runs) > q.Limit {
		runs = runs[:q.Limit]
	}
	return &engine.RunList{Runs: runs, Total: total, Limit: q.Limit, Offset: q.Offset}, nil
}

func (f *fakeEngine) Cancel(_ context.Context, id, reason string) (*engine.CancelResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, cancelCall{id, reason})
	r, ok := f.runs[id]
	if !ok {
		return nil, engine.Errorf(engine.RunNotFound, "run %q does not exist or expired", id)
	}
	if r.Status.Terminal() {
		return &engine.CancelResult{RunID: id, Status: r.Status, Reason: "run already " + string(r.Status)}, nil
	}
	r.Status, r.Error = engine.StatusCanceled, engine.Errorf(engine.RunCanceled, "run canceled: %s", reason)
	f.broadcast()
	return &engine.CancelResult{Success: true, RunID: id, Status: r.Status}, nil
}

func (f *fakeEngine) Wait(ctx context.Context, id string, onChange func(*engine.Run)) (*engine.Run, error) {
	f.mu.Lock()
	f.waiting++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.waiting--
		f.mu.Unlock()
	}()
	for {
		f.mu.Lock()
		r, ok := f.runs[id]
		if !ok {
			f.mu.Unlock()
			return nil, engine.Errorf(engine.RunNotFound, "run %q does not exist", id)
		}
		c := *r
		ch := f.changed
		f.mu.Unlock()
		if c.Status.Terminal() {
			return &c, nil
		}
		if onChange != nil {
			onChange(&c)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
	}
}

func (f *fakeEngine) ReadArtifact(_ context.Context, id string, offset, length int64) (*engine.ArtifactChunk, error) {
	if id != "art_1" {
		return nil, engine.Errorf(engine.ArtifactNotFound, "artifact %q does not exist", id)
	}
	data := "hello world"
	if offset > int64(len(data)) {
		return nil, engine.Errorf(engine.InvalidParameter, "offset %d is past the end (%d)", offset, len(data))
	}
	if length <= 0 || offset+length > int64(len(data)) {
		length = int64(len(data)) - offset
	}
	return &engine.ArtifactChunk{ArtifactID: id, MimeType: "text/plain", TotalSize: int64(len(data)), Offset: offset,
		Length: length, Data: data[offset : offset+length], Complete: offset+length == int64(len(data))}, nil
}

func (f *fakeEngine) Templates() []engine.TemplateInfo {
	return []engine.TemplateInfo{{
		TemplateID: "instant", Version: 1, Versions: []int{1}, Title: "Instant", Description: "Finishes at once.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"urls":{"type":"array"}},"additionalProperties":false}`),
		ResultSchema: json.RawMessage(`{"type":"object"}`), TrustLevel: "any", EstimatedStepsHint: "1",
	}}
}

func (f *fakeEngine) Profile() engine.Profile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return engine.Profile{
		MaxConcurrentRuns: 5, MaxURLs: 1000, MaxTabsPerSession: 20, SyncTimeoutMs: 300000, AsyncTimeoutMs: 600000,
		ArtifactMaxChunkSize: 262144, ArtifactTTLMs: 86400000, RunTTLMs: 1800000, TrustLevel: "local",
		AutoSyncBudgetMs: f.budgetMs, Version: "test",
	}
}

// setProgress updates a run's progress (and marks it running).
func (f *fakeEngine) setProgress(id string, done, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runs[id]
	r.Status = engine.StatusRunning
	r.Progress = engine.Progress{DoneSteps: done, TotalSteps: total, Message: fmt.Sprintf("%d of %d", done, total)}
	f.broadcast()
}

// finish makes a run succeed.
func (f *fakeEngine) finish(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runs[id]
	r.Status, r.Result = engine.StatusSucceeded, json.RawMessage(`{"ok":true}`)
	f.broadcast()
}

func (f *fakeEngine) snapshot() (submits int, cancels []cancelCall, waiting int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.submits), append([]cancelCall(nil), f.cancels...), f.waiting
}

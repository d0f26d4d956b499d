package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// artifactResult holds scenario 4's figures.
type artifactResult struct {
	Size    int
	MBps    []float64
	Median  float64
	Chunks  int
	Elapsed []time.Duration
}

// benchArtifact stores a random binary artifact of size bytes for a run of
// the daemon (through a second handle on its database, as a peer process
// would) and reads it back over HTTP with get_artifact, repeats times.
func benchArtifact(ctx context.Context, cl *client, dbPath string, size, repeats int) (*artifactResult, error) {
	runID, err := cl.submitAsync(ctx, "dev_echo", map[string]any{"sleepMs": 0})
	if err != nil {
		return nil, err
	}
	if _, err := cl.waitRun(ctx, runID, 10*time.Millisecond); err != nil {
		return nil, err
	}
	data := make([]byte, size)
	_, _ = rand.Read(data)
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	a := engine.Artifact{ID: fmt.Sprintf("art_bench_%d", now), RunID: runID, Name: "random.bin",
		MimeType: "application/octet-stream", CreatedAt: now, ExpiresAt: now + 3600_000}
	err = store.PutArtifact(ctx, a, data)
	store.Close()
	if err != nil {
		return nil, err
	}
	res := &artifactResult{Size: size, Chunks: (size + 262143) / 262144}
	for r := 0; r < repeats; r++ {
		start := time.Now()
		got, err := cl.readArtifact(ctx, a.ID, false)
		if err != nil {
			return nil, err
		}
		d := time.Since(start)
		if !bytes.Equal(got, data) {
			return nil, fmt.Errorf("artifact read back differs (%d bytes, want %d)", len(got), len(data))
		}
		res.Elapsed = append(res.Elapsed, d)
		res.MBps = append(res.MBps, float64(size)/1e6/d.Seconds())
	}
	res.Median = median(res.MBps)
	return res, nil
}

package db

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestArtifactWindows(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	data := make([]byte, 1<<20+17)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	a := engine.Artifact{ID: "art_1", RunID: "run_1", Name: "blob.bin", MimeType: "application/octet-stream",
		CreatedAt: 10, ExpiresAt: 1000}
	if err := d.PutArtifact(ctx, a, data); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := d.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifact_chunks WHERE artifact_id = 'art_1'`).Scan(&chunks); err != nil || chunks != 5 {
		t.Fatalf("chunk rows = %d, %v; want 5 (4 x 256 KiB + 17 bytes)", chunks, err)
	}
	got, err := d.GetArtifact(ctx, "art_1")
	a.Size = int64(len(data))
	if err != nil || *got != a {
		t.Fatalf("GetArtifact = %+v, %v; want %+v", got, err, a)
	}
	size := int64(len(data))
	windows := [][2]int64{{0, size}, {0, size + 100}, {0, 1}, {size - 1, 10}, {size, 5}, {chunkSize - 1, 2},
		{chunkSize, chunkSize}, {chunkSize - 3, 3*chunkSize + 7}, {4 * chunkSize, 17}, {5, 0}}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 40 {
		off := rng.Int64N(size + 1)
		windows = append(windows, [2]int64{off, rng.Int64N(3 * chunkSize)})
	}
	for _, w := range windows {
		b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: w[0], Length: w[1]})
		if err != nil {
			t.Fatalf("ReadArtifact(%d, %d): %v", w[0], w[1], err)
		}
		end := min(w[0]+w[1], size)
		if !bytes.Equal(b, data[w[0]:end]) {
			t.Fatalf("ReadArtifact(%d, %d): %d bytes differ from the original window", w[0], w[1], len(b))
		}
	}
	var whole []byte
	for off := int64(0); off < size; off += 100_000 {
		b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: off, Length: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		whole = append(whole, b...)
	}
	if !bytes.Equal(whole, data) {
		t.Fatal("sequential reads do not rebuild the artifact")
	}
	if _, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: size + 1, Length: 1}); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("offset past the end = %v, want INVALID_PARAMETER", err)
	}
	if _, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_nope", Length: 1}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("unknown artifact = %v, want ErrNotFound", err)
	}
	// Only the needed chunks are read: with chunk 0 gone, a window inside
	// chunk 3 still reads, while one touching chunk 0 reports the hole.
	if _, err := d.w.ExecContext(ctx, `DELETE FROM artifact_chunks WHERE artifact_id = 'art_1' AND seq = 0`); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: 3*chunkSize + 5, Length: 100}); err != nil || !bytes.Equal(b, data[3*chunkSize+5:3*chunkSize+105]) {
		t.Fatalf("window in chunk 3 with chunk 0 missing = %v", err)
	}
	if _, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: 10, Length: 10}); err == nil {
		t.Fatal("window in a missing chunk read without error")
	}
	// The artifact event was appended to the run.
	evs, _ := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1", AfterSeq: 1})
	if len(evs) != 1 || evs[0].Type != "artifact" ||
		string(evs[0].Data) != `{"artifactId":"art_1","name":"blob.bin","mimeType":"application/octet-stream","size":1048593}` {
		t.Fatalf("artifact event = %+v", evs)
	}
}

func TestPutArtifactAllOrNothing(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	a := engine.Artifact{ID: "art_1", RunID: "run_1", Name: "a", MimeType: "text/plain", CreatedAt: 1, ExpiresAt: 100}
	if err := d.PutArtifact(ctx, a, bytes.Repeat([]byte("a"), 3*chunkSize)); err != nil {
		t.Fatal(err)
	}
	countChunks := func() int {
		var n int
		if err := d.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifact_chunks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := countChunks()
	// Duplicate id: ErrConflict, and none of the new chunks stay behind.
	err := d.PutArtifact(ctx, a, bytes.Repeat([]byte("b"), 2*chunkSize+1))
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("duplicate PutArtifact = %v, want ErrConflict", err)
	}
	// Unknown run: the event append fails after the chunks were written,
	// and the whole transaction is rolled back.
	err = d.PutArtifact(ctx, engine.Artifact{ID: "art_2", RunID: "run_nope", CreatedAt: 1, ExpiresAt: 100},
		bytes.Repeat([]byte("c"), 2*chunkSize+1))
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("PutArtifact for unknown run = %v, want ErrNotFound", err)
	}
	if after := countChunks(); after != before {
		t.Fatalf("chunk rows %d after failed puts, want %d", after, before)
	}
	if _, err := d.GetArtifact(ctx, "art_2"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("failed artifact row exists: %v", err)
	}
	b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Length: 4})
	if err != nil || string(b) != "aaaa" {
		t.Fatalf("original artifact after failed duplicate = %q, %v", b, err)
	}
	// An empty artifact has no chunks and reads as empty.
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_0", RunID: "run_1", CreatedAt: 1, ExpiresAt: 100}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_0", Length: 10}); err != nil || len(b) != 0 {
		t.Fatalf("empty artifact read = %q, %v", b, err)
	}
}

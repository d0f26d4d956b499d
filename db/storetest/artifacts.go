package storetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testArtifacts: artifacts are stored whole or not at all, read back in
// any window, and past their expiry leave a tombstone (Expired) that reads
// as ARTIFACT_EXPIRED until the janitor removes it.
func testArtifacts(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("SizeCountsTheBytes", func(t *testing.T) {
		// doctor prints SizeBytes; a store that has it counts what it
		// keeps: 2 MiB of incompressible bytes make it at least that much
		// bigger.
		s := nh(t).Store
		sized, ok := s.(interface {
			SizeBytes(ctx context.Context) (int64, error)
		})
		if !ok {
			t.Skip("this store does not report its size")
		}
		ctx := t.Context()
		before, err := sized.SizeBytes(ctx)
		if err != nil || before <= 0 {
			t.Fatalf("SizeBytes of a new database = %d, %v; want > 0", before, err)
		}
		rng := mrand.New(mrand.NewPCG(3, 4))
		data := make([]byte, 8*chunkSize)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		a := engine.Artifact{ID: "art_size", Name: "blob.bin", MimeType: "application/octet-stream",
			CreatedAt: base, ExpiresAt: base + 1000}
		if err := s.PutLooseArtifact(ctx, a, data); err != nil {
			t.Fatal(err)
		}
		after, err := sized.SizeBytes(ctx)
		if err != nil || after-before < int64(len(data)) {
			t.Fatalf("SizeBytes %d before, %d (%v) after storing %d bytes; want it to grow by at least that", before, after, err, len(data))
		}
	})
	t.Run("ReadWindowsAcrossChunks", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		rng := mrand.New(mrand.NewPCG(1, 2))
		data := make([]byte, 4*chunkSize+17)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		a := engine.Artifact{ID: "art_1", RunID: "run_1", Name: "blob.bin", MimeType: "application/octet-stream",
			CreatedAt: base + 10, ExpiresAt: base + 1000}
		if err := s.PutArtifact(ctx, a, data); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetArtifact(ctx, "art_1")
		a.Size = int64(len(data))
		if err != nil || *got != a {
			t.Fatalf("GetArtifact = %+v, %v; want %+v", got, err, a)
		}
		size := int64(len(data))
		windows := [][2]int64{{0, size}, {0, size + 100}, {0, 1}, {size - 1, 10}, {chunkSize - 1, 2},
			{chunkSize, chunkSize}, {chunkSize - 3, 3*chunkSize + 7}, {4 * chunkSize, 17}, {4*chunkSize - 1, 1 << 40}}
		for range 40 {
			windows = append(windows, [2]int64{rng.Int64N(size + 1), rng.Int64N(3 * chunkSize)})
		}
		for _, w := range windows {
			b := mustRead(t, s, "art_1", w[0], w[1])
			if end := min(w[0]+w[1], size); !bytes.Equal(b, data[w[0]:end]) {
				t.Fatalf("ReadArtifact(%d, %d): %d bytes, not the original window of %d", w[0], w[1], len(b), end-w[0])
			}
		}
		var whole []byte
		for off := int64(0); off < size; off += 100_000 {
			whole = append(whole, mustRead(t, s, "art_1", off, 100_000)...)
		}
		if !bytes.Equal(whole, data) {
			t.Fatal("sequential reads do not rebuild the artifact")
		}
		// The artifact event was appended to the run, and the run lists it.
		evs := events(t, s, "run_1")
		if !reflect.DeepEqual(eventTypes(evs), []string{"created", "artifact"}) || evs[1].At != base+10 {
			t.Fatalf("events = %+v", evs)
		}
		checkJSON(t, "artifact event", evs[1].Data,
			fmt.Sprintf(`{"artifactId":"art_1","name":"blob.bin","mimeType":"application/octet-stream","size":%d}`, size))
		if r := mustGet(t, s, "run_1"); !reflect.DeepEqual(r.ArtifactIDs, []string{"art_1"}) {
			t.Fatalf("run's artifact ids = %v", r.ArtifactIDs)
		}
	})

	t.Run("ReadBounds", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_1", RunID: "run_1", CreatedAt: base, ExpiresAt: base + 100},
			[]byte("0123456789")); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			off, length int64
			want        string
		}{{0, 10, "0123456789"}, {3, 4, "3456"}, {8, 100, "89"}, {10, 5, ""}, {5, 0, ""}, {5, -1, ""}, {5, math.MaxInt64, "56789"}} {
			if b := mustRead(t, s, "art_1", c.off, c.length); string(b) != c.want {
				t.Errorf("ReadArtifact(%d, %d) = %q, want %q", c.off, c.length, b, c.want)
			}
		}
		for _, off := range []int64{11, -1} {
			_, err := s.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: off, Length: 1})
			if engine.CodeOf(err) != engine.InvalidParameter {
				t.Errorf("ReadArtifact(offset %d of 10 bytes) = %v, want INVALID_PARAMETER", off, err)
			}
		}
		_, err := s.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_nope", Length: 1})
		checkErr(t, "ReadArtifact(unknown)", err, engine.ErrNotFound)
		_, err = s.GetArtifact(ctx, "art_nope")
		checkErr(t, "GetArtifact(unknown)", err, engine.ErrNotFound)
	})

	t.Run("PutIsAllOrNothing", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		a := engine.Artifact{ID: "art_1", RunID: "run_1", Name: "a", MimeType: "text/plain", CreatedAt: base, ExpiresAt: base + 100}
		orig := bytes.Repeat([]byte("a"), 3*chunkSize)
		if err := s.PutArtifact(ctx, a, orig); err != nil {
			t.Fatal(err)
		}
		// A duplicate id conflicts and leaves the original whole.
		err := s.PutArtifact(ctx, a, bytes.Repeat([]byte("b"), 2*chunkSize+1))
		checkErr(t, "PutArtifact(duplicate id)", err, engine.ErrConflict)
		err = s.PutLooseArtifact(ctx, a, []byte("c"))
		checkErr(t, "PutLooseArtifact(duplicate id)", err, engine.ErrConflict)
		if b := mustRead(t, s, "art_1", 0, 4*chunkSize); !bytes.Equal(b, orig) {
			t.Fatalf("original artifact after failed duplicates: %d bytes, first %q", len(b), b[:min(len(b), 4)])
		}
		if got, err := s.GetArtifact(ctx, "art_1"); err != nil || got.Size != int64(len(orig)) || got.Name != "a" {
			t.Fatalf("GetArtifact after failed duplicates = %+v, %v", got, err)
		}
		// An unknown run: nothing is stored.
		err = s.PutArtifact(ctx, engine.Artifact{ID: "art_2", RunID: "run_nope", CreatedAt: base, ExpiresAt: base + 100},
			bytes.Repeat([]byte("c"), 2*chunkSize+1))
		checkErr(t, "PutArtifact(unknown run)", err, engine.ErrNotFound)
		_, err = s.GetArtifact(ctx, "art_2")
		checkErr(t, "GetArtifact of the failed put", err, engine.ErrNotFound)
		if n := len(events(t, s, "run_1")); n != 2 {
			t.Errorf("%d events, want 2 (created, one artifact)", n)
		}
		// An empty artifact has size 0 and reads as empty.
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_0", RunID: "run_1", CreatedAt: base, ExpiresAt: base + 100}, nil); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetArtifact(ctx, "art_0"); err != nil || got.Size != 0 || got.Expired {
			t.Fatalf("empty artifact = %+v, %v", got, err)
		}
		if b := mustRead(t, s, "art_0", 0, 10); len(b) != 0 {
			t.Fatalf("empty artifact read = %q", b)
		}
		// Size is the stored length, whatever the caller said.
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_3", RunID: "run_1", Size: 999, CreatedAt: base, ExpiresAt: base + 100},
			[]byte("xyz")); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetArtifact(ctx, "art_3"); err != nil || got.Size != 3 {
			t.Fatalf("artifact put with Size 999 and 3 bytes = %+v, %v; want size 3", got, err)
		}
	})

	t.Run("LooseArtifact", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		data := make([]byte, chunkSize+300)
		data[len(data)-1] = 7
		a := engine.Artifact{ID: "art_loose", RunID: "sess_b", Name: "state.json", MimeType: "application/json",
			CreatedAt: base, ExpiresAt: base + 1000}
		if err := s.PutLooseArtifact(ctx, a, data); err != nil {
			t.Fatal(err)
		}
		a.Size = int64(len(data))
		if got, err := s.GetArtifact(ctx, "art_loose"); err != nil || *got != a {
			t.Fatalf("GetArtifact = %+v, %v; want %+v", got, err, a)
		}
		if b := mustRead(t, s, "art_loose", int64(len(data)-1), 10); !bytes.Equal(b, []byte{7}) {
			t.Fatalf("ReadArtifact(last byte) = %v", b)
		}
		if b := mustRead(t, s, "art_loose", 0, int64(len(data))); !bytes.Equal(b, data) {
			t.Fatal("loose artifact does not read back whole")
		}
		// It expires like any artifact.
		if _, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1000, TombstoneBefore: base}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetArtifact(ctx, "art_loose"); err != nil || !got.Expired {
			t.Fatalf("loose artifact after expiry = %+v, %v; want a tombstone", got, err)
		}
	})

	t.Run("ExpiryLeavesTombstone", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		big := bytes.Repeat([]byte{7}, 6*chunkSize)
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_old", RunID: "run_1", MimeType: "application/octet-stream",
			CreatedAt: base + 1, ExpiresAt: base + 100}, big); err != nil {
			t.Fatal(err)
		}
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_new", RunID: "run_1", CreatedAt: base + 2, ExpiresAt: base + 10_000},
			[]byte("x")); err != nil {
			t.Fatal(err)
		}
		// 1 ms before expiry nothing happens.
		if n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 99, Batch: 2}); err != nil || n != 0 {
			t.Fatalf("Purge before expiry = %d, %v; want 0", n, err)
		}
		// At expires_at the bytes go (six 256 KiB chunk rows, in batches
		// of 2) and the row stays as a tombstone: 1 + 6 rows.
		n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 100, Batch: 2})
		if err != nil || n != 1+6 {
			t.Fatalf("Purge at expiry = %d, %v; want 7 (1 tombstone + 6 chunks)", n, err)
		}
		a, err := s.GetArtifact(ctx, "art_old")
		if err != nil || !a.Expired || a.Size != int64(len(big)) || a.ExpiresAt != base+100 || a.RunID != "run_1" {
			t.Fatalf("GetArtifact after expiry = %+v, %v; want a tombstone keeping its metadata", a, err)
		}
		if _, err := s.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_old", Length: 1}); engine.CodeOf(err) != engine.ArtifactExpired {
			t.Fatalf("ReadArtifact of a tombstone = %v, want ARTIFACT_EXPIRED", err)
		}
		if a, err := s.GetArtifact(ctx, "art_new"); err != nil || a.Expired {
			t.Fatalf("live artifact = %+v, %v", a, err)
		}
		if b := mustRead(t, s, "art_new", 0, 10); string(b) != "x" {
			t.Fatalf("live artifact reads %q", b)
		}
		if r := mustGet(t, s, "run_1"); !reflect.DeepEqual(r.ArtifactIDs, []string{"art_old", "art_new"}) {
			t.Errorf("run's artifact ids = %v; the tombstone stays listed", r.ArtifactIDs)
		}
		// The tombstone stays while expires_at >= TombstoneBefore, then goes.
		if n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 200, TombstoneBefore: base + 100, Batch: 10}); err != nil || n != 0 {
			t.Fatalf("Purge(TombstoneBefore = its expiry) = %d, %v; want 0", n, err)
		}
		if n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 200, TombstoneBefore: base + 101, Batch: 10}); err != nil || n != 1 {
			t.Fatalf("Purge(TombstoneBefore past its expiry) = %d, %v; want 1", n, err)
		}
		_, err = s.GetArtifact(ctx, "art_old")
		checkErr(t, "GetArtifact after the tombstone went", err, engine.ErrNotFound)
		_, err = s.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_old", Length: 1})
		checkErr(t, "ReadArtifact after the tombstone went", err, engine.ErrNotFound)
		if r := mustGet(t, s, "run_1"); !reflect.DeepEqual(r.ArtifactIDs, []string{"art_new"}) {
			t.Errorf("run's artifact ids = %v, want [art_new]", r.ArtifactIDs)
		}
	})
}

// mustRead reads a window of an artifact that must succeed.
func mustRead(t *testing.T, s engine.Store, id string, offset, length int64) []byte {
	t.Helper()
	b, err := s.ReadArtifact(t.Context(), engine.ReadArtifactParams{ArtifactID: id, Offset: offset, Length: length})
	if err != nil {
		t.Fatalf("ReadArtifact(%s, %d, %d): %v", id, offset, length, err)
	}
	return b
}

package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testStream: checkpoints are read back one at a time in the order asked
// (EachItem), and an artifact streamed from a reader is stored whole or
// not at all (PutArtifactFrom).
func testStream(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("EachItem", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		mustClaim(t, s, "owner_a", base+10)
		h := engine.Holder{OwnerID: "owner_a", Attempt: 1}
		for i := range 5 {
			it := engine.Item{Index: i, Key: fmt.Sprint("k", i), Status: engine.ItemSucceeded, Output: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
			if i == 3 {
				it.Status, it.Error = engine.ItemFailed, &engine.Error{Code: engine.NavigationTimeout, Message: "slow", Recovery: engine.NavigationTimeout.Recovery()}
			}
			if err := s.SaveItem(ctx, "run_1", h, it, engine.Progress{DoneSteps: i + 1}, base+20); err != nil {
				t.Fatal(err)
			}
		}
		read := func(q engine.ItemsQuery) (idx []int, outs []string) {
			t.Helper()
			q.RunID = "run_1"
			err := s.EachItem(ctx, q, func(it engine.Item) error {
				idx, outs = append(idx, it.Index), append(outs, string(it.Output))
				if it.Index == 3 && (it.Error == nil || it.Error.Code != engine.NavigationTimeout || it.Status != engine.ItemFailed) {
					t.Errorf("item 3 = %+v", it)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return idx, outs
		}
		if idx, outs := read(engine.ItemsQuery{After: -1}); !reflect.DeepEqual(idx, []int{0, 1, 2, 3, 4}) || outs[4] != `{"n":4}` {
			t.Fatalf("all: %v %v", idx, outs)
		}
		if idx, _ := read(engine.ItemsQuery{After: 1, Limit: 2}); !reflect.DeepEqual(idx, []int{2, 3}) {
			t.Fatalf("after 1, limit 2: %v", idx)
		}
		if idx, outs := read(engine.ItemsQuery{Indexes: []int{4, 9, 0}}); !reflect.DeepEqual(idx, []int{4, 0}) || outs[1] != `{"n":0}` {
			t.Fatalf("indexes 4, 9, 0: %v %v", idx, outs)
		}
		if _, outs := read(engine.ItemsQuery{After: -1, NoOutput: true}); !reflect.DeepEqual(outs, []string{"", "", "", "", ""}) {
			t.Fatalf("no output: %q", outs)
		}
		stop := errors.New("stop")
		n := 0
		err := s.EachItem(ctx, engine.ItemsQuery{RunID: "run_1", After: -1}, func(engine.Item) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("fn's error: %v after %d items", err, n)
		}
	})
	t.Run("PutArtifactFrom", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		data := bytes.Repeat([]byte("0123456789abcdef"), (3*chunkSize+100)/16)
		a := engine.Artifact{ID: "art_1", RunID: "run_1", Name: "pages.json", MimeType: "application/json",
			Size: int64(len(data)), CreatedAt: base + 10, ExpiresAt: base + 1000}
		if err := s.PutArtifactFrom(ctx, a, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, s, "art_1", 0, 1<<40); !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes, want %d", len(got), len(data))
		}
		// A reader shorter than announced, or one that fails, stores nothing.
		short := a
		short.ID = "art_2"
		if err := s.PutArtifactFrom(ctx, short, bytes.NewReader(data[:chunkSize+1])); err == nil {
			t.Fatal("a short reader was accepted")
		}
		failing := a
		failing.ID = "art_3"
		boom := errors.New("boom")
		if err := s.PutArtifactFrom(ctx, failing, io.MultiReader(strings.NewReader("partial"), errReader{boom})); !errors.Is(err, boom) {
			t.Fatalf("failing reader: %v", err)
		}
		for _, id := range []string{"art_2", "art_3"} {
			if _, err := s.GetArtifact(ctx, id); !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("%s after a failed write: %v", id, err)
			}
		}
		evs := 0
		for _, e := range events(t, s, "run_1") {
			if e.Type == "artifact" {
				evs++
			}
		}
		if evs != 1 {
			t.Fatalf("%d artifact events, want 1", evs)
		}
	})
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

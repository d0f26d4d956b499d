package storetest

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testListRuns: ListRuns pages newest first by (createdAt, runId), by
// offset or by keyset, with a total of everything the filters match, and
// hides terminal runs past their expiry.
func testListRuns(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("OrderFiltersTotal", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		// Ten runs; pairs share created_at so ties sort by id descending.
		for i := range 10 {
			r := queuedRun(fmt.Sprintf("run_%02d", i), base+100+int64(i/2))
			if i%3 == 0 {
				r.TemplateID = "other"
			}
			if i == 4 {
				r.SessionID = "sess_shared"
			}
			if i == 5 {
				r.ExpiresAt = base + 1 // queued past its expiry: never hidden
			}
			mustCreate(t, s, r)
		}
		// run_00 and run_01 end; at base+5000 run_00 has expired (base+4000)
		// and run_01 has not (base+9000).
		for id, ttl := range map[string]int64{"run_00": 3800, "run_01": 8800} {
			if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: id, Reason: "test",
				Error: engine.Errorf(engine.RunCanceled, "x"), Now: base + 200, RunTTLMs: ttl}); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name  string
			f     engine.RunFilter
			want  []string
			total int
		}{
			{"all", engine.RunFilter{Now: base + 5000},
				[]string{"run_09", "run_08", "run_07", "run_06", "run_05", "run_04", "run_03", "run_02", "run_01"}, 9},
			{"offset page", engine.RunFilter{Now: base + 5000, Limit: 3, Offset: 2}, []string{"run_07", "run_06", "run_05"}, 9},
			{"template", engine.RunFilter{Now: base + 5000, TemplateID: "other"}, []string{"run_09", "run_06", "run_03"}, 3},
			{"status", engine.RunFilter{Now: base + 5000, Status: engine.StatusCanceled}, []string{"run_01"}, 1},
			{"expired at its expires_at", engine.RunFilter{Now: base + 4000, Status: engine.StatusCanceled}, []string{"run_01"}, 1},
			{"visible before its expiry", engine.RunFilter{Now: base + 3999, Status: engine.StatusCanceled},
				[]string{"run_01", "run_00"}, 2},
			{"session", engine.RunFilter{Now: base + 5000, SessionID: "sess_shared"}, []string{"run_04"}, 1},
			{"combined page", engine.RunFilter{Now: base + 5000, TemplateID: "tpl", Limit: 2, Offset: 1},
				[]string{"run_07", "run_05"}, 6},
			{"status queued", engine.RunFilter{Now: base + 5000, Status: engine.StatusQueued, Limit: 1}, []string{"run_09"}, 8},
			{"past the end", engine.RunFilter{Now: base + 5000, Limit: 5, Offset: 50}, []string{}, 9},
			{"no match", engine.RunFilter{Now: base + 5000, TemplateID: "none"}, []string{}, 0},
		}
		for _, c := range cases {
			runs, total, err := s.ListRuns(ctx, c.f)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := runIDs(runs); !reflect.DeepEqual(got, c.want) || total != c.total {
				t.Errorf("%s: got %v total %d; want %v total %d", c.name, got, total, c.want, c.total)
			}
		}
	})

	t.Run("KeysetPagingSameMillisecond", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		now := base + 1000
		// 25 runs in three milliseconds (10, 10 and 5 runs), their ids in
		// an order unrelated to creation, every other one of template "alt".
		var all []*engine.Run
		for i := range 25 {
			r := queuedRun(fmt.Sprintf("run_%02d", i*7%25), base+int64(i/10))
			if i%2 == 1 {
				r.TemplateID = "alt"
			}
			all = append(all, mustCreate(t, s, r))
		}
		slices.SortFunc(all, func(a, b *engine.Run) int {
			return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.RunID, a.RunID))
		})
		want, wantAlt := runIDs(all), []string{}
		for _, r := range all {
			if r.TemplateID == "alt" {
				wantAlt = append(wantAlt, r.RunID)
			}
		}

		full, total, err := s.ListRuns(ctx, engine.RunFilter{Now: now})
		if err != nil || total != 25 || !reflect.DeepEqual(runIDs(full), want) {
			t.Fatalf("ListRuns = %v total %d, %v; want %v", runIDs(full), total, err, want)
		}

		// Pages of 4 by keyset; after the second page a newer run arrives,
		// which neither shifts nor repeats anything (it would with offsets)
		// but does count in the total.
		got := walkKeyset(t, s, engine.RunFilter{Now: now, Limit: 4}, func(page int) int {
			if page == 2 {
				mustCreate(t, s, queuedRun("run_new", base+10))
			}
			if page >= 2 {
				return 26
			}
			return 25
		})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("keyset pages = %v\nwant %v", got, want)
		}

		// With a filter, the pages and the total cover only matching runs.
		got = walkKeyset(t, s, engine.RunFilter{Now: now, TemplateID: "alt", Limit: 3}, func(int) int { return len(wantAlt) })
		if !reflect.DeepEqual(got, wantAlt) {
			t.Fatalf("keyset pages of alt = %v\nwant %v", got, wantAlt)
		}

		// The cursor is a position, not a row: one past every id in
		// millisecond 1 keeps all of that millisecond and the one before.
		runs, total, err := s.ListRuns(ctx, engine.RunFilter{Now: now, BeforeCreatedAt: base + 1, BeforeRunID: "run_zz"})
		if err != nil || total != 26 || !reflect.DeepEqual(runIDs(runs), want[5:]) {
			t.Fatalf("ListRuns before (base+1, run_zz) = %v total %d, %v; want %v total 26", runIDs(runs), total, err, want[5:])
		}
		// Before the oldest run there is nothing.
		last := all[len(all)-1]
		runs, total, err = s.ListRuns(ctx, engine.RunFilter{Now: now, BeforeCreatedAt: last.CreatedAt, BeforeRunID: last.RunID})
		if err != nil || len(runs) != 0 || total != 26 {
			t.Fatalf("ListRuns before the oldest = %v total %d, %v; want none, total 26", runIDs(runs), total, err)
		}
	})
}

// walkKeyset lists every page of f (f.Limit per page), each after the last
// run of the previous one, and returns the ids in order. wantTotal(page)
// is the total each page must report; it is called before the page is
// read, so it may also change the store.
func walkKeyset(t *testing.T, s engine.Store, f engine.RunFilter, wantTotal func(page int) int) []string {
	t.Helper()
	ids := []string{}
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("keyset paging does not end")
		}
		wt := wantTotal(page)
		runs, total, err := s.ListRuns(t.Context(), f)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if total != wt {
			t.Errorf("page %d: total %d, want %d", page, total, wt)
		}
		if len(runs) > f.Limit {
			t.Fatalf("page %d: %d runs, limit %d", page, len(runs), f.Limit)
		}
		ids = append(ids, runIDs(runs)...)
		if len(runs) < f.Limit {
			return ids
		}
		last := runs[len(runs)-1]
		f.BeforeCreatedAt, f.BeforeRunID = last.CreatedAt, last.RunID
	}
}

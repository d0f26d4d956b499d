package acceptance

// Issue 33, acceptance 2: three `serve` daemons (different --addr) on one
// PostgreSQL database drain one queue. An idempotency key submitted 100
// times at once across the three gives one run; 300 dev_echo runs
// submitted through all three all finish, once each, with the global limit
// never exceeded (sampled through all three); a daemon killed with kill -9
// in the middle of a batch run: the run resumes on another daemon and no
// page checkpointed before the kill is fetched again.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/jackc/pgx/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBlackboxPostgresThreeDaemons(t *testing.T) {
	pg := fixture.PostgresURL(t)
	fixture.NeedChromium(t)
	t.Parallel()
	const limit = 4
	daemons := make([]*proc, 3)
	sessions := make([]*sdk.ClientSession, 3)
	for i := range daemons {
		daemons[i] = startServe(t, "--db", pg, "--max-concurrent-runs", fmt.Sprint(limit))
		sessions[i] = connectHTTP(t, daemons[i], nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background()) //nolint:errcheck // test cleanup
	sqlInt := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}

	// One idempotency key, 100 concurrent submissions across the three.
	idem := make([]string, 100)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range idem {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			m, isErr, err := tryCall(ctx, sessions[i%3], "run_task_template", obj{"templateId": "dev_echo",
				"inputs": obj{"sleepMs": 10, "items": 1}, "options": obj{"mode": "async", "idempotencyKey": "pg-idem-100"}})
			if err != nil || isErr {
				t.Errorf("idempotent submission %d: %v %v", i, err, m)
				return
			}
			idem[i], _ = m["runId"].(string)
		}()
	}
	close(start)
	wg.Wait()
	for i, id := range idem {
		if id == "" || id != idem[0] {
			t.Fatalf("submission %d got run %q, submission 0 got %q: want one run", i, id, idem[0])
		}
	}
	if n := sqlInt(`SELECT COUNT(*) FROM runs WHERE idempotency_key = 'pg-idem-100'`); n != 1 {
		t.Fatalf("%d runs hold the key, want 1", n)
	}

	// 300 runs through all three, the limit sampled through all three.
	sctx, stopSampling := context.WithCancel(ctx)
	sampler := sampleRuns(sctx, sessions, nil, 20*time.Millisecond)
	const runs = 300
	ids := make([]string, runs)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < runs; i += 6 {
				m, isErr, err := tryCall(ctx, sessions[i%3], "run_task_template", obj{"templateId": "dev_echo",
					"inputs": obj{"sleepMs": 20, "items": 1}, "options": obj{"mode": "async"}})
				if err != nil || isErr {
					t.Errorf("submission %d: %v %v", i, err, m)
					return
				}
				ids[i], _ = m["runId"].(string)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	fixture.WaitUntil(t, "301 runs succeeded", func() bool {
		return sqlInt(`SELECT COUNT(*) FROM runs WHERE status = 'succeeded'`) == runs+1
	})
	stopSampling()
	for err := range sampler.errs {
		if err != nil {
			t.Errorf("sampling: %v", err)
		}
	}
	if m := sampler.maxRunning.Load(); m > limit || m == 0 {
		t.Errorf("running runs sampled up to %d (%d samples), want 1..%d", m, sampler.samples.Load(), limit)
	}
	// Every run finished once: one execution (attempt 1), one terminal
	// status event.
	if n := sqlInt(`SELECT COUNT(*) FROM runs WHERE attempt <> 1 OR crashes <> 0`); n != 0 {
		t.Errorf("%d runs executed more than once", n)
		explainRepeats(t, ctx, conn, daemons)
	}
	if n := sqlInt(`SELECT COUNT(*) FROM (SELECT run_id FROM run_events WHERE type = 'status' AND data LIKE '%"succeeded"%'
		GROUP BY run_id HAVING COUNT(*) <> 1) x`); n != 0 {
		t.Errorf("%d runs have other than one final status event", n)
	}
	if n := sqlInt(`SELECT COUNT(DISTINCT owner_id) FROM runs`); n < 2 {
		t.Errorf("runs executed by %d daemons, want the queue drained by several", n)
	}
	// Any daemon answers for any run.
	for i, id := range ids[:3] {
		if run := callOK(t, sessions[(i+1)%3], "get_task_run", obj{"runId": id}); run["status"] != "succeeded" {
			t.Errorf("run %s read through daemon %d: %v", id, (i+1)%3, run["status"])
		}
	}

	// kill -9 of the daemon executing a batch run.
	const pages = 30
	site := newCountingSite(t, 200*time.Millisecond)
	urls := make([]any, pages)
	for i := range urls {
		urls[i] = site.url(i)
	}
	id := submitAsync(t, sessions[0], "batch_extract_pages", obj{"urls": urls, "concurrency": 2, "perPageTimeoutMs": 20000,
		"fields": obj{"name": "#name"}}, nil)
	waitRun(t, sessions[0], id, "doneSteps >= 5", func(r obj) bool {
		if terminal(r["status"]) {
			t.Fatalf("batch run ended before the kill: %v %v", r["status"], r["error"])
		}
		return num(sub(r, "progress"), "doneSteps") >= 5
	})
	pid := sqlInt(`SELECT o.pid FROM runs r JOIN owners o ON o.id = r.owner_id WHERE r.id = $1`, id)
	victim := -1
	for i, d := range daemons {
		if d.cmd.Process.Pid == pid {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("the batch run's owner has pid %d, none of the three daemons", pid)
	}
	daemons[victim].kill9()
	<-daemons[victim].done
	checkpointed := map[int]bool{}
	rows, err := conn.Query(ctx, `SELECT idx FROM run_items WHERE run_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var idx int
		if err := rows.Scan(&idx); err != nil {
			t.Fatal(err)
		}
		checkpointed[idx] = true
	}
	rows.Close()
	t.Logf("killed daemon %d (pid %d) with %d of %d pages checkpointed", victim, pid, len(checkpointed), pages)
	other := sessions[(victim+1)%3]
	run := waitTerminal(t, other, id)
	if run["status"] != "succeeded" {
		t.Fatalf("resumed run: %v %v", run["status"], run["error"])
	}
	if s := sub(sub(run, "result"), "summary"); num(s, "succeeded") != pages {
		t.Errorf("summary after resume: %v", s)
	}
	for idx := range checkpointed {
		if n := site.hitsOf(fmt.Sprintf("/p/%d", idx)); n != 1 {
			t.Errorf("page %d was checkpointed before the kill but fetched %d times", idx, n)
		}
	}
	if n := sqlInt(`SELECT COUNT(*) FROM runs r JOIN owners o ON o.id = r.owner_id WHERE r.id = $1 AND o.pid <> $2`, id, pid); n != 1 {
		t.Errorf("the resumed run's owner is not a surviving daemon")
	}
}

// explainRepeats logs, for each run executed more than once, its row, its
// status events and every daemon's log lines naming it: what a failure
// needs to tell a lost lease from a claim seen twice.
func explainRepeats(t *testing.T, ctx context.Context, conn *pgx.Conn, daemons []*proc) {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT id, attempt, crashes, owner_id, created_at, started_at, finished_at FROM runs
		WHERE attempt <> 1 OR crashes <> 0`)
	if err != nil {
		t.Logf("explain: %v", err)
		return
	}
	var ids []string
	for rows.Next() {
		var id, owner string
		var attempt, crashes int
		var created, started, finished *int64
		if err := rows.Scan(&id, &attempt, &crashes, &owner, &created, &started, &finished); err != nil {
			t.Logf("explain: %v", err)
			break
		}
		ids = append(ids, id)
		t.Logf("run %s: attempt %d, crashes %d, owner %s, created %v started %v finished %v", id, attempt, crashes, owner, deref(created), deref(started), deref(finished))
	}
	rows.Close()
	for _, id := range ids {
		evs, err := conn.Query(ctx, `SELECT at, COALESCE(data, '') FROM run_events WHERE run_id = $1 AND type = 'status' ORDER BY seq`, id)
		if err != nil {
			t.Logf("explain events: %v", err)
			continue
		}
		for evs.Next() {
			var at int64
			var data string
			if err := evs.Scan(&at, &data); err == nil {
				t.Logf("  event at %d: %s", at, data)
			}
		}
		evs.Close()
		for i, d := range daemons {
			for _, line := range strings.Split(d.log(), "\n") {
				if strings.Contains(line, id) || strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") ||
					strings.Contains(line, "recover") || strings.Contains(line, "released") {
					t.Logf("  daemon %d (pid %d): %s", i, d.cmd.Process.Pid, line)
				}
			}
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

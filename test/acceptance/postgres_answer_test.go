package acceptance

// Issue 33, acceptance 3: two `serve` daemons on one PostgreSQL database. A
// login submitted on daemon A (in A's browser session) waits for a one-time
// code; the code is answered on daemon B; the run finishes on A, and either
// daemon reports it. The code is sealed for A, so it is in no column of the
// database.

import (
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/jackc/pgx/v5"
)

func TestBlackboxPostgresAnswerOnAnotherDaemon(t *testing.T) {
	pg := fixture.PostgresURL(t)
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	a := startServe(t, "--db", pg)
	b := startServe(t, "--db", pg)
	csA, csB := connectHTTP(t, a, nil), connectHTTP(t, b, nil)
	rec := &replies{}

	sid := newSession(t, csA, nil)
	id := otpLogin(t, csA, rec, fx, sid, fixture.OTPLoginPages[0])
	// B sees the question of a run it does not execute.
	if run := rec.ok(t, csB, "get_task_run", obj{"runId": id}); sub(run, "inputRequest")["requestId"] != "otp" {
		t.Fatalf("daemon B's view of the waiting run: %v", run)
	}
	ans := rec.ok(t, csB, "answer_task_run", obj{"runId": id, "requestId": "otp", "value": fixture.OTPCode})
	if ans["answered"] != true || ans["kind"] != "secret" {
		t.Fatalf("answer_task_run on B: %v", ans)
	}
	// loggedIn waits on A, then reads the members page in A's session: the
	// run finished where the session's browser is.
	loggedIn(t, csA, rec, fx, id, sid)
	if run := waitTerminal(t, csB, id); run["status"] != "succeeded" {
		t.Fatalf("daemon B's view of the finished run: %v", run)
	}

	// The code is in no text column of the schema, nor in any reply.
	ctx, cancel := fixture.Context(t)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx) //nolint:errcheck // test cleanup
	var hits int
	err = conn.QueryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM run_inputs WHERE strpos(COALESCE(response, '') || request || encode(COALESCE(public_key, ''), 'escape'), $1) > 0) +
		(SELECT COUNT(*) FROM run_events WHERE strpos(COALESCE(data, ''), $1) > 0) +
		(SELECT COUNT(*) FROM runs WHERE strpos(COALESCE(inputs, '') || COALESCE(result, '') || COALESCE(error, ''), $1) > 0)`,
		fixture.OTPCode).Scan(&hits)
	if err != nil {
		t.Fatal(err)
	}
	if hits != 0 {
		t.Errorf("the one-time code is in %d rows of the database", hits)
	}
	if strings.Contains(rec.b.String(), fixture.OTPCode) {
		t.Errorf("an MCP answer holds the one-time code")
	}
}

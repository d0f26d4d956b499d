package sqlcommon

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// RunStatements is what every helper that writes a run and reports it
// needs of a store: its event statements, its run-exists count (to tell
// ErrNotFound from ErrConflict after a compare-and-set missed), its
// select of one run by id and its artifact-ids statement.
type RunStatements struct {
	// Events appends a run's events.
	Events EventStatements
	// RunExists counts the runs with an id (argument: run id).
	RunExists string
	// Get selects RunColumns of one run (argument: run id).
	Get string
	// ArtifactIDs selects the artifact ids of a page of runs.
	ArtifactIDs ArtifactIDsStatement
}

// FinishStatements is a store's SQL for ending runs. The arguments come
// in the order each field names, numbered from 1 ($N in PostgreSQL, ?N in
// SQLite), so one statement may use an argument twice.
type FinishStatements struct {
	RunStatements
	// Finish sets a running run held by owner and attempt terminal, returning
	// its attempt: status, result, error, now, ttl, progress set (bool),
	// done, total, failed, message, id, owner, attempt.
	Finish string
	// Cancel sets a queued or running run canceled: error, reason, now,
	// ttl, id.
	Cancel string
	// KeptError selects the error of a canceled run held by owner and
	// attempt: id, owner, attempt.
	KeptError string
	// Keep writes a run's error: error, now, id.
	Keep string
}

// FinishRun is engine.Store.FinishRun in the caller's transaction: a
// compare-and-set on status running, owner and attempt that writes the
// terminal state and appends a "status" event. Errors: ErrNotFound,
// ErrConflict, or an error for a non-terminal f.Status.
func FinishRun(ctx context.Context, tx Tx, st FinishStatements, f engine.Finish) error {
	if !f.Status.Terminal() {
		return fmt.Errorf("db: finish run %s: status %q is not terminal", f.RunID, f.Status)
	}
	errJSON, err := EncodeError(f.Error)
	if err != nil {
		return err
	}
	p, set := engine.Progress{}, false
	if f.Progress != nil {
		p, set = *f.Progress, true
	}
	var attempt int
	err = tx.QueryRowContext(ctx, st.Finish,
		string(f.Status), NullJSON(f.Result), errJSON, f.Now, f.RunTTLMs,
		set, p.DoneSteps, p.TotalSteps, p.FailedSteps, p.Message,
		f.RunID, f.OwnerID, f.Attempt).Scan(&attempt)
	if err != nil {
		return CASError(ctx, tx, st.RunExists, f.RunID, err)
	}
	return AppendJSONEvent(ctx, tx, st.Events, f.RunID, EventStatus, StatusEvent{Status: f.Status, Attempt: attempt}, f.Now)
}

// CancelRun is engine.Store.CancelRun in the caller's transaction: a
// queued or running run becomes canceled with a "status" event (changed);
// a terminal one is returned as stored. Errors: ErrNotFound.
func CancelRun(ctx context.Context, tx Tx, st FinishStatements, p engine.CancelRunParams) (run *engine.Run, changed bool, err error) {
	errJSON, err := EncodeError(p.Error)
	if err != nil {
		return nil, false, err
	}
	res, err := tx.ExecContext(ctx, st.Cancel, errJSON, p.Reason, p.Now, p.RunTTLMs, p.RunID)
	if err != nil {
		return nil, false, fmt.Errorf("db: cancel run: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, fmt.Errorf("db: cancel run: %w", err)
	}
	if changed = n == 1; changed {
		if err := AppendJSONEvent(ctx, tx, st.Events, p.RunID, EventStatus,
			StatusEvent{Status: engine.StatusCanceled}, p.Now); err != nil {
			return nil, false, err
		}
	}
	run, err = GetRun(ctx, tx, st.Get, p.RunID, st.ArtifactIDs)
	if err != nil {
		return nil, false, err
	}
	return run, changed, nil
}

// KeepCanceled is engine.Store.KeepCanceled in the caller's transaction:
// p.Note is added to the canceled run's error message and p.Details to its
// details (a run canceled without an error gets RUN_CANCELED), and a
// "kept" event carries the details. Errors: ErrNotFound, ErrConflict.
func KeepCanceled(ctx context.Context, tx Tx, st FinishStatements, p engine.KeepParams) error {
	var raw sql.NullString
	err := tx.QueryRowContext(ctx, st.KeptError, p.RunID, p.Holder.OwnerID, p.Holder.Attempt).Scan(&raw)
	if err != nil {
		return CASError(ctx, tx, st.RunExists, p.RunID, err)
	}
	e, err := DecodeError(raw)
	if err != nil {
		return fmt.Errorf("db: keep run %s: %w", p.RunID, err)
	}
	if e == nil {
		e = &engine.Error{Code: engine.RunCanceled}
	}
	e.Message += p.Note
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	for k, v := range p.Details {
		e.Details[k] = v
	}
	errJSON, err := EncodeError(e)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, st.Keep, errJSON, p.Now, p.RunID); err != nil {
		return fmt.Errorf("db: keep run %s: %w", p.RunID, err)
	}
	return AppendJSONEvent(ctx, tx, st.Events, p.RunID, "kept", p.Details, p.Now)
}

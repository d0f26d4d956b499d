package sqlcommon

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// MaxEventsPerRun caps a run's event log. Past it, only the events a client
// cannot reconstruct otherwise (status changes, artifacts, creation) are
// still appended; item, progress and log events are dropped.
const MaxEventsPerRun = 10000

// Event types the stores themselves append.
const (
	EventCreated  = "created"
	EventStatus   = "status"
	EventItem     = "item"
	EventArtifact = "artifact"
)

// KeptPastCap reports whether an event of type typ is appended even when
// the run already holds MaxEventsPerRun events.
func KeptPastCap(typ string) bool {
	switch typ {
	case EventStatus, EventCreated, EventArtifact:
		return true
	}
	return false
}

// StatusEvent is the data of a "status" event.
type StatusEvent struct {
	Status  engine.RunStatus `json:"status"`
	Attempt int              `json:"attempt,omitempty"`
}

// EventStatements is a store's SQL for appending an event.
type EventStatements struct {
	// NextSeq bumps runs.event_seq and returns it (arguments: run id, the
	// cap, whether the type is kept past the cap); no row when the run is
	// missing or at the cap.
	NextSeq string
	// RunExists counts the runs with an id (argument: run id).
	RunExists string
	// Insert inserts a run_events row (run id, seq, at, type, data).
	Insert string
}

// AppendEvent takes the run's next seq from runs.event_seq in the caller's
// transaction (so seqs are gapless and strictly increasing) and inserts
// the event. Past the cap an event KeptPastCap refuses is dropped without
// an error. Errors: engine.ErrNotFound when the run does not exist.
func AppendEvent(ctx context.Context, tx Tx, st EventStatements, runID, typ string, data json.RawMessage, now int64) error {
	var seq int64
	err := tx.QueryRowContext(ctx, st.NextSeq, runID, MaxEventsPerRun, KeptPastCap(typ)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := tx.QueryRowContext(ctx, st.RunExists, runID).Scan(&n); err != nil {
			return fmt.Errorf("db: append event: %w", err)
		}
		if n == 0 {
			return engine.ErrNotFound
		}
		return nil // over the cap: dropped
	}
	if err != nil {
		return fmt.Errorf("db: append event: %w", err)
	}
	if _, err := tx.ExecContext(ctx, st.Insert, runID, seq, now, typ, NullJSON(data)); err != nil {
		return fmt.Errorf("db: append event: %w", err)
	}
	return nil
}

// AppendJSONEvent is AppendEvent with v marshalled as the event's data.
func AppendJSONEvent(ctx context.Context, tx Tx, st EventStatements, runID, typ string, v any, now int64) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("db: encode event: %w", err)
	}
	return AppendEvent(ctx, tx, st, runID, typ, b, now)
}

// EventColumns is the SELECT list an event scanner reads, in order.
const EventColumns = `seq, at, type, data`

// ListEvents returns the events of run runID query selects (EventColumns),
// never nil.
func ListEvents(ctx context.Context, q Querier, runID, query string, args ...any) ([]engine.Event, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list events: %w", err)
	}
	return Collect(rows, "list events", func(s Scanner) (engine.Event, error) {
		e := engine.Event{RunID: runID}
		var data sql.NullString
		if err := s.Scan(&e.Seq, &e.At, &e.Type, &data); err != nil {
			return e, err
		}
		e.Data = RawOrNil(data)
		return e, nil
	})
}

// CASError explains a compare-and-set update of run runID that matched no
// row (err is sql.ErrNoRows): engine.ErrNotFound when the run is gone,
// engine.ErrConflict when it is there but no longer in the state the
// update required. runExists counts the runs with an id. Other errors
// come back wrapped.
func CASError(ctx context.Context, q Querier, runExists, runID string, err error) error {
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("db: update run %s: %w", runID, err)
	}
	var n int
	if err := q.QueryRowContext(ctx, runExists, runID).Scan(&n); err != nil {
		return fmt.Errorf("db: update run %s: %w", runID, err)
	}
	if n == 0 {
		return engine.ErrNotFound
	}
	return engine.ErrConflict
}

// CAS runs a compare-and-set statement on run runID that returns one row
// when it matched (query ... RETURNING id, or a SELECT of the run in the
// state required) and explains a miss with CASError.
func CAS(ctx context.Context, q Querier, runExists, runID, query string, args ...any) error {
	var id string
	if err := q.QueryRowContext(ctx, query, args...).Scan(&id); err != nil {
		return CASError(ctx, q, runExists, runID, err)
	}
	return nil
}

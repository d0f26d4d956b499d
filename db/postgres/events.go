package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// maxEventsPerRun caps a run's event log. Past it, only the events a client
// cannot reconstruct otherwise (status changes, artifacts, creation) are
// still appended; item, progress and log events are dropped.
const maxEventsPerRun = 10000

// Event types the store itself appends.
const (
	eventCreated  = "created"
	eventStatus   = "status"
	eventItem     = "item"
	eventArtifact = "artifact"
)

// keptPastCap reports whether an event of type typ is appended even when the
// run already holds maxEventsPerRun events.
func keptPastCap(typ string) bool {
	switch typ {
	case eventStatus, eventCreated, eventArtifact:
		return true
	}
	return false
}

// AppendEvent appends an event with the next seq of the run. Past the
// per-run cap, events other than status/artifact ones are silently dropped.
// Errors: ErrNotFound when the run does not exist.
func (d *DB) AppendEvent(ctx context.Context, runID, typ string, data json.RawMessage, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error {
		return appendEvent(ctx, tx, runID, typ, data, now)
	})
}

// appendEvent takes the run's next seq from runs.event_seq (in the caller's
// transaction, so seqs are gapless and strictly increasing) and inserts the
// event.
func appendEvent(ctx context.Context, tx sqlTx, runID, typ string, data json.RawMessage, now int64) error {
	var seq int64
	err := tx.QueryRowContext(ctx, `UPDATE runs SET event_seq = event_seq + 1
		WHERE id = $1 AND (event_seq < $2 OR $3::boolean)
		RETURNING event_seq`, runID, maxEventsPerRun, keptPastCap(typ)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = $1`, runID).Scan(&n); err != nil {
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, at, type, data) VALUES ($1, $2, $3, $4, $5)`,
		runID, seq, now, typ, sqlcommon.NullJSON(data)); err != nil {
		return fmt.Errorf("db: append event: %w", err)
	}
	return nil
}

// appendJSONEvent marshals v as the event's data.
func appendJSONEvent(ctx context.Context, tx sqlTx, runID, typ string, v any, now int64) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("db: encode event: %w", err)
	}
	return appendEvent(ctx, tx, runID, typ, b, now)
}

// statusEvent is the data of a "status" event.
type statusEvent struct {
	Status  engine.RunStatus `json:"status"`
	Attempt int              `json:"attempt,omitempty"`
}

// ListEvents returns the run's events with seq > p.AfterSeq in seq order, at
// most p.Limit (p.Limit <= 0 means all). An unknown run yields an empty list; the
// engine checks the run first.
func (d *DB) ListEvents(ctx context.Context, p engine.ListEventsParams) ([]engine.Event, error) {
	runID, afterSeq, limit := p.RunID, p.AfterSeq, p.Limit
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	rows, err := d.reader().QueryContext(ctx, `SELECT seq, at, type, data FROM run_events
		WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3::bigint`, runID, afterSeq, lim)
	if err != nil {
		return nil, fmt.Errorf("db: list events: %w", err)
	}
	defer rows.Close()
	events := []engine.Event{}
	for rows.Next() {
		e := engine.Event{RunID: runID}
		var data sql.NullString
		if err := rows.Scan(&e.Seq, &e.At, &e.Type, &data); err != nil {
			return nil, fmt.Errorf("db: list events: %w", err)
		}
		e.Data = sqlcommon.RawOrNil(data)
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list events: %w", err)
	}
	return events, nil
}

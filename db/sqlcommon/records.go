package sqlcommon

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// ProfileColumns is the SELECT list ScanProfile reads, in order.
const ProfileColumns = `name, note, created_at, last_used_at, sites, size_bytes, holder_id, lease_expires_at`

// ScanProfile reads one row of ProfileColumns. A sites value that is not a
// JSON array reads as no sites: the list is informational and a bad value
// must not make the profile unusable.
func ScanProfile(s Scanner) (*engine.BrowserProfile, error) {
	var (
		p     engine.BrowserProfile
		sites string
	)
	if err := s.Scan(&p.Name, &p.Note, &p.CreatedAt, &p.LastUsedAt, &sites, &p.SizeBytes, &p.HolderID, &p.LeaseExpiresAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(sites), &p.Sites); err != nil || p.Sites == nil {
		p.Sites = []string{}
	}
	return &p, nil
}

// QuestionColumns is the SELECT list of run_inputs CollectQuestions reads.
const QuestionColumns = `run_id, request_id, kind, message, request, requested_at, expires_at, response, answered_at, public_key`

// CollectQuestions reads every row of rows (QuestionColumns) and closes
// them; never nil.
func CollectQuestions(rows *sql.Rows) ([]engine.Question, error) {
	return Collect(rows, "list input requests", func(s Scanner) (engine.Question, error) {
		var (
			q          engine.Question
			request    string
			response   sql.NullString
			answeredAt sql.NullInt64
		)
		if err := s.Scan(&q.RunID, &q.RequestID, &q.Kind, &q.Message, &request, &q.RequestedAt, &q.ExpiresAt,
			&response, &answeredAt, &q.PublicKey); err != nil {
			return q, fmt.Errorf("scan input request: %w", err)
		}
		q.Request = []byte(request)
		if response.Valid {
			q.Response = []byte(response.String)
			q.AnsweredAt = answeredAt.Int64
		}
		return q, nil
	})
}

// NullBytes is NULL for an empty slice.
func NullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// HistoryColumns is the column list of run_history, in the order
// ScanHistory reads and HistoryArgs writes.
const HistoryColumns = `id, template_id, template_version, session_id, status,
			created_at, started_at, finished_at, forgotten_at, progress_done, progress_total, progress_failed,
			error_code, error_message, inputs_summary, artifact_ids, expires_at`

// HistoryArgs is the 17 values of run r's history row (HistoryColumns),
// forgotten at now and kept until expiresAt, with the inputs summary.
func HistoryArgs(r *engine.Run, now, expiresAt int64, summary string) ([]any, error) {
	var code, msg string
	if r.Error != nil {
		code, msg = string(r.Error.Code), r.Error.Message
	}
	ids, err := json.Marshal(r.ArtifactIDs)
	if err != nil {
		return nil, fmt.Errorf("db: archive run %s: %w", r.RunID, err)
	}
	return []any{r.RunID, r.TemplateID, r.TemplateVersion, r.SessionID, string(r.Status), r.CreatedAt,
		r.StartedAt, r.FinishedAt, now, r.Progress.DoneSteps, r.Progress.TotalSteps,
		r.Progress.FailedSteps, code, msg, summary, string(ids), expiresAt}, nil
}

// ScanHistory reads one row of HistoryColumns. Artifact ids that are not a
// JSON array read as none.
func ScanHistory(s Scanner) (engine.HistoryRun, error) {
	var (
		h                 engine.HistoryRun
		status, ids       string
		started, finished sql.NullInt64
	)
	if err := s.Scan(&h.RunID, &h.TemplateID, &h.TemplateVersion, &h.SessionID, &status, &h.CreatedAt,
		&started, &finished, &h.ForgottenAt, &h.Progress.DoneSteps, &h.Progress.TotalSteps, &h.Progress.FailedSteps,
		&h.ErrorCode, &h.ErrorMessage, &h.InputsSummary, &ids, &h.ExpiresAt); err != nil {
		return h, err
	}
	h.Status = engine.RunStatus(status)
	h.StartedAt = nullInt64Ptr(started)
	h.FinishedAt = nullInt64Ptr(finished)
	if err := json.Unmarshal([]byte(ids), &h.ArtifactIDs); err != nil || h.ArtifactIDs == nil {
		h.ArtifactIDs = []string{}
	}
	return h, nil
}

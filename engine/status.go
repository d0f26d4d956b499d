package engine

// RunStatus is the lifecycle state of a run. The values are frozen by the v1
// contract and mirrored by a CHECK constraint in the database.
type RunStatus string

// The six run statuses of the v1 contract.
const (
	StatusQueued         RunStatus = "queued"
	StatusRunning        RunStatus = "running"
	StatusSucceeded      RunStatus = "succeeded"
	StatusFailed         RunStatus = "failed"
	StatusPartialSuccess RunStatus = "partial_success"
	StatusCanceled       RunStatus = "canceled"
)

// AllStatuses lists every status in contract order.
var AllStatuses = []RunStatus{StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusPartialSuccess, StatusCanceled}

// Terminal reports whether s is a final state that never changes again.
func (s RunStatus) Terminal() bool {
	switch s {
	case StatusSucceeded, StatusFailed, StatusPartialSuccess, StatusCanceled:
		return true
	}
	return false
}

// Valid reports whether s is one of the six contract statuses.
func (s RunStatus) Valid() bool {
	for _, v := range AllStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// CanTransition reports whether the contract allows moving from s to next.
// running -> queued is allowed only for crash recovery and graceful shutdown
// of resumable runs; callers enforce that condition.
func (s RunStatus) CanTransition(next RunStatus) bool {
	switch s {
	case StatusQueued:
		return next == StatusRunning || next == StatusCanceled || next == StatusFailed
	case StatusRunning:
		return next == StatusSucceeded || next == StatusPartialSuccess || next == StatusFailed ||
			next == StatusCanceled || next == StatusQueued
	}
	return false
}

package engine

import (
	"context"
	"errors"
	"fmt"
)

// ErrorCode is one of the 16 domain error codes of the v1 contract.
type ErrorCode string

// The 16 error codes of the v1 contract (docs/error-codes.md).
const (
	ElementNotFound            ErrorCode = "ELEMENT_NOT_FOUND"
	NavigationTimeout          ErrorCode = "NAVIGATION_TIMEOUT"
	SessionNotFound            ErrorCode = "SESSION_NOT_FOUND"
	PageCrashed                ErrorCode = "PAGE_CRASHED"
	InvalidParameter           ErrorCode = "INVALID_PARAMETER"
	ExecutionError             ErrorCode = "EXECUTION_ERROR"
	TemplateNotFound           ErrorCode = "TEMPLATE_NOT_FOUND"
	RunNotFound                ErrorCode = "RUN_NOT_FOUND"
	RunTimeout                 ErrorCode = "RUN_TIMEOUT"
	RunCanceled                ErrorCode = "RUN_CANCELED"
	StepExecutionFailed        ErrorCode = "STEP_EXECUTION_FAILED"
	TrustLevelNotAllowed       ErrorCode = "TRUST_LEVEL_NOT_ALLOWED"
	TemplateVersionUnsupported ErrorCode = "TEMPLATE_VERSION_UNSUPPORTED"
	ArtifactNotFound           ErrorCode = "ARTIFACT_NOT_FOUND"
	ArtifactExpired            ErrorCode = "ARTIFACT_EXPIRED"
	TplLoginFieldNotFound      ErrorCode = "TPL_LOGIN_FIELD_NOT_FOUND"
)

// AllErrorCodes lists the 16 codes in contract order.
var AllErrorCodes = []ErrorCode{
	ElementNotFound, NavigationTimeout, SessionNotFound, PageCrashed, InvalidParameter,
	ExecutionError, TemplateNotFound, RunNotFound, RunTimeout, RunCanceled,
	StepExecutionFailed, TrustLevelNotAllowed, TemplateVersionUnsupported,
	ArtifactNotFound, ArtifactExpired, TplLoginFieldNotFound,
}

var recoveries = map[ErrorCode]string{
	ElementNotFound:            "Refresh the page semantics and retry, or change the selector or semantic query.",
	NavigationTimeout:          "Relax the wait condition, raise the timeout, or split the work into smaller steps.",
	SessionNotFound:            "Recreate the session and retry.",
	PageCrashed:                "Recreate the tab or session and resume from a safe step.",
	InvalidParameter:           "Fix the parameter's range or type and resubmit.",
	ExecutionError:             "Check the step's preconditions and retry; degrade the task if it keeps failing.",
	TemplateNotFound:           "Fix the templateId or refresh the template list with list_task_templates.",
	RunNotFound:                "Check the runId and the run TTL; resubmit the task if needed.",
	RunTimeout:                 "Raise options.timeoutMs, shrink the batch, or split the task.",
	RunCanceled:                "This is the expected end state after a cancel; resubmit the task if you still want it.",
	StepExecutionFailed:        "Retry, or repair the failed step named in details.",
	TrustLevelNotAllowed:       "Switch the server's trust level or use another template.",
	TemplateVersionUnsupported: "Switch to a supported template version (see list_task_templates) or upgrade the server.",
	ArtifactNotFound:           "Check the artifactId and which run produced it.",
	ArtifactExpired:            "Read artifacts within their TTL, or rerun the task to produce them again.",
	TplLoginFieldNotFound:      "Adjust the login field mapping (inputs.fields) or the semantic locator.",
}

// Recovery returns the contract's advice for the code, or the EXECUTION_ERROR
// advice for an unknown code.
func (c ErrorCode) Recovery() string {
	if r, ok := recoveries[c]; ok {
		return r
	}
	return recoveries[ExecutionError]
}

// Error is a domain error. Its JSON form is the contract's error object:
// {"errorCode","message","recovery","details"?}.
type Error struct {
	Code     ErrorCode      `json:"errorCode"`
	Message  string         `json:"message"`
	Recovery string         `json:"recovery"`
	Details  map[string]any `json:"details,omitempty"`
	Err      error          `json:"-"`
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return string(e.Code) + ": " + e.Err.Error()
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// WithDetails returns e with details merged in (e is modified and returned).
func (e *Error) WithDetails(kv map[string]any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	for k, v := range kv {
		e.Details[k] = v
	}
	return e
}

// Errorf builds a domain error with the code's recovery sentence.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Recovery: code.Recovery()}
}

// Wrap builds a domain error around a cause. A cause that is a full disk
// (StorageFullError) gets that error's recovery and details instead of the
// code's generic advice, wherever it surfaces.
func Wrap(code ErrorCode, err error, format string, args ...any) *Error {
	e := Errorf(code, format, args...)
	e.Err = err
	var full *StorageFullError
	if errors.As(err, &full) {
		e.Recovery = full.recovery()
		e.Details = map[string]any{"reason": "disk full", "path": full.Path}
	}
	return e
}

// StorageFullError is a write refused because the disk holding the database
// (or its size limit) is full. The write was rolled back whole.
type StorageFullError struct {
	Path string // the database file
	Err  error
}

// Error says what is full and where.
func (e *StorageFullError) Error() string {
	return fmt.Sprintf("the disk holding the database %s is full, so nothing could be written (the change was rolled back whole): %v", e.Path, e.Err)
}

// Unwrap returns the SQLite error.
func (e *StorageFullError) Unwrap() error { return e.Err }

func (e *StorageFullError) recovery() string {
	return "Free space on the disk holding " + e.Path + " (or start browsertask with --db on another disk), then resubmit; retrying before that fails the same way. Runs and artifacts already stored are intact."
}

// CodeOf returns the domain code of err; anything that is not an *Error is
// EXECUTION_ERROR.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExecutionError
}

// AsError converts any error into a domain *Error (EXECUTION_ERROR when it is
// not one already). It returns nil for nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Recovery == "" {
			e.Recovery = e.Code.Recovery()
		}
		return e
	}
	return Wrap(ExecutionError, err, "internal error: %v", err)
}

// Sentinel errors the Store returns; the engine maps them to domain codes.
var (
	// ErrNotFound means the row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a compare-and-set write found the row in another state
	// (for example a run that was cancelled or recovered by another process).
	ErrConflict = errors.New("conflict: row changed state")
)

// Causes attached to a run's context; the engine maps them to final states.
var (
	errCauseCanceled = errors.New("run canceled")
	errCauseTimeout  = errors.New("run timed out")
	errCauseShutdown = errors.New("process shutting down")
	errCauseLost     = errors.New("run lease lost")
)

// ShuttingDown reports whether ctx (a run's context, or one derived from
// it) ended because the process is exiting. Work that only tidies a tab up
// for the run's next step (stopping a load that hangs) is skipped then: the
// browser goes with the process, and a stdio client's process must be gone
// within 2 s of its client (a tab stopped on a busy machine took a second).
func ShuttingDown(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errCauseShutdown) }

// IsContextErr reports whether err comes from a cancelled or expired context.
func IsContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

package engine

import "context"

// Redactor masks a run's secrets in a string shown outside the run's own
// records: a tab's address or title in the live view and the run page's
// In flight list. The browser captures those from the page, past the
// store's masking (secret_store.go), so it masks them as it captures them,
// with the Redactor the engine puts on the run's context; what it keeps
// after the run (a closed tab's address beside its last frame) stays
// masked once the run's secrets are forgotten.
type Redactor func(s string) string

// redactorKey carries a run's Redactor.
type redactorKey struct{}

// WithRedactor returns ctx carrying r (the engine marks every run's
// context with one).
func WithRedactor(ctx context.Context, r Redactor) context.Context {
	return context.WithValue(ctx, redactorKey{}, r)
}

// RedactorFrom returns the Redactor ctx carries, or one that changes
// nothing (work outside any run has no secrets).
func RedactorFrom(ctx context.Context) Redactor {
	if r, ok := ctx.Value(redactorKey{}).(Redactor); ok && r != nil {
		return r
	}
	return func(s string) string { return s }
}

// Redact returns s with every spelling of run runID's secrets this
// process knows now (its secret inputs and the secret answers it took)
// replaced by SecretMask: the masking every write of the run gets, for
// text the dashboard shows from elsewhere.
func (e *Engine) Redact(runID, s string) string {
	return redactText(s, e.secrets.values(runID))
}

// runRedactor is run runID's Redactor. It reads the run's secrets at each
// call, so a secret answered while the run runs is masked from then on.
func (e *Engine) runRedactor(runID string) Redactor {
	return func(s string) string { return e.Redact(runID, s) }
}

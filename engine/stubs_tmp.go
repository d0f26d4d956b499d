package engine

import (
	"context"
	"log/slog"
)

// Engine runs templates as durable runs. (Being implemented.)
type Engine struct {
	store Store
	cfg   Config
	log   *slog.Logger
}

// New builds an engine.
func New(o Options) (*Engine, error) {
	return &Engine{store: o.Store, cfg: o.Config.withDefaults(), log: o.Logger}, nil
}

// Run starts the scheduler, heartbeat, recovery and janitor loops and blocks
// until ctx ends, then shuts down gracefully.
func (e *Engine) Run(ctx context.Context) error { <-ctx.Done(); return nil }

// Templates lists the registered templates.
func (e *Engine) Templates() []TemplateInfo { return nil }

// Profile returns the runtime profile.
func (e *Engine) Profile() Profile { return Profile{} }

func (e *Engine) submit(ctx context.Context, r SubmitRequest) (*SubmitResult, error) {
	return nil, errNotImplemented
}
func (e *Engine) get(ctx context.Context, id string) (*Run, error) { return nil, errNotImplemented }
func (e *Engine) list(ctx context.Context, q ListQuery) (*RunList, error) {
	return nil, errNotImplemented
}
func (e *Engine) cancel(ctx context.Context, id, reason string) (*CancelResult, error) {
	return nil, errNotImplemented
}
func (e *Engine) wait(ctx context.Context, id string, f func(*Run)) (*Run, error) {
	return nil, errNotImplemented
}
func (e *Engine) readArtifact(ctx context.Context, id string, o, l int64) (*ArtifactChunk, error) {
	return nil, errNotImplemented
}

// Package web is the dashboard: server-rendered pages (templ components fed
// by view models) with htmx for live updates and the Cancel button. It
// reads and changes runs only through the engine, never through SQL.
package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// Engine is what the dashboard needs from the domain; *engine.Engine
// implements it. Methods return domain errors (*engine.Error inside the
// error).
type Engine interface {
	Submit(ctx context.Context, r engine.SubmitRequest) (*engine.SubmitResult, error)
	Get(ctx context.Context, runID string) (*engine.Run, error)
	List(ctx context.Context, q engine.ListQuery) (*engine.RunList, error)
	Cancel(ctx context.Context, runID, reason string) (*engine.CancelResult, error)
	Detail(ctx context.Context, runID string) (*engine.RunDetail, error)
	Artifact(ctx context.Context, artifactID string) (*engine.Artifact, error)
	ArtifactBytes(ctx context.Context, artifactID string, offset, length int64) ([]byte, error)
	PendingQuestions(ctx context.Context, runID string) ([]engine.Question, error)
	AnswerQuestion(ctx context.Context, runID, requestID string, a engine.Answer) (*engine.WaitingQuestion, error)
	TakeOver(ctx context.Context, runID string, hold func() (release func())) (*engine.WaitingQuestion, error)
	LiveLocation(ctx context.Context, r *engine.Run) engine.LiveWhere
	Templates() []engine.TemplateInfo
	Profile() engine.Profile
	History(ctx context.Context, limit, offset int) (*engine.HistoryList, error)
	InputsSummary(templateID string, inputs json.RawMessage) string
	// ListSessions and SessionEvents feed the sessions pages: the named
	// sessions open now and the interactive calls made on one.
	ListSessions(ctx context.Context) ([]*engine.Session, error)
	SessionEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]engine.SessionEvent, error)
}

var _ Engine = (*engine.Engine)(nil)

// Options configure New.
type Options struct {
	Engine Engine
	// AllowedOrigins are extra browser origins (scheme://host[:port],
	// --allowed-origins) whose pages may change state here, as on /mcp:
	// one list and one rule (httpguard.OriginRule) for both endpoints.
	AllowedOrigins []string
	// Token, when set, is required on every dashboard route except /login,
	// /favicon.ico and /static/: as a bearer token or as the cookie
	// /login?token= sets.
	Token string
	// DBPath is shown on the profile page.
	DBPath string
	// Addr is the listener's host:port, for the MCP URL in the snippets.
	Addr string
	// Binary is the command clients should launch for stdio (default
	// "browsertask").
	Binary string
	// Version is the binary's version, shown in the footer.
	Version string
	// Logger receives request errors (nil discards them).
	Logger *slog.Logger
	// Now returns the current time (nil = time.Now), for ages and tests.
	Now func() time.Time
	// Live shows the tabs of the runs this process executes and takes a
	// person's input during a takeover (live.go); nil = no browser here.
	Live Live
}

// Dashboard serves the dashboard's routes (see routes.go).
type Dashboard struct {
	eng     Engine
	live    Live
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	handler http.Handler
}

// New builds the dashboard handler. Mount it at "/" of the daemon's mux; it
// serves every path routes.go lists and 404s the rest.
func New(opts Options) *Dashboard {
	d := &Dashboard{eng: opts.Engine, live: opts.Live, opts: opts, log: opts.Logger, now: opts.Now}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.opts.Binary == "" {
		d.opts.Binary = "browsertask"
	}
	d.handler = d.guard(d.routes())
	return d
}

// ServeHTTP implements http.Handler.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.handler.ServeHTTP(w, r) }

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Engine runs templates as durable runs stored in a Store. Every process
// sharing the database runs one Engine; they coordinate only through the
// Store (owner rows, leases, compare-and-set writes).
type Engine struct {
	store     Store
	cfg       Config
	log       *slog.Logger
	now       func() int64
	templates map[string]Template
	order     []string
	schemas   map[string]*Schema
	browser   Browser
	// profiles keeps browser profiles when the store implements it (nil
	// otherwise: profiles.go).
	profiles ProfileStore
	// secrets holds secret inputs in memory only (secrets.go); named are
	// the browser sessions opened here (sessions.go).
	secrets *secretVault
	// questionKeys are the private halves of secret questions asked here
	// (seal.go).
	questionKeys *keyRing
	named        sessionSet
	version      string
	protocols    []string
	ownerID      string
	// liveBase is this process's dashboard base URL (live.go).
	liveBase atomic.Pointer[string]

	wake chan struct{}
	// peerWaker is the store's cross-process wake-up, nil when it has
	// none (peers_wake.go).
	peerWaker PeerWaker

	mu       sync.Mutex
	active   map[string]*activeRun
	changed  chan struct{} // closed and replaced on every local change
	claiming bool
	runsWG   sync.WaitGroup

	// handoff and hurry shorten the shutdown (handoff.go).
	handoff  atomic.Bool
	hurry    chan struct{}
	hurryOne sync.Once
}

type activeRun struct {
	run    *Run
	cancel context.CancelCauseFunc
	// env and ctx are the run's environment and context once it executes
	// (nil before), for a takeover asked on its behalf (live.go).
	env *runEnv
	ctx context.Context
	// finished is set when the run's final state is being stored: from
	// then on it only winds down here (closing its session) and is no
	// longer held, and a heartbeat must not take it for one another
	// process cancelled or recovered (a final write that lost to such a
	// process is discarded and logged as that).
	finished atomic.Bool
}

// Options wire an Engine.
type Options struct {
	Store     Store
	Templates []Template
	// Browser describes the browser, holds named sessions and closes the
	// session a run owned; nil when no template needs a browser (the
	// session tools then answer EXECUTION_ERROR).
	Browser Browser
	Config  Config
	Logger  *slog.Logger
	// Now returns the current time in Unix ms; nil = the wall clock.
	Now func() int64
	// Version is the binary's version for the profile.
	Version string
	// ProtocolVersions are the MCP versions served, for the profile.
	ProtocolVersions []string
}

// New builds an engine. It does not start executing runs; call Run.
func New(o Options) (*Engine, error) {
	if o.Store == nil {
		return nil, fmt.Errorf("engine: Options.Store is required")
	}
	e := &Engine{
		store:        o.Store,
		cfg:          o.Config.withDefaults(),
		log:          o.Logger,
		now:          o.Now,
		templates:    map[string]Template{},
		schemas:      map[string]*Schema{},
		browser:      o.Browser,
		version:      o.Version,
		protocols:    o.ProtocolVersions,
		ownerID:      "own_" + uuid.NewString(),
		wake:         make(chan struct{}, 1),
		active:       map[string]*activeRun{},
		changed:      make(chan struct{}),
		hurry:        make(chan struct{}),
		secrets:      newSecretVault(),
		questionKeys: newKeyRing(),
	}
	e.peerWaker, _ = o.Store.(PeerWaker)
	// Every write goes through the redacting wrapper (secret_store.go).
	e.store = &secretStore{Store: o.Store, vault: e.secrets}
	if ps, ok := o.Store.(ProfileStore); ok {
		e.profiles = ps
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if e.now == nil {
		e.now = func() int64 { return time.Now().UnixMilli() }
	}
	for _, t := range o.Templates {
		info := t.Info()
		if _, dup := e.templates[info.TemplateID]; dup {
			return nil, fmt.Errorf("engine: template %q registered twice", info.TemplateID)
		}
		s, err := CompileSchema(info.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("engine: template %q input schema: %w", info.TemplateID, err)
		}
		e.templates[info.TemplateID] = t
		e.schemas[info.TemplateID] = s
		e.order = append(e.order, info.TemplateID)
	}
	return e, nil
}

// OwnerID is this process's owner id in the database.
func (e *Engine) OwnerID() string { return e.ownerID }

// Config returns the effective configuration (defaults applied).
func (e *Engine) Config() Config { return e.cfg }

// Templates lists the registered templates in registration order.
func (e *Engine) Templates() []TemplateInfo {
	out := make([]TemplateInfo, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.templates[id].Info())
	}
	return out
}

// Profile returns the runtime profile.
func (e *Engine) Profile() Profile {
	c := e.cfg
	p := Profile{
		MaxConcurrentRuns:     c.MaxConcurrentRuns,
		MaxURLs:               c.MaxURLs,
		MaxTabsPerSession:     c.MaxTabsPerSession,
		SyncTimeoutMs:         c.SyncTimeout.Milliseconds(),
		AsyncTimeoutMs:        c.AsyncTimeout.Milliseconds(),
		ArtifactMaxChunkSize:  c.ArtifactMaxChunkSize,
		ArtifactTTLMs:         c.ArtifactTTL.Milliseconds(),
		RunTTLMs:              c.RunTTL.Milliseconds(),
		SupportedModes:        []Mode{ModeSync, ModeAsync, ModeAuto},
		TrustLevel:            c.TrustLevel,
		IsRemote:              c.IsRemote,
		Version:               e.version,
		ProtocolVersions:      e.protocols,
		AutoSyncBudgetMs:      c.AutoSyncBudget.Milliseconds(),
		TaskPollIntervalMs:    c.TaskPollInterval.Milliseconds(),
		MaxTaskTTLMs:          c.MaxTaskTTL.Milliseconds(),
		ArtifactTextMimeTypes: append([]string{"text/*"}, TextMimeTypes...),
		ArtifactEncodingRule:  ArtifactEncodingRule,
		AllowFileURLs:         c.AllowFileURLs,
		SessionIdleTTLMs:      c.SessionIdleTTL.Milliseconds(),
		MaxAttempts:           c.MaxAttempts,
		InputTimeoutMs:        c.QuestionTimeout.Milliseconds(),
		MaxInlineBytes:        c.MaxInlineBytes,
		HistoryTTLMs:          c.HistoryTTL.Milliseconds(),
		UserAgent:             c.UserAgent,
	}
	if p.ProtocolVersions == nil {
		p.ProtocolVersions = []string{}
	}
	if e.browser != nil {
		b := e.browser.Describe()
		p.Browser = &b
	}
	return p
}

// notify wakes every waiter after a local change of a run, here and (with
// a PeerWaker store) in the other processes.
func (e *Engine) notify() {
	e.notifyLocal()
	e.publish(WakeChange)
}

// notifyLocal wakes this process's waiters.
func (e *Engine) notifyLocal() {
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// changes returns a channel closed at the next local change.
func (e *Engine) changes() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

// kick wakes the scheduler without blocking, here and (with a PeerWaker
// store) in the other processes.
func (e *Engine) kick() {
	e.kickLocal()
	e.publish(WakeClaim)
}

// kickLocal wakes this process's scheduler without blocking.
func (e *Engine) kickLocal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// event appends a run event; failures are logged, never fatal.
func (e *Engine) event(runID, typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.store.AppendEvent(ctx, runID, typ, b, e.now()); err != nil {
		e.log.Debug("append event failed", "runId", runID, "type", typ, "err", err)
	}
}

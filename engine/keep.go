package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Nothing finished is lost: when a run stops before its template returns
// an outcome — RUN_TIMEOUT, EXECUTION_ERROR (the browser lost, a panic),
// an interruption of a run that cannot be resumed, or a cancel — the
// engine counts the items its attempts checkpointed and lets the template
// store them as its usual artifact (Keeper). The run's error then says
// what was kept: details finished (items that succeeded), failed,
// notStarted (when the run knew its total), artifactId and artifactName;
// its message ends with the same in words. result stays null as the
// contract says for failed and canceled runs. A cancel is written at once
// by whoever cancels; the process that executed the run adds the note and
// a "kept" event moments later (the images and PDFs a run took are
// artifacts from the start, listed in artifactIds either way).

// Keeper is a template that can store the items of a run that stopped
// early as the artifact a finished run would have (pages.json).
type Keeper interface {
	// Keep stores items — the run's checkpoints from every attempt, in
	// index order; at least one; without their outputs, which Keep reads
	// back one at a time with Env.EachItem so that no run's results are
	// held whole in memory — and returns the artifact's id and name.
	// ctx is not the run's (that one has ended) but bounded.
	Keep(ctx context.Context, env Env, items []Item) (id, name string, err error)
}

// keepTimeout bounds reading the checkpoints and storing the artifact.
const keepTimeout = 10 * time.Second

// kept is what a run that stopped early kept.
type kept struct {
	finished, failed, notStarted int
	total                        bool // notStarted is known
	artifactID, artifactName     string
}

// details is kept as error details.
func (k kept) details() map[string]any {
	d := map[string]any{"finished": k.finished, "failed": k.failed}
	if k.total {
		d["notStarted"] = k.notStarted
	}
	if k.artifactID != "" {
		d["artifactId"], d["artifactName"] = k.artifactID, k.artifactName
	}
	return d
}

// note is kept in words, appended to the error's message ("" when the run
// had finished nothing).
func (k kept) note() string {
	if k.finished+k.failed == 0 {
		return ""
	}
	s := fmt.Sprintf(" (kept %d finished item(s), %d failed", k.finished, k.failed)
	if k.total {
		s += fmt.Sprintf(", %d not started", k.notStarted)
	}
	if k.artifactID != "" {
		s += fmt.Sprintf("; results in %s %s", k.artifactName, k.artifactID)
	}
	return s + ")"
}

// keep counts run r's checkpoints and has its template store them. Any
// failure is logged: the run still ends with its own error.
func (e *Engine) keep(r *Run, tpl Template, env *runEnv) kept {
	ctx, cancel := context.WithTimeout(context.Background(), keepTimeout)
	defer cancel()
	var k kept
	var items []Item
	err := e.store.EachItem(ctx, ItemsQuery{RunID: r.RunID, After: -1, NoOutput: true}, func(it Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		env.log.Warn("keep: read checkpoints failed", "err", err)
		return k
	}
	for _, it := range items {
		if it.Status == ItemSucceeded {
			k.finished++
		} else {
			k.failed++
		}
	}
	env.mu.Lock()
	total := env.progress.TotalSteps
	env.mu.Unlock()
	if total >= len(items) && total > 0 {
		k.total, k.notStarted = true, total-len(items)
	}
	keeper, ok := tpl.(Keeper)
	if !ok || len(items) == 0 {
		return k
	}
	id, name, err := e.keepArtifact(ctx, keeper, env, items)
	if err != nil {
		env.log.Warn("keep: storing the finished items failed", "err", err)
		return k
	}
	k.artifactID, k.artifactName = id, name
	return k
}

// keepArtifact calls the template's Keep, turning a panic into an error.
func (e *Engine) keepArtifact(ctx context.Context, keeper Keeper, env *runEnv, items []Item) (id, name string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in %s's Keep: %v", env.run.TemplateID, p)
		}
	}()
	return keeper.Keep(ctx, env, items)
}

// withKept adds what the run kept to its final error.
func withKept(rerr *Error, k kept) *Error {
	out := *rerr
	out.Message += k.note()
	out.Details = map[string]any{}
	for key, v := range rerr.Details {
		out.Details[key] = v
	}
	for key, v := range k.details() {
		out.Details[key] = v
	}
	return &out
}

// keepCanceled records what a canceled run kept, once this process has
// stopped executing it.
func (e *Engine) keepCanceled(r *Run, tpl Template, env *runEnv) {
	k := e.keep(r, tpl, env)
	if k.finished+k.failed == 0 {
		return // nothing finished: the canceled run stays as written
	}
	ctx, cancel := context.WithTimeout(context.Background(), keepTimeout)
	defer cancel()
	err := e.store.KeepCanceled(ctx, KeepParams{RunID: r.RunID, Holder: e.holder(r), Note: k.note(), Details: k.details(), Now: e.now()})
	switch {
	case errors.Is(err, ErrConflict), errors.Is(err, ErrNotFound):
		env.log.Debug("keep: the canceled run changed meanwhile", "err", err)
	case err != nil:
		env.log.Warn("keep: recording what the canceled run kept failed", "err", err)
	default:
		e.notify()
	}
}

package engine

import "time"

// HandoffGrace is how long a run that cannot be resumed may still finish
// when its process hands its runs back (HandOff).
const HandoffGrace = 500 * time.Millisecond

// HandOff makes the coming shutdown hand this process's runs back at once
// instead of letting them finish within ShutdownGrace: the process's
// client went away (a stdio client closed stdin) and nobody waits for
// it. Resumable runs are interrupted at once and go back to the queue
// with their checkpoints, for any live process or the next one that
// starts; the others may finish within HandoffGrace, then fail
// "interrupted". Call it before the Run context ends.
func (e *Engine) HandOff() { e.handoff.Store(true) }

// Hurry ends what is left of the shutdown's grace: every run still
// running is interrupted now (a SIGTERM after stdin closed).
func (e *Engine) Hurry() { e.hurryOne.Do(func() { close(e.hurry) }) }

// shutdownGrace is the grace of this shutdown; on a handoff the resumable
// runs are interrupted first.
func (e *Engine) shutdownGrace() time.Duration {
	if !e.handoff.Load() {
		return e.cfg.ShutdownGrace
	}
	e.mu.Lock()
	for _, a := range e.active {
		if tpl := e.templates[a.run.TemplateID]; tpl != nil && tpl.Info().Resumable {
			a.cancel(errCauseShutdown)
		}
	}
	e.mu.Unlock()
	return min(e.cfg.ShutdownGrace, HandoffGrace)
}

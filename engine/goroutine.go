package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
)

// Every goroutine started on behalf of a run (template workers and pools,
// browser event handlers and captures, the live view, MCP watchers and
// progress relays, egress proxy connections, the engine's own helpers)
// starts through Go, and every call that must not take its caller down
// with it (one page of a worker) goes through Guard. A panic there is
// recovered: its stack goes to the log (stderr), and the caller's onPanic
// turns it into that page's or that run's EXECUTION_ERROR "internal
// error" (InternalError). An unrecovered panic in any goroutine ends the
// whole process and every run it executes (and a peer that recovers the
// run may die of it in turn); so no package has a bare go statement but a
// short allow-list of process-level loops, checked by
// internal/gostmt's TestNoBareGoStatements (run by .ci/run).
//
// Tests inject a panic at a named site without globals: WithFaults puts
// a decision on the context, and Go and Guard panic at the start of fn
// when it says so for their site. Sites are named "package.what", e.g.
// "templates.urlPool.worker".

// Panic is a panic recovered by Go or Guard.
type Panic struct {
	// Site names where the goroutine or call was started.
	Site string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

// Error says where the panic happened and what it was.
func (p *Panic) Error() string { return fmt.Sprintf("internal error in %s: %v", p.Site, p.Value) }

// InjectedFault is the value Go and Guard panic with at a site WithFaults
// selected; tests look for it in the page's or run's error.
type InjectedFault struct{ Site string }

// String makes the injected panic recognisable in logs and errors.
func (f InjectedFault) String() string { return "injected fault at " + f.Site }

// faultKey is the context key of WithFaults' decision.
type faultKey struct{}

// WithFaults returns ctx carrying inject: every Go and Guard given this
// context (or one derived from it) panics at the start of fn when
// inject(site) is true. For tests; a context without it never panics.
func WithFaults(ctx context.Context, inject func(site string) bool) context.Context {
	return context.WithValue(ctx, faultKey{}, inject)
}

// CarryFaults returns dst carrying src's WithFaults decision, if any:
// for contexts made from context.Background() on purpose (a run's, a
// pooled tab's), which must not inherit src's cancellation or its other
// values but should still see a test's faults.
func CarryFaults(dst, src context.Context) context.Context {
	if src == nil {
		return dst
	}
	if inject, ok := src.Value(faultKey{}).(func(string) bool); ok {
		return WithFaults(dst, inject)
	}
	return dst
}

// faultAt panics with an InjectedFault when ctx's WithFaults selects site.
func faultAt(ctx context.Context, site string) {
	if ctx == nil {
		return
	}
	if inject, ok := ctx.Value(faultKey{}).(func(string) bool); ok && inject(site) {
		panic(InjectedFault{Site: site})
	}
}

// Go runs fn on a new goroutine named site. A panic in fn (after fn's own
// deferred calls ran) is logged with its stack to log (stderr when nil)
// and handed to onPanic (may be nil: logged only), which records it where
// the user sees it: the page's or the run's error (InternalError), and
// does what fn did not get to do for those waiting on it (a WaitGroup's
// Done, a channel's close): put such steps at the end of fn, not in a
// defer, so that exactly one of the two does them. A panic in onPanic
// itself is logged too. ctx is read only for WithFaults; fn gets what it
// needs by closure.
func Go(ctx context.Context, log *slog.Logger, site string, fn func(), onPanic func(*Panic)) {
	go func() {
		p := Guard(ctx, log, site, fn)
		if p != nil && onPanic != nil {
			Guard(context.Background(), log, site+".onPanic", func() { onPanic(p) })
		}
	}()
}

// Guard calls fn on the calling goroutine and returns the panic it
// recovered, logged with its stack to log (stderr when nil), or nil when
// fn returned. Use it around one unit of work whose panic must fail only
// that unit (one page of a worker).
func Guard(ctx context.Context, log *slog.Logger, site string, fn func()) (rec *Panic) {
	defer func() {
		if v := recover(); v != nil {
			rec = &Panic{Site: site, Value: v, Stack: debug.Stack()}
			if log == nil {
				log = slog.New(slog.NewTextHandler(os.Stderr, nil))
			}
			log.Error("internal error: panic recovered", "site", site, "panic", fmt.Sprint(v), "stack", string(rec.Stack))
		}
	}()
	faultAt(ctx, site)
	fn()
	return nil
}

// IsInternal reports whether e is InternalError's: a page's own failure
// for the templates, which take any other EXECUTION_ERROR of a page's
// navigation or extraction as the browser gone and stop the run.
func IsInternal(e *Error) bool {
	return e != nil && e.Code == ExecutionError && e.Details["reason"] == "internal error"
}

// InternalError is the EXECUTION_ERROR a recovered panic gives the page
// or run it happened in: "internal error", where, and that the stack is
// in the log; details.site names the site.
func InternalError(p *Panic) *Error {
	return Errorf(ExecutionError, "internal error in %s: %v (the stack is in the log; please report this)", p.Site, p.Value).
		WithDetails(map[string]any{"reason": "internal error", "site": p.Site})
}

package browser

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// instance is one browser the Manager drives: a Chromium it launches itself
// (spec is a binary path, or "" to look one up) or a remote CDP endpoint
// (spec starts with ws://, wss://, http:// or https://).
type instance struct {
	spec    string
	remote  bool
	headed  bool
	tempDir string
	// userDataDir is a persistent profile's directory ("" = a temporary
	// one per launch).
	userDataDir string
	// extraArgs are appended to a launched browser's command line.
	extraArgs []string
	// trace is called with every CDP command's method (nil = none).
	trace func(method string)
	// policyArgs returns switches the URL policy needs on a launched
	// browser's command line (the egress proxy under trust restricted),
	// appended after extraArgs so they win; nil = none. An error fails the
	// launch: the browser must not run without them.
	policyArgs func() ([]string, error)
	log        *slog.Logger

	mu      sync.Mutex
	gen     int // incremented on every (re)launch or reconnect
	b       *rod.Browser
	cancel  context.CancelFunc // ends the CDP connection
	proc    *process           // nil for remote endpoints
	product string
	lastErr error
	// lost is cancelled when the current generation's CDP connection ends
	// (pool_health.go); onLost is told when that happens without the
	// Manager closing it (a remote endpoint), and ep is the endpoint's
	// share of the pool (under Manager.pool.mu, not mu).
	lost       context.Context
	lostCancel context.CancelFunc
	onLost     func(gen int)
	ep         endpointState
}

// isRemoteSpec reports whether a --browser value names a CDP endpoint.
func isRemoteSpec(s string) bool {
	for _, p := range []string{"ws://", "wss://", "http://", "https://"} {
		if strings.HasPrefix(strings.ToLower(s), p) {
			return true
		}
	}
	return false
}

// browser returns the connected browser and its generation, launching or
// connecting on first use and again after the browser died.
func (in *instance) browser(ctx context.Context) (*rod.Browser, int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.b != nil && in.healthyLocked(ctx) {
		return in.b, in.gen, nil
	}
	if in.b != nil {
		in.log.Warn("browser is gone; relaunching", "browser", in.describeSpec())
		in.shutdownLocked()
	}
	if err := in.startLocked(ctx); err != nil {
		in.lastErr = err
		return nil, 0, err
	}
	in.lastErr = nil
	in.gen++
	in.watchLocked()
	return in.b, in.gen, nil
}

// healthyLocked reports whether the current browser still answers: a local
// process must be running, and the CDP connection must answer a short ping
// (a killed browser's process may not be reaped yet while its connection is
// already closed). One round trip per new session.
func (in *instance) healthyLocked(ctx context.Context) bool {
	if in.proc != nil && !in.proc.alive() {
		return false
	}
	if in.lost != nil && in.lost.Err() != nil {
		return false
	}
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := proto.BrowserGetVersion{}.Call(in.b.Context(c))
	return err == nil || ctx.Err() != nil
}

// alive reports, without a round trip, whether generation gen is current and
// its process (for local browsers) is still running.
func (in *instance) alive(gen int) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.b == nil || in.gen != gen {
		return false
	}
	if in.remote && in.lost != nil && in.lost.Err() != nil {
		return false // the remote browser's connection ended
	}
	return in.proc == nil || in.proc.alive()
}

// startLocked launches or connects.
func (in *instance) startLocked(ctx context.Context) error {
	wsURL := in.spec
	var proc *process
	if in.remote {
		if !strings.HasPrefix(strings.ToLower(wsURL), "ws") {
			rctx, cancel := context.WithTimeout(ctx, launchHangGuard)
			u, err := resolveEndpoint(rctx, http.DefaultClient, wsURL)
			cancel()
			if err != nil {
				return fmt.Errorf("resolve browser endpoint %s: %w", in.spec, err)
			}
			wsURL = u
		}
	} else {
		bin := in.spec
		if bin == "" {
			var err error
			if bin, err = findBinary(); err != nil {
				return err
			}
		}
		extra := in.extraArgs
		if in.policyArgs != nil {
			pa, err := in.policyArgs()
			if err != nil {
				return fmt.Errorf("launch browser %s: %w", bin, err)
			}
			extra = append(append([]string(nil), in.extraArgs...), pa...)
		}
		p, err := startProcessIn(ctx, bin, in.tempDir, in.userDataDir, in.headed, extra, in.log)
		if err != nil {
			return fmt.Errorf("launch browser %s: %w", bin, err)
		}
		proc, wsURL = p, p.wsURL
	}
	connCtx, cancel := context.WithCancel(context.Background())
	b := rod.New().Context(connCtx).NoDefaultDevice()
	if in.trace != nil {
		ws := &cdp.WebSocket{}
		if err := ws.Connect(ctx, wsURL, nil); err != nil {
			cancel()
			if proc != nil {
				proc.kill()
			}
			return fmt.Errorf("connect to browser at %s: %w", wsURL, err)
		}
		b = b.Client(cdp.New().Logger(cdpTracer(in.trace)).Start(ws))
	} else {
		b = b.ControlURL(wsURL)
	}
	if err := connectBounded(ctx, b); err != nil {
		cancel()
		if proc != nil {
			proc.kill()
		}
		return fmt.Errorf("connect to browser at %s: %w", wsURL, err)
	}
	v, err := proto.BrowserGetVersion{}.Call(b)
	if err != nil {
		cancel()
		if proc != nil {
			proc.kill()
		}
		return fmt.Errorf("query browser version: %w", err)
	}
	in.b, in.cancel, in.proc, in.product = b, cancel, proc, v.Product
	in.log.Info("browser ready", "product", v.Product, "remote", in.remote, "pid", in.pid(), "profileDir", in.userDataDir)
	return nil
}

// connectBounded connects, giving up when ctx ends (rod's Connect itself
// only honours the browser's own context).
func connectBounded(ctx context.Context, b *rod.Browser) error {
	done := make(chan error, 1)
	engine.Go(ctx, nil, "browser.connect", func() { done <- b.Connect() },
		func(p *engine.Panic) { done <- engine.InternalError(p) })
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(launchHangGuard):
		return fmt.Errorf("no answer over CDP in %s: the browser looks hung", launchHangGuard)
	}
}

// cdpTracer reports the method of each CDP command rod sends (rod's CDP
// client logs requests, responses and events to its logger).
type cdpTracer func(method string)

// Println implements rod's utils.Logger.
func (t cdpTracer) Println(vs ...any) {
	for _, v := range vs {
		if r, ok := v.(*cdp.Request); ok {
			t(r.Method)
		}
	}
}

// pid returns the local browser's process id, or 0.
func (in *instance) pid() int {
	if in.proc == nil {
		return 0
	}
	return in.proc.cmd.Process.Pid
}

// shutdownLocked ends the connection and kills a local browser.
func (in *instance) shutdownLocked() {
	if in.cancel != nil {
		in.cancel()
	}
	if in.lostCancel != nil {
		in.lostCancel()
	}
	if in.proc != nil {
		in.proc.kill()
	}
	in.b, in.cancel, in.proc, in.lost, in.lostCancel = nil, nil, nil, nil, nil
}

// close shuts the instance down for good.
func (in *instance) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.shutdownLocked()
}

// describeSpec names the instance in logs and errors.
func (in *instance) describeSpec() string {
	if in.spec == "" {
		return "system Chromium"
	}
	return in.spec
}

// closeGracefully asks the browser to quit (Browser.close) and waits for
// its process to exit, bounded, before the group kill: a persistent
// profile's cookies and storage are flushed to disk only on a clean exit.
func (in *instance) closeGracefully() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.b != nil && in.proc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = proto.BrowserClose{}.Call(in.b.Context(ctx))
		select {
		case <-in.proc.exited:
		case <-ctx.Done():
			in.log.Warn("browser did not quit in 10 s; killing it", "browser", in.describeSpec())
		}
		cancel()
	}
	in.shutdownLocked()
}

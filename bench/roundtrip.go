package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// rtResult holds one transport's round-trip figures.
type rtResult struct {
	Transport          string
	Calls              int
	GetP50, GetP99     time.Duration
	TrivP50, TrivP99   time.Duration
	RatioP50, RatioP99 float64
}

// benchRoundTrip measures get_task_run against get_runtime_profile, the
// trivial tool (no database access: it answers the in-memory profile), on
// the same session: calls alternate so both see the same machine load.
func benchRoundTrip(ctx context.Context, cl *client, transport string, calls int) (*rtResult, error) {
	id, err := cl.submitAsync(ctx, "dev_echo", map[string]any{"sleepMs": 0})
	if err != nil {
		return nil, err
	}
	if _, err := cl.waitRun(ctx, id, 10*time.Millisecond); err != nil {
		return nil, err
	}
	get := map[string]any{"runId": id}
	for i := 0; i < 50; i++ { // warm-up
		if err := cl.call(ctx, "get_task_run", get, nil); err != nil {
			return nil, err
		}
		if err := cl.call(ctx, "get_runtime_profile", nil, nil); err != nil {
			return nil, err
		}
	}
	var g, t []time.Duration
	for i := 0; i < calls; i++ {
		s := time.Now()
		if err := cl.call(ctx, "get_task_run", get, nil); err != nil {
			return nil, err
		}
		g = append(g, time.Since(s))
		s = time.Now()
		if err := cl.call(ctx, "get_runtime_profile", nil, nil); err != nil {
			return nil, err
		}
		t = append(t, time.Since(s))
	}
	r := &rtResult{Transport: transport, Calls: calls,
		GetP50: percentile(g, 50), GetP99: percentile(g, 99), TrivP50: percentile(t, 50), TrivP99: percentile(t, 99)}
	r.RatioP50 = ratio(float64(r.GetP50), float64(r.TrivP50))
	r.RatioP99 = ratio(float64(r.GetP99), float64(r.TrivP99))
	return r, nil
}

// stdioCommand is `browsertask mcp` on dbPath without its HTTP listener.
func stdioCommand(bin, dbPath string) *exec.Cmd {
	return exec.Command(bin, "mcp", "--http", "off", "--db", dbPath, "--dev-templates", "--log-level", "warn")
}

func (r *rtResult) String() string {
	return fmt.Sprintf("%-5s get_task_run p50 %s p99 %s | get_runtime_profile p50 %s p99 %s | ratio p50 %.2f× p99 %.2f×",
		r.Transport, ms(r.GetP50), ms(r.GetP99), ms(r.TrivP50), ms(r.TrivP99), r.RatioP50, r.RatioP99)
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// footResult holds scenario 5's figures.
type footResult struct {
	Starts      int
	ReadyMs     []float64
	RSSMB       []float64
	ReadyMedian float64
	RSSMedian   float64
}

// benchFootprint starts `browsertask serve` starts times, each on a fresh
// database: process start → /mcp answering initialize, and the idle VmRSS
// one second later (no run, no browser).
func benchFootprint(ctx context.Context, bin string, starts int) (*footResult, error) {
	dir, err := os.MkdirTemp("", "browsertask-bench-foot-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res := &footResult{Starts: starts}
	for i := 0; i < starts; i++ {
		d, err := startServe(ctx, bin, filepath.Join(dir, fmt.Sprintf("foot%d.db", i)))
		if err != nil {
			return nil, err
		}
		time.Sleep(time.Second)
		kb, err := d.rssKB()
		d.stop()
		if err != nil {
			return nil, err
		}
		res.ReadyMs = append(res.ReadyMs, float64(d.ready.Microseconds())/1000)
		res.RSSMB = append(res.RSSMB, float64(kb)/1024)
	}
	res.ReadyMedian, res.RSSMedian = median(res.ReadyMs), median(res.RSSMB)
	return res, nil
}

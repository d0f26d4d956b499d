package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// memoryResult holds scenario 11's figures: the memory of `browsertask
// serve` and of its Chromium after the first pages of a long
// batch_extract_pages run and near its end.
type memoryResult struct {
	Pages                        int
	EarlyAt, LateAt              int // pages done when each sample was taken
	DaemonEarlyMB, DaemonLateMB  float64
	BrowserEarlyMB, BrowserLate  float64
	DaemonRatio, BrowserRatio    float64
	BrowserProcsEarly, ProcsLate int
}

// benchMemory starts the binary, runs one batch_extract_pages of o.pages
// static pages (render "browser", o.tabs tabs) and samples the daemon's
// VmRSS and its Chromium's memory (the PSS of every process descended from
// the daemon, so pages shared between renderers count once) once 100 pages
// are done and again once 95% are: a leak per page shows as a ratio well
// above 1.
func benchMemory(ctx context.Context, o *options, bin string, out io.Writer) (*memoryResult, error) {
	pages := pageServer()
	defer pages.Close()
	dir, err := os.MkdirTemp("", "browsertask-bench-mem-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	d, err := startServe(ctx, bin, filepath.Join(dir, "mem.db"))
	if err != nil {
		return nil, err
	}
	defer d.stop()
	cl, err := connectHTTP(ctx, d.endpoint())
	if err != nil {
		return nil, err
	}
	defer cl.close()
	fields := map[string]any{}
	for k, v := range benchFields {
		fields[k] = v
	}
	urls := pageURLs(pages, o.pages, 900)
	id, err := cl.submitAsync(ctx, "batch_extract_pages", map[string]any{"urls": urls, "fields": fields, "concurrency": o.tabs, "perHostConcurrency": perHost(o.tabs)})
	if err != nil {
		return nil, err
	}
	res := &memoryResult{Pages: o.pages}
	early, late := min(100, o.pages/2), o.pages*95/100
	for {
		var r struct {
			Status   string `json:"status"`
			Progress struct {
				DoneSteps int `json:"doneSteps"`
			} `json:"progress"`
		}
		if err := cl.call(ctx, "get_task_run", map[string]any{"runId": id}, &r); err != nil {
			return nil, err
		}
		done := r.Progress.DoneSteps
		if res.EarlyAt == 0 && done >= early && r.Status == "running" {
			res.EarlyAt = done
			res.DaemonEarlyMB, res.BrowserEarlyMB, res.BrowserProcsEarly = sampleMemory(d.cmd.Process.Pid)
		}
		if res.EarlyAt != 0 && res.LateAt == 0 && done >= late && r.Status == "running" {
			res.LateAt = done
			res.DaemonLateMB, res.BrowserLate, res.ProcsLate = sampleMemory(d.cmd.Process.Pid)
		}
		if r.Status != "queued" && r.Status != "running" {
			if r.Status != "succeeded" {
				return nil, fmt.Errorf("run %s ended %s", id, r.Status)
			}
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	if res.EarlyAt == 0 || res.LateAt == 0 {
		return nil, fmt.Errorf("the run ended before both samples (early at %d, late at %d pages)", res.EarlyAt, res.LateAt)
	}
	res.DaemonRatio = ratio(res.DaemonLateMB, res.DaemonEarlyMB)
	res.BrowserRatio = ratio(res.BrowserLate, res.BrowserEarlyMB)
	fmt.Fprintf(out, "  after %d pages: daemon %.1f MB, Chromium %.1f MB (%d processes); after %d pages: daemon %.1f MB, Chromium %.1f MB (%d processes)\n",
		res.EarlyAt, res.DaemonEarlyMB, res.BrowserEarlyMB, res.BrowserProcsEarly, res.LateAt, res.DaemonLateMB, res.BrowserLate, res.ProcsLate)
	return res, nil
}

// sampleMemory returns the VmRSS of process pid and the PSS of all its
// descendants (MB), and how many descendants there are.
func sampleMemory(pid int) (daemonMB, childrenMB float64, children int) {
	daemonMB = float64(procStatusKB(pid, "VmRSS:")) / 1024
	for _, c := range descendants(pid) {
		kb := procPSSKB(c)
		if kb == 0 {
			kb = procStatusKB(c, "VmRSS:")
		}
		childrenMB += float64(kb) / 1024
		children++
	}
	return daemonMB, childrenMB, children
}

// descendants lists the processes below pid (children, grandchildren…).
func descendants(pid int) []int {
	parent := map[int]int{}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range paths {
		f := procStat(path)
		if len(f) < 2 {
			continue
		}
		self, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		pp, _ := strconv.Atoi(f[1])
		parent[self] = pp
	}
	var out []int
	for p := range parent {
		for a := parent[p]; a > 1; a = parent[a] {
			if a == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// procStatusKB reads a kB field of /proc/PID/status (0 when absent).
func procStatusKB(pid int, field string) int {
	return procKB(fmt.Sprintf("/proc/%d/status", pid), field)
}

// procPSSKB reads the proportional set size of a process (kB; 0 when
// /proc/PID/smaps_rollup is not readable).
func procPSSKB(pid int) int {
	return procKB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
}

// procKB reads the "field: N kB" line of a /proc file (0 when absent).
func procKB(path, field string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}

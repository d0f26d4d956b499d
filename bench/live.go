package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// liveResult holds scenario 6's figures: batch_extract_pages pages/s with
// nobody watching and with one viewer on the run's live view.
type liveResult struct {
	Pages, Tabs     int
	Without, With   []float64 // pages/s per repeat
	WithoutMed      float64
	WithMed         float64
	Ratio           float64 // with / without, of the medians
	PerRepeatRatio  []float64
	MedianPairRatio float64
	Frames          int   // frames the viewers received, all repeats
	Bytes           int64 // bytes of frame events they read
}

// benchLive runs batch_extract_pages through MCP against an in-process
// daemon, alternating (ABBA) runs nobody watches with runs one viewer
// watches through the dashboard's live view stream (GET
// /runs/{id}/live/stream, opened as soon as the run is submitted: every tab
// of the run is screencast and each frame base64-encoded into an event).
func benchLive(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*liveResult, error) {
	pages := pageServer()
	defer pages.Close()
	bs, err := startBenchServer(ctx, o, log, "live", nil)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	srv, cl := bs.srv, bs.cl
	n := min(o.pages, o.livePages)
	if _, err := engineExtract(ctx, cl, pageURLs(pages, min(20, n), 500), o.tabs, nil); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	res := &liveResult{Pages: n, Tabs: o.tabs}
	for r := 0; r < o.repeats; r++ {
		var plain, watched time.Duration
		var v *liveViewer
		without := func() (err error) {
			plain, err = engineExtract(ctx, cl, pageURLs(pages, n, 600+2*r), o.tabs, nil)
			return err
		}
		with := func() (err error) {
			v = &liveViewer{base: srv.http.URL}
			watched, err = engineExtract(ctx, cl, pageURLs(pages, n, 601+2*r), o.tabs, func(id string) { v.watch(ctx, id) })
			v.stop()
			if err == nil && v.err != nil {
				err = v.err
			}
			return err
		}
		first, second := without, with
		if r%2 == 1 {
			first, second = with, without
		}
		if err := first(); err != nil {
			return nil, fmt.Errorf("repeat %d: %w", r+1, err)
		}
		if err := second(); err != nil {
			return nil, fmt.Errorf("repeat %d: %w", r+1, err)
		}
		a, b := float64(n)/plain.Seconds(), float64(n)/watched.Seconds()
		res.Without, res.With = append(res.Without, a), append(res.With, b)
		res.PerRepeatRatio = append(res.PerRepeatRatio, ratio(b, a))
		res.Frames += v.frames
		res.Bytes += v.bytes
		fmt.Fprintf(out, "  repeat %d: without a viewer %.1f pages/s, with one viewer %.1f pages/s (%d frames, %.1f MB; events %v), ratio %.2f\n",
			r+1, a, b, v.frames, float64(v.bytes)/1e6, v.events, ratio(b, a))
	}
	res.WithoutMed, res.WithMed = median(res.Without), median(res.With)
	res.Ratio = ratio(res.WithMed, res.WithoutMed)
	res.MedianPairRatio = median(res.PerRepeatRatio)
	return res, nil
}

// liveViewer reads a run's live view stream as the run page does, counting
// frame events and their bytes.
type liveViewer struct {
	base   string
	cancel context.CancelFunc
	wg     sync.WaitGroup
	frames int
	bytes  int64
	events []string // the stream's event types, in order, without repeats
	err    error
}

// watch opens the run's stream and reads it until the run ends or stop.
func (v *liveViewer) watch(ctx context.Context, runID string) {
	ctx, v.cancel = context.WithCancel(ctx)
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.base+"/runs/"+runID+"/live/stream", nil)
		if err != nil {
			return
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			v.err = err
			return
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			v.err = fmt.Errorf("live view stream: HTTP %d", res.StatusCode)
			return
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		frame := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: frame-"):
				frame = true
				v.frames++
			case strings.HasPrefix(line, "event: "):
				frame = false
				if ev := strings.TrimPrefix(line, "event: "); len(v.events) == 0 || v.events[len(v.events)-1] != ev {
					v.events = append(v.events, ev)
				}
			case frame && strings.HasPrefix(line, "data: "):
				v.bytes += int64(len(line))
			}
			if line == "event: end" {
				return
			}
		}
	}()
}

// stop ends the stream and waits for its reader.
func (v *liveViewer) stop() {
	if v.cancel != nil {
		v.cancel()
	}
	v.wg.Wait()
}

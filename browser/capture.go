package browser

import (
	"context"
	"errors"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// maxCaptureHeight caps a full-page screenshot (CSS pixels): Chromium
// cannot encode taller bitmaps reliably and they would be huge anyway.
const maxCaptureHeight = 16384

// ScreenshotOptions configure Screenshot.
type ScreenshotOptions struct {
	// FullPage captures the whole scrollable page, not just the viewport.
	FullPage bool
	// Format is "png" (default) or "jpeg".
	Format string
	// Quality is the JPEG quality 1..100 (0 = Chromium's default).
	Quality int
}

// PDFOptions configure PDF.
type PDFOptions struct {
	Landscape       bool
	PrintBackground bool
	// PaperWidth and PaperHeight are inches (0 = Letter, 8.5 x 11).
	PaperWidth, PaperHeight float64
}

// SetViewport sets the tab's viewport in CSS pixels until the tab is released
// (released tabs are reset). Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (tb *Tab) SetViewport(ctx context.Context, width, height int) error {
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	err := proto.EmulationSetDeviceMetricsOverride{Width: width, Height: height, DeviceScaleFactor: 1}.Call(tb.client(gctx))
	if err != nil {
		return tb.mapErr(ctx, err, "set the viewport")
	}
	tb.t.emulated.Store(true)
	return nil
}

// Screenshot captures the tab. Only the front tab of the session's window
// renders (tabs open in the background, and a popup hides the tab that
// opened it), and a screenshot of a tab that does not render may never
// answer: the tab is brought to the front first, and the session's
// captures take turns, waiting under ctx.
// Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (tb *Tab) Screenshot(ctx context.Context, o ScreenshotOptions) ([]byte, error) {
	if tb.Crashed() {
		return nil, tb.mapErr(ctx, errors.New("renderer crashed"), "take a screenshot")
	}
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	if err := tb.takeFront(gctx); err != nil {
		return nil, tb.mapErr(ctx, err, "take a screenshot")
	}
	defer tb.leaveFront()
	req := proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng}
	if o.Format == "jpeg" {
		req.Format = proto.PageCaptureScreenshotFormatJpeg
		if o.Quality > 0 {
			q := o.Quality
			req.Quality = &q
		}
	}
	if o.FullPage {
		m, err := proto.PageGetLayoutMetrics{}.Call(tb.client(gctx))
		if err != nil {
			return nil, tb.mapErr(ctx, err, "measure the page")
		}
		size := m.CSSContentSize
		if size == nil {
			size = m.ContentSize
		}
		if size != nil && size.Width > 0 && size.Height > 0 {
			req.Clip = &proto.PageViewport{Width: size.Width, Height: min(size.Height, maxCaptureHeight), Scale: 1}
			req.CaptureBeyondViewport = true
		}
	}
	res, err := req.Call(tb.client(gctx))
	if err != nil {
		return nil, tb.mapErr(ctx, err, "take a screenshot")
	}
	return res.Data, nil
}

// PDF prints the tab to PDF. Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (tb *Tab) PDF(ctx context.Context, o PDFOptions) ([]byte, error) {
	if tb.Crashed() {
		return nil, tb.mapErr(ctx, errors.New("renderer crashed"), "print to PDF")
	}
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	req := proto.PagePrintToPDF{Landscape: o.Landscape, PrintBackground: o.PrintBackground}
	if o.PaperWidth > 0 && o.PaperHeight > 0 {
		w, h := o.PaperWidth, o.PaperHeight
		req.PaperWidth, req.PaperHeight = &w, &h
	}
	res, err := req.Call(tb.client(gctx))
	if err != nil {
		if ctx.Err() == nil && !tb.Crashed() && tb.s.in.alive(tb.s.gen) {
			return nil, engine.Wrap(engine.StepExecutionFailed, err, "print to PDF: %v", err)
		}
		return nil, tb.mapErr(ctx, err, "print to PDF")
	}
	return res.Data, nil
}

// BringToFront makes the tab the visible one of its session's window: a
// popup it opened hides it, and a hidden tab stops rendering. It waits for
// a screenshot of another tab of the session under way (under ctx).
// Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (tb *Tab) BringToFront(ctx context.Context) error {
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	if err := tb.takeFront(gctx); err != nil {
		return tb.mapErr(ctx, err, "bring the tab to the front")
	}
	tb.leaveFront()
	return nil
}

// takeFront waits for the session's turn at the front (Session.front) and
// brings the tab there; leaveFront must follow when it succeeds.
func (tb *Tab) takeFront(ctx context.Context) error {
	select {
	case tb.s.front <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if err := (proto.PageBringToFront{}).Call(tb.client(ctx)); err != nil {
		tb.leaveFront()
		return err
	}
	return nil
}

// leaveFront ends the tab's turn at the front.
func (tb *Tab) leaveFront() { <-tb.s.front }

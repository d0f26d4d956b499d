package browser

import (
	"context"
	"errors"

	"github.com/go-rod/rod"
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

// SetViewport sets tab p's viewport in CSS pixels until the tab is released
// (released tabs are reset). Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (s *Session) SetViewport(ctx context.Context, p *rod.Page, width, height int) error {
	gctx, cancel := s.guard(ctx, p)
	defer cancel()
	err := proto.EmulationSetDeviceMetricsOverride{Width: width, Height: height, DeviceScaleFactor: 1}.Call(p.Context(gctx))
	if err != nil {
		return s.mapErr(ctx, p, err, "set the viewport")
	}
	if t := s.tab(p); t != nil {
		t.emulated.Store(true)
	}
	return nil
}

// Screenshot captures tab p. Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (s *Session) Screenshot(ctx context.Context, p *rod.Page, o ScreenshotOptions) ([]byte, error) {
	if s.Crashed(p) {
		return nil, s.mapErr(ctx, p, errors.New("renderer crashed"), "take a screenshot")
	}
	gctx, cancel := s.guard(ctx, p)
	defer cancel()
	req := proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng}
	if o.Format == "jpeg" {
		req.Format = proto.PageCaptureScreenshotFormatJpeg
		if o.Quality > 0 {
			q := o.Quality
			req.Quality = &q
		}
	}
	if o.FullPage {
		m, err := proto.PageGetLayoutMetrics{}.Call(p.Context(gctx))
		if err != nil {
			return nil, s.mapErr(ctx, p, err, "measure the page")
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
	res, err := req.Call(p.Context(gctx))
	if err != nil {
		return nil, s.mapErr(ctx, p, err, "take a screenshot")
	}
	return res.Data, nil
}

// PDF prints tab p to PDF. Errors: PAGE_CRASHED, EXECUTION_ERROR, ctx's.
func (s *Session) PDF(ctx context.Context, p *rod.Page, o PDFOptions) ([]byte, error) {
	if s.Crashed(p) {
		return nil, s.mapErr(ctx, p, errors.New("renderer crashed"), "print to PDF")
	}
	gctx, cancel := s.guard(ctx, p)
	defer cancel()
	req := proto.PagePrintToPDF{Landscape: o.Landscape, PrintBackground: o.PrintBackground}
	if o.PaperWidth > 0 && o.PaperHeight > 0 {
		w, h := o.PaperWidth, o.PaperHeight
		req.PaperWidth, req.PaperHeight = &w, &h
	}
	res, err := req.Call(p.Context(gctx))
	if err != nil {
		if ctx.Err() == nil && !s.Crashed(p) && s.in.alive(s.gen) {
			return nil, engine.Wrap(engine.StepExecutionFailed, err, "print to PDF: %v", err)
		}
		return nil, s.mapErr(ctx, p, err, "print to PDF")
	}
	return res.Data, nil
}

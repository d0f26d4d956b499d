package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// blockingImages is the number of <img> elements of a scenario 9 page.
const blockingImages = 6

// blockingResult holds scenario 9's figures: batch_extract_pages over
// pages with images and a web font, with the default blockResources and
// with [] (nothing blocked), against the bare go-rod pool (nothing
// blocked), pages/s per repeat.
type blockingResult struct {
	Pages, Tabs int
	// ImageKB and FontKB are the sizes of one image and of the web font;
	// RealFont says whether the font is a real TrueType file (else bytes
	// the browser fetches, then rejects).
	ImageKB, FontKB   int
	RealFont          bool
	Blocked, All      []float64
	Base              []float64
	BlockedMed        float64
	AllMed, BaseMed   float64
	BlockedVsBase     float64 // ratio of the medians
	BlockedVsAll      float64
	AllVsBase         float64
	BlockedVsBasePair float64 // median of the per-repeat ratios
	// Browser CPU per page (ms, median of the repeats) of each side.
	BlockedCPU, AllCPU, BaseCPU []float64
	// Requests the page server got per page (median of the repeats).
	BlockedReqs, AllReqs, BaseReqs []float64
}

// blockingServer serves scenario 9's pages: /page/{n} is scenario 1's page
// (title, #name, .price, description, next link; checkPages holds) plus
// blockingImages JPEG images and text set in a web font declared by a
// shared stylesheet. Images and font have per-page URLs, as the pages of
// different sites would; the stylesheet is one cacheable file. It counts
// the requests it answers.
type blockingServer struct {
	*httptest.Server
	img, font []byte
	realFont  bool
	hits      atomic.Int64 // requests answered since the last served
}

// newBlockingServer starts the page server. The font is the system's
// DejaVu Sans when installed (a real font the browser parses), else 100 KB
// of bytes it rejects after fetching them.
func newBlockingServer() *blockingServer {
	b := &blockingServer{img: benchJPEG()}
	if f, err := os.ReadFile("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"); err == nil {
		b.font, b.realFont = f, true
	} else {
		b.font = bytes.Repeat([]byte("not a font "), 100<<10/11)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil {
			http.Error(w, "bad page number", http.StatusBadRequest)
			return
		}
		var imgs bytes.Buffer
		for k := 1; k <= blockingImages; k++ {
			fmt.Fprintf(&imgs, `<img src="/img/%d/%d.jpg" alt="Picture %d" width="400" height="250">`, n, k, k)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>`+
			`<meta name="description" content="Description of page %d"><link rel="stylesheet" href="/site.css">`+
			`<style>@font-face { font-family: PageFont; src: url(/font/%d.ttf) format("truetype"); }</style></head>`+
			`<body><h1 id="name">Item %d</h1><span class="price">%d.00</span><p class="text">Generated page %d.</p>`+
			`<div class="gallery">%s</div><a id="next" href="/page/%d">Page %d</a></body></html>`,
			html.EscapeString(fmt.Sprintf("Page %d", n)), n, n, n, n, n, imgs.String(), n+1, n+1)
	})
	mux.HandleFunc("GET /site.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Header().Set("Cache-Control", "max-age=3600")
		fmt.Fprint(w, "body { font-family: PageFont, sans-serif; margin: 2em; }\n.gallery img { display: inline-block; margin: 4px; }\n")
	})
	mux.HandleFunc("GET /img/{n}/{file}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(b.img)
	})
	mux.HandleFunc("GET /font/{file}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "font/ttf")
		_, _ = w.Write(b.font)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	return b
}

// served returns the requests answered since the last call.
func (b *blockingServer) served() int { return int(b.hits.Swap(0)) }

// benchJPEG is an 800×500 photo-like JPEG (gradients and noise, about
// 100 KB at quality 80).
func benchJPEG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 800, 500))
	seed := uint32(1)
	for y := 0; y < 500; y++ {
		for x := 0; x < 800; x++ {
			seed = seed*1664525 + 1013904223
			noise := uint8(seed >> 27)
			img.Set(x, y, color.RGBA{R: uint8(x/4) + noise, G: uint8(y/2) + noise, B: uint8((x+y)/6) + noise, A: 255})
		}
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
	return buf.Bytes()
}

// benchBlocking runs batch_extract_pages end to end through MCP (as
// scenario 1) on pages with images and a web font with the default
// blockResources (image, media, font) and with [] (nothing blocked), and
// the bare go-rod pool in the same Chromium (nothing blocked), rotating
// which goes first, o.repeats times after a warm-up of each.
func benchBlocking(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*blockingResult, error) {
	js, err := templateExtractJS()
	if err != nil {
		return nil, err
	}
	pages := newBlockingServer()
	defer pages.Close()
	bs, err := startBenchServer(ctx, o, log, "blocking", nil)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	srv, cl := bs.srv, bs.cl
	base := &baseline{bm: srv.bm, js: js}
	n := o.blockingPages
	urls := func(salt int) []string { return pageURLs(pages.Server, n, salt) }
	warm := min(20, n)
	if _, err := engineExtractBlocking(ctx, cl, pageURLs(pages.Server, warm, 900), o.tabs, nil); err != nil {
		return nil, fmt.Errorf("warm-up (default blocking): %w", err)
	}
	if _, err := engineExtractBlocking(ctx, cl, pageURLs(pages.Server, warm, 901), o.tabs, []string{}); err != nil {
		return nil, fmt.Errorf("warm-up (nothing blocked): %w", err)
	}
	if _, err := base.run(ctx, pageURLs(pages.Server, warm, 902), o.tabs); err != nil {
		return nil, fmt.Errorf("warm-up (baseline): %w", err)
	}
	res := &blockingResult{Pages: n, Tabs: o.tabs, ImageKB: len(pages.img) >> 10, FontKB: len(pages.font) >> 10, RealFont: pages.realFont}
	var pairs []float64
	for r := 0; r < o.repeats; r++ {
		var d [3]time.Duration
		var cpu, reqs [3]float64
		measured := func(i int, f func() (time.Duration, error)) error {
			pages.served()
			_, b0 := cpuTimes(srv.bm.PIDs())
			var err error
			d[i], err = f()
			_, b1 := cpuTimes(srv.bm.PIDs())
			cpu[i], reqs[i] = (b1-b0)*1000/float64(n), float64(pages.served())/float64(n)
			return err
		}
		sides := []func() error{
			func() error {
				return measured(0, func() (time.Duration, error) {
					return engineExtractBlocking(ctx, cl, urls(910+3*r), o.tabs, nil)
				})
			},
			func() error {
				return measured(1, func() (time.Duration, error) {
					return engineExtractBlocking(ctx, cl, urls(911+3*r), o.tabs, []string{})
				})
			},
			func() error {
				return measured(2, func() (time.Duration, error) { return base.run(ctx, urls(912+3*r), o.tabs) })
			},
		}
		// Rotate the order so load drift hits every side alike.
		for i := range sides {
			if err := sides[(i+r)%len(sides)](); err != nil {
				return nil, fmt.Errorf("repeat %d: %w", r+1, err)
			}
		}
		bl, al, ba := float64(n)/d[0].Seconds(), float64(n)/d[1].Seconds(), float64(n)/d[2].Seconds()
		res.Blocked, res.All, res.Base = append(res.Blocked, bl), append(res.All, al), append(res.Base, ba)
		res.BlockedCPU, res.AllCPU, res.BaseCPU = append(res.BlockedCPU, cpu[0]), append(res.AllCPU, cpu[1]), append(res.BaseCPU, cpu[2])
		res.BlockedReqs, res.AllReqs, res.BaseReqs = append(res.BlockedReqs, reqs[0]), append(res.AllReqs, reqs[1]), append(res.BaseReqs, reqs[2])
		pairs = append(pairs, ratio(bl, ba))
		fmt.Fprintf(out, "  repeat %d: default blocking %.1f pages/s, nothing blocked %.1f pages/s, bare rod %.1f pages/s → %.2f× bare, %.2f× unblocked;"+
			" Chromium CPU ms/page %.1f / %.1f / %.1f; requests/page %.1f / %.1f / %.1f\n",
			r+1, bl, al, ba, ratio(bl, ba), ratio(bl, al), cpu[0], cpu[1], cpu[2], reqs[0], reqs[1], reqs[2])
	}
	res.BlockedMed, res.AllMed, res.BaseMed = median(res.Blocked), median(res.All), median(res.Base)
	res.BlockedVsBase, res.BlockedVsAll, res.AllVsBase = ratio(res.BlockedMed, res.BaseMed), ratio(res.BlockedMed, res.AllMed), ratio(res.AllMed, res.BaseMed)
	res.BlockedVsBasePair = median(pairs)
	return res, nil
}

// engineExtractBlocking is one batch_extract_pages run through MCP with
// scenario 1's fields and the given blockResources (nil = left out, the
// default); it returns the time from the submission to the last byte of
// pages.json.
func engineExtractBlocking(ctx context.Context, cl *client, urls []string, tabs int, block []string) (time.Duration, error) {
	start := time.Now()
	fields := map[string]any{}
	for k, v := range benchFields {
		fields[k] = v
	}
	in := map[string]any{"urls": urls, "fields": fields, "concurrency": tabs, "perHostConcurrency": perHost(tabs)}
	if block != nil {
		in["blockResources"] = block
	}
	id, err := cl.submitAsync(ctx, "batch_extract_pages", in)
	if err != nil {
		return 0, err
	}
	pages, err := finishedPages(ctx, cl, id, len(urls))
	if err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	return elapsed, checkPages(urls, pages)
}

// printBlocking prints scenario 9's summary line.
func printBlocking(w io.Writer, b *blockingResult) {
	font := "a real TrueType font"
	if !b.RealFont {
		font = "font bytes the browser rejects"
	}
	fmt.Fprintf(w, "9. batch_extract_pages, %d pages with %d images of %d KB and a %d KB web font (%s), %d tabs, median of %d: "+
		"default blockResources %.1f pages/s, blockResources [] %.1f pages/s, bare go-rod (nothing blocked) %.1f pages/s → "+
		"%.2f× bare rod (target ≥ 1.2: %s; median of per-repeat ratios %.2f), %.2f× unblocked, unblocked %.2f× bare rod; "+
		"Chromium CPU ms/page %.1f / %.1f / %.1f; requests/page %.1f / %.1f / %.1f; per repeat %s / %s / %s "+
		"(go run ./bench -only blocking -blocking-pages N)\n",
		b.Pages, blockingImages, b.ImageKB, b.FontKB, font, b.Tabs, len(b.Blocked),
		b.BlockedMed, b.AllMed, b.BaseMed, b.BlockedVsBase, verdict(b.BlockedVsBase >= 1.2), b.BlockedVsBasePair, b.BlockedVsAll, b.AllVsBase,
		median(b.BlockedCPU), median(b.AllCPU), median(b.BaseCPU), median(b.BlockedReqs), median(b.AllReqs), median(b.BaseReqs),
		floats(b.Blocked, "%.1f"), floats(b.All, "%.1f"), floats(b.Base, "%.1f"))
}

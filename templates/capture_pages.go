package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// captureOut is one URL's entry in the result of screenshot_pages and
// save_pdf.
type captureOut struct {
	URL        string        `json:"url"`
	FinalURL   string        `json:"finalUrl"`
	HTTPStatus int           `json:"httpStatus"`
	ArtifactID string        `json:"artifactId"`
	MimeType   string        `json:"mimeType,omitempty"`
	Size       int           `json:"size"`
	Error      *engine.Error `json:"error"`
}

// capturePages is the run screenshot_pages and save_pdf share: every URL
// is loaded in a pooled tab, captured within perPageTimeoutMs and stored as
// one artifact named after the page (artifactNames: "example.com-index.png"). A page that cannot be loaded, answers HTTP >= 400
// or cannot be captured gets no artifact and an error.
type capturePages struct {
	template string // the template's id, for errors
	what     string // "screenshot" or "PDF", for errors
	mime     string
	ext      string
	// listMime puts the mime type in every entry of the result.
	listMime bool
	// setup prepares each tab before its first page (nil = nothing).
	setup func(ctx context.Context, tb *browser.Tab) error
	// take captures the loaded page.
	take func(ctx context.Context, tb *browser.Tab) ([]byte, error)
}

// run captures urls and returns their entries (in input order, earlier
// attempts included) and their tally. Errors: EXECUTION_ERROR (browser
// lost), ctx's cause.
func (c *capturePages) run(ctx context.Context, b *browser.Manager, env engine.Env, urls []string, load pageLoad) ([]json.RawMessage, *pageTally, error) {
	names := artifactNames(urls, c.ext)
	pool := &urlPool{env: env, setup: c.setup,
		open: func() (*browser.Session, error) { return openSession(ctx, b, env, c.template) }}
	pool.work = func(ctx context.Context, tb *browser.Tab, i int, url string) (pageDone, error) {
		out := &captureOut{URL: url}
		if c.listMime {
			out.MimeType = c.mime
		}
		lp, fatal := loadPage(ctx, tb, url, load.WaitFor, load.PerPageTimeoutMs)
		out.FinalURL, out.HTTPStatus, out.Error = lp.nav.FinalURL, lp.nav.Status, lp.failure
		if fatal != nil || lp.failure != nil {
			return pageDone{out: out, failure: lp.failure}, fatal
		}
		data, err := captureWithin(ctx, func(ctx context.Context) ([]byte, error) { return c.take(ctx, tb) },
			c.what, url, "perPageTimeoutMs", load.PerPageTimeoutMs)
		if err != nil {
			// EXECUTION_ERROR (browser gone) is fatal, anything else is
			// the page's failure.
			e := engine.AsError(err)
			if e.Code == engine.ExecutionError && !engine.IsInternal(e) && ctx.Err() == nil {
				return pageDone{out: out}, e
			}
			out.Error = e
			return pageDone{out: out, failure: e}, nil
		}
		id, err := env.PutArtifact(ctx, names[i], c.mime, data)
		if err != nil {
			return pageDone{out: out}, err
		}
		out.ArtifactID, out.Size = id, len(data)
		return pageDone{out: out}, nil
	}
	if err := pool.runList(ctx, urls, load.Concurrency); err != nil {
		return nil, nil, err
	}
	return pool.outputs, pool.tally(), nil
}

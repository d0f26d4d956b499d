package pagetools

import (
	"context"
	"os"
	"sync"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// pageFiles is what the file tools keep for a session's page: a private
// directory for the files going in (uploads) and out (downloads), the
// session's downloads, a network capture, and the passwords typed on the
// page (masked in captures). The page's mutex guards it, except the
// downloads, which arrive on their own.
type pageFiles struct {
	once    sync.Once
	dir     string
	dirErr  error
	dl      *downloads
	har     *harCapture
	secrets []string
}

// tempDir returns the page's directory, made on first use (removed by
// close, when the session's page is dropped). A daemon killed before that
// leaves it in the system's temporary directory.
func (f *pageFiles) tempDir() (string, error) {
	f.once.Do(func() {
		f.dir, f.dirErr = os.MkdirTemp("", "browsertask-files-")
		if f.dirErr != nil {
			f.dirErr = engine.Wrap(engine.ExecutionError, f.dirErr, "make a directory for the session's files: %v", f.dirErr)
		}
	})
	return f.dir, f.dirErr
}

// close stops the downloads' watch and any capture and removes the
// page's files.
func (f *pageFiles) close() {
	if f.dl != nil {
		f.dl.close()
		f.dl = nil
	}
	if f.har != nil {
		f.har.stop()
		f.har = nil
	}
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
	}
}

// startFiles starts watching the session's downloads, once per page, on
// the first call of any tool on it (and again on the next call if that
// failed): a download must be caught even when the click that starts it
// comes before any file tool is called.
func (ps *pages) startFiles(ctx context.Context, sessionID string, p *page) error {
	if p.files.dl != nil {
		return nil
	}
	arts, ok := ps.sessions.(Artifacts)
	if !ok {
		return nil // a test's fake engine keeps no artifacts
	}
	s, err := ps.browsers.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	dir, err := p.files.tempDir()
	if err != nil {
		return err
	}
	dl, err := watchDownloads(s.Browser(), dir, func(ctx context.Context, name, mime string, data []byte) (*engine.Artifact, error) {
		return arts.PutSessionArtifact(ctx, sessionID, name, mime, data)
	})
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "watch the session's downloads: %v", err)
	}
	p.files.dl = dl
	return nil
}

// noteSecret remembers value when browser_act fills or types it into a
// password field, so a network capture masks it wherever it shows (the
// login form's POST body, a URL, a page echoing it). A failure to tell
// the field's type is not the action's failure: the action reports it.
func (p *page) noteSecret(ctx context.Context, a *args) {
	if (a.Action != "fill" && a.Action != "type") || a.Value == "" {
		return
	}
	el, err := snapshot.Element(ctx, p.tab.Page(), p.refs, "ref", a.Ref)
	if err != nil {
		return
	}
	if res, err := el.Eval(`function () { return this.tagName === 'INPUT' && this.type === 'password' }`); err == nil && res.Value.Bool() {
		p.files.secrets = append(p.files.secrets, a.Value)
	}
}

// sweep drops, in the background, the pages of sessions no longer in
// list (the open sessions): a session closed or expired since its last
// call keeps no tab, no downloads' watch and no files in this process
// until somebody happens to call a tool on it again.
func (ps *pages) sweep(list []*engine.Session) {
	open := make(map[string]bool, len(list))
	for _, s := range list {
		if s.ClosedAt == nil {
			open[s.ID] = true
		}
	}
	ps.mu.Lock()
	var gone []string
	for id := range ps.bySess {
		if !open[id] {
			gone = append(gone, id)
		}
	}
	ps.mu.Unlock()
	for _, id := range gone {
		engine.Go(context.Background(), nil, "pagetools.sweep", func() { ps.drop(id) }, nil)
	}
}

package pagetools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
)

// storeFunc stores a finished download as an artifact of the session.
type storeFunc func(ctx context.Context, name, mimeType string, data []byte) (*engine.Artifact, error)

// download is one download of the session, once it ended.
type download struct {
	URL      string `json:"url"`
	Artifact *engine.Artifact
	SHA256   string
	Err      *engine.Error
}

// downloads watches a session's browser context: Chromium saves every
// download into the page's directory under its GUID
// (Browser.setDownloadBehavior allowAndName, events on), and each one
// that completes is stored as an artifact of the session and queued for
// browser_download. A download past maxFileBytes is canceled and queued as
// an error. Only GUIDs whose file lands in this session's own directory
// are its downloads: a browser's download events name no context.
type downloads struct {
	mu      sync.Mutex
	begun   map[string]*proto.BrowserDownloadWillBegin
	done    []*download
	changed chan struct{} // closed and replaced when done grows
	cancel  context.CancelFunc
	b       *rod.Browser
}

// watchDownloads sets the download behaviour of b's browser context and
// watches its download events until close.
func watchDownloads(b *rod.Browser, dir string, store storeFunc) (*downloads, error) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &downloads{begun: map[string]*proto.BrowserDownloadWillBegin{}, changed: make(chan struct{}), cancel: cancel, b: b}
	bc := b.Context(ctx)
	wait := bc.EachEvent(
		func(e *proto.BrowserDownloadWillBegin) {
			// A page's main frame is a target whose context says whose
			// download it is; a subframe's is told by where its file lands.
			if info, err := (proto.TargetGetTargetInfo{TargetID: proto.TargetTargetID(e.FrameID)}).Call(bc); err == nil &&
				info.TargetInfo.BrowserContextID != b.BrowserContextID && b.BrowserContextID != "" {
				return
			}
			d.mu.Lock()
			d.begun[e.GUID] = e
			d.mu.Unlock()
		},
		func(e *proto.BrowserDownloadProgress) {
			d.progress(ctx, bc, dir, e, store)
		},
	)
	err := proto.BrowserSetDownloadBehavior{Behavior: proto.BrowserSetDownloadBehaviorBehaviorAllowAndName,
		BrowserContextID: b.BrowserContextID, DownloadPath: dir, EventsEnabled: true}.Call(b)
	if err != nil {
		cancel()
		return nil, err
	}
	engine.Go(ctx, nil, "pagetools.downloads", wait, nil)
	return d, nil
}

// progress handles one progress event of a download this session began.
func (d *downloads) progress(ctx context.Context, b *rod.Browser, dir string, e *proto.BrowserDownloadProgress, store storeFunc) {
	d.mu.Lock()
	begin := d.begun[e.GUID]
	d.mu.Unlock()
	if begin == nil {
		return
	}
	file := filepath.Join(dir, e.GUID)
	switch e.State {
	case proto.BrowserDownloadProgressStateInProgress:
		if e.ReceivedBytes > maxFileBytes || e.TotalBytes > maxFileBytes {
			_ = proto.BrowserCancelDownload{GUID: e.GUID, BrowserContextID: b.BrowserContextID}.Call(b)
			d.finish(e.GUID, &download{URL: begin.URL, Err: engine.Errorf(engine.StepExecutionFailed,
				"the download of %s was canceled: larger than the %d bytes kept", begin.URL, maxFileBytes)})
			_ = os.Remove(file)
		}
	case proto.BrowserDownloadProgressStateCanceled:
		d.finish(e.GUID, &download{URL: begin.URL, Err: engine.Errorf(engine.StepExecutionFailed, "the download of %s was canceled", begin.URL)})
		_ = os.Remove(file)
	case proto.BrowserDownloadProgressStateCompleted:
		defer os.Remove(file)
		f, err := os.Open(file)
		if os.IsNotExist(err) {
			d.forget(e.GUID) // another session's download
			return
		}
		var data []byte
		if err == nil {
			data, err = io.ReadAll(io.LimitReader(f, maxFileBytes+1))
			f.Close()
		}
		dl := &download{URL: begin.URL}
		switch {
		case err != nil:
			dl.Err = engine.Wrap(engine.ExecutionError, err, "read the download of %s: %v", begin.URL, err)
		case len(data) > maxFileBytes:
			dl.Err = engine.Errorf(engine.StepExecutionFailed, "the download of %s is larger than the %d bytes kept", begin.URL, maxFileBytes)
		default:
			name := fileName(begin.SuggestedFilename, "download")
			a, err := store(ctx, name, mimeOf(name), data)
			if err != nil {
				dl.Err = engine.AsError(err)
			}
			sum := sha256.Sum256(data)
			dl.Artifact, dl.SHA256 = a, hex.EncodeToString(sum[:])
		}
		d.finish(e.GUID, dl)
	}
}

// mimeOf guesses a download's type from its name (Chromium's events do
// not say it): application/octet-stream when the extension says nothing.
func mimeOf(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func (d *downloads) forget(guid string) {
	d.mu.Lock()
	delete(d.begun, guid)
	d.mu.Unlock()
}

// finish queues a download's end once.
func (d *downloads) finish(guid string, dl *download) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.begun[guid] == nil {
		return
	}
	delete(d.begun, guid)
	d.done = append(d.done, dl)
	close(d.changed)
	d.changed = make(chan struct{})
}

// next takes the oldest download not yet answered, waiting until one ends
// or wait passes (nil then).
func (d *downloads) next(ctx context.Context, wait time.Duration) (*download, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		d.mu.Lock()
		if len(d.done) > 0 {
			dl := d.done[0]
			d.done = d.done[1:]
			d.mu.Unlock()
			return dl, nil
		}
		ch := d.changed
		d.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return nil, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// close stops the watch and gives the context back Chromium's default
// download behaviour: a session in a person's own browser (a profile,
// --browser-context default) must not keep saving into a directory that
// is about to be removed.
func (d *downloads) close() {
	d.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = proto.BrowserSetDownloadBehavior{Behavior: proto.BrowserSetDownloadBehaviorBehaviorDefault, BrowserContextID: d.b.BrowserContextID}.Call(d.b.Context(ctx))
}

// download answers the session's oldest download not yet answered, as an
// artifact of the session with a resource link to read it, waiting up to
// timeoutMs (default 10000) for one to end.
func (t *Tools) download(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	if a.TimeoutMs < 0 || a.TimeoutMs > 60000 {
		return nil, engine.Errorf(engine.InvalidParameter, "timeoutMs must be from 1 to 60000").WithDetails(map[string]any{"field": "timeoutMs"})
	}
	if p.files.dl == nil {
		return nil, engine.Errorf(engine.ExecutionError, "this server keeps no downloads")
	}
	wait := 10 * time.Second
	if a.TimeoutMs > 0 {
		wait = time.Duration(a.TimeoutMs) * time.Millisecond
	}
	dl, err := p.files.dl.next(ctx, wait)
	if err != nil {
		return nil, err
	}
	if dl == nil {
		return nil, &engine.Error{Code: engine.StepExecutionFailed, Message: fmt.Sprintf("no download ended within %d ms", wait.Milliseconds()),
			Recovery: "click the link or button that downloads the file (browser_act) first, or wait longer with timeoutMs"}
	}
	if dl.Err != nil {
		return nil, dl.Err
	}
	art := dl.Artifact
	b, _ := json.Marshal(map[string]any{"artifactId": art.ID, "name": art.Name, "mimeType": art.MimeType, "size": art.Size,
		"sha256": dl.SHA256, "url": dl.URL})
	summary := fmt.Sprintf("downloaded %s (%d bytes) from %s as artifact %s", art.Name, art.Size, dl.URL, art.ID)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: summary}, &sdk.TextContent{Text: string(b)}, artifactLink(art)},
		StructuredContent: json.RawMessage(b)}, nil
}

// artifactLink is a resource_link block to an artifact of the session,
// read with resources/read or get_artifact.
func artifactLink(a *engine.Artifact) sdk.Content {
	size := a.Size
	return &sdk.ResourceLink{URI: "browsertask://artifacts/" + a.ID, Name: a.Name, MIMEType: a.MimeType, Size: &size,
		Description: "artifact " + a.ID + " of session " + a.RunID + "; resources/read returns it whole, get_artifact reads it in chunks"}
}

package pagetools

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-rod/rod"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// maxFileBytes bounds one file in or out of a session's page: an upload
// read from an artifact or an allowed directory, a download kept as an
// artifact. Artifacts are written in one transaction from memory, so the
// bound is one a daemon holds comfortably; a larger download is canceled
// and reported, a larger upload refused.
const maxFileBytes = 64 << 20

// Artifacts is what the file tools ask of the engine: storing what leaves
// a session's page (downloads, HAR captures) as artifacts of the session,
// and reading an artifact to upload. *engine.Engine has it; New finds it
// on the Sessions it is given, so the tools' constructor stays as it was.
type Artifacts interface {
	PutSessionArtifact(ctx context.Context, sessionID, name, mimeType string, data []byte) (*engine.Artifact, error)
	Artifact(ctx context.Context, artifactID string) (*engine.Artifact, error)
	ArtifactBytes(ctx context.Context, artifactID string, offset, length int64) ([]byte, error)
}

// fileArgs are the file tools' arguments (args embeds them).
type fileArgs struct {
	ArtifactID string `json:"artifactId"`
	Path       string `json:"path"`
	Bodies     bool   `json:"bodies"`
}

// fileConfig is what the daemon allows the file tools: the directories
// browser_upload may read a path from (--allow-upload-dir), resolved.
type fileConfig struct {
	uploadDirs []string
}

// AllowUploadDirs lets browser_upload read files under dirs (the daemon's
// --allow-upload-dir flags); without any, only artifacts can be uploaded.
// Each must be an existing directory, given as an absolute path or one
// relative to the daemon's working directory. A path is matched against
// the directory as given and as its symbolic links resolve, and opened
// through an os.Root of it, so no symbolic link below it leads out.
func (t *Tools) AllowUploadDirs(dirs []string) error {
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("--allow-upload-dir %q: %w", d, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("--allow-upload-dir %q: not a directory", d)
		}
		t.files.uploadDirs = append(t.files.uploadDirs, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			t.files.uploadDirs = append(t.files.uploadDirs, real)
		}
	}
	return nil
}

// artifacts returns the engine's artifact methods. Errors: EXECUTION_ERROR
// when the tools were built without them (a test's fake).
func (t *Tools) artifacts() (Artifacts, error) {
	if a, ok := t.pages.sessions.(Artifacts); ok {
		return a, nil
	}
	return nil, engine.Errorf(engine.ExecutionError, "this server keeps no artifacts for sessions")
}

// upload sets a file input's file. It is a tool of its own rather than an
// action of browser_act: its input is a file (an artifact or an allowed
// path), not a string value, it has refusals of its own (the
// --allow-upload-dir rule), and it sends local bytes to the page's site,
// which a client may want to approve apart from clicks.
func (t *Tools) upload(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	if (a.ArtifactID == "") == (a.Path == "") {
		return nil, engine.Errorf(engine.InvalidParameter, "artifactId or path: give exactly one, the artifact or the file to upload").
			WithDetails(map[string]any{"field": "artifactId"})
	}
	el, err := snapshot.Element(ctx, p.tab.Page(), p.refs, "ref", a.Ref)
	if err != nil {
		return nil, err
	}
	if res, err := el.Eval(`function () { return this.tagName === 'INPUT' && this.type === 'file' }`); err != nil || !res.Value.Bool() {
		return nil, engine.Errorf(engine.InvalidParameter, "ref: %s is not a file input", a.Ref).
			WithDetails(map[string]any{"field": "ref"})
	}
	name, data, err := t.uploadBytes(ctx, a)
	if err != nil {
		return nil, err
	}
	if p.tab.Remote() {
		if err := uploadRemote(ctx, p, el, a, name, data); err != nil {
			return nil, err
		}
		return t.uploadAnswer(ctx, p, a, name, data)
	}
	dir, err := p.files.tempDir()
	if err != nil {
		return nil, err
	}
	// A directory per upload, so the file keeps its own name (the one
	// the browser sends) and never replaces an earlier upload's file.
	sub, err := os.MkdirTemp(dir, "up-")
	if err == nil {
		err = os.WriteFile(filepath.Join(sub, name), data, 0o600)
	}
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "prepare the upload: %v", err)
	}
	if err := settle(ctx, p.tab.Page(), func() error { return el.SetFiles([]string{filepath.Join(sub, name)}) }); err != nil {
		return nil, engine.Wrap(engine.StepExecutionFailed, err, "upload %s: %v", a.Ref, err)
	}
	return t.uploadAnswer(ctx, p, a, name, data)
}

// uploadAnswer is browser_upload's answer: what changed on the page, and
// the file's name, size and SHA-256.
func (t *Tools) uploadAnswer(ctx context.Context, p *page, a *args, name string, data []byte) (*sdk.CallToolResult, error) {
	sum := sha256.Sum256(data)
	a.ChangedOnly = true
	return t.snapshotAnswer(ctx, p, a, map[string]any{"done": "upload " + a.Ref, "name": name, "size": len(data), "sha256": hex.EncodeToString(sum[:])})
}

// maxRemoteUpload caps a file sent to a remote browser: its bytes travel
// inside one DevTools message (as base64, a third larger).
const maxRemoteUpload = 16 << 20

// setFilesJS gives a file input one file built in the page from its bytes
// (base64), name and type, as a person's choice would: input.files, then
// the input and change events.
const setFilesJS = `function (name, type, b64) {
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], name, {type}));
  this.files = dt.files;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return this.files.length === 1 && this.files[0].size === bytes.length;
}`

// uploadRemote sets the file of a file input in a remote browser, which
// may run on another machine (DOM.setFileInputFiles names a path on the
// browser's machine): the bytes go over the DevTools connection and the
// page builds the File. Errors: INVALID_PARAMETER over maxRemoteUpload,
// naming the field that gave the file; STEP_EXECUTION_FAILED when the
// page refused it.
func uploadRemote(ctx context.Context, p *page, el *rod.Element, a *args, name string, data []byte) error {
	if len(data) > maxRemoteUpload {
		field := "path"
		if a.ArtifactID != "" {
			field = "artifactId"
		}
		return engine.Errorf(engine.InvalidParameter, "%s: the file is %d bytes; a remote --browser takes uploads of at most %d bytes (they travel over its DevTools connection)", field, len(data), maxRemoteUpload).
			WithDetails(map[string]any{"field": field, "size": len(data), "limit": maxRemoteUpload})
	}
	typ := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
	var ok bool
	err := settle(ctx, p.tab.Page(), func() error {
		res, err := el.Context(ctx).Eval(setFilesJS, name, typ, base64.StdEncoding.EncodeToString(data))
		if err == nil {
			ok = res.Value.Bool()
		}
		return err
	})
	if err == nil && !ok {
		err = errors.New("the page did not keep the file")
	}
	if err != nil {
		return engine.Wrap(engine.StepExecutionFailed, err, "upload %s: %v", a.Ref, err)
	}
	return nil
}

// uploadBytes reads the file to upload and its name. Errors:
// INVALID_PARAMETER naming artifactId or path, ARTIFACT_NOT_FOUND,
// ARTIFACT_EXPIRED.
func (t *Tools) uploadBytes(ctx context.Context, a *args) (string, []byte, error) {
	if a.ArtifactID != "" {
		arts, err := t.artifacts()
		if err != nil {
			return "", nil, err
		}
		meta, err := arts.Artifact(ctx, a.ArtifactID)
		if err != nil {
			return "", nil, err
		}
		if meta.Size > maxFileBytes {
			return "", nil, engine.Errorf(engine.InvalidParameter, "artifactId: %s is %d bytes, more than the %d an upload takes", a.ArtifactID, meta.Size, maxFileBytes).
				WithDetails(map[string]any{"field": "artifactId"})
		}
		data, err := arts.ArtifactBytes(ctx, a.ArtifactID, 0, max(meta.Size, 1))
		if err != nil {
			return "", nil, err
		}
		return fileName(meta.Name, "upload"), data, nil
	}
	data, err := t.readAllowed(a.Path)
	if err != nil {
		return "", nil, err
	}
	return fileName(filepath.Base(a.Path), "upload"), data, nil
}

// readAllowed reads path when it lies under a directory of
// --allow-upload-dir, opened through an os.Root of that directory so a
// symbolic link leading out of it is refused. The bytes are copied before
// the browser sees them: a file changed or swapped for a link afterwards
// does not change what is sent. Errors: INVALID_PARAMETER naming path and
// the flag.
func (t *Tools) readAllowed(path string) ([]byte, error) {
	refuse := func(format string, v ...any) error {
		return (&engine.Error{Code: engine.InvalidParameter, Message: "path: " + fmt.Sprintf(format, v...),
			Recovery: "start the daemon with --allow-upload-dir DIR (repeatable) and pass an absolute path of a file under DIR, or upload an artifact with artifactId"}).
			WithDetails(map[string]any{"field": "path", "flag": "--allow-upload-dir"})
	}
	if len(t.files.uploadDirs) == 0 {
		return nil, refuse("uploads from paths are off: the daemon was started without --allow-upload-dir")
	}
	if !filepath.IsAbs(path) {
		return nil, refuse("%q is not an absolute path", path)
	}
	clean := filepath.Clean(path)
	// The path as given, then as its links resolve: an os.Root refuses a
	// link with an absolute target even when it points inside, so such a
	// path is read by where it leads, still through the Root.
	candidates := []string{clean}
	if real, err := filepath.EvalSymlinks(clean); err == nil && real != clean {
		candidates = append(candidates, real)
	}
	var why error
	for _, c := range candidates {
		for _, dir := range t.files.uploadDirs {
			rel, err := filepath.Rel(dir, c)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			data, err := readUnder(dir, rel)
			if err == nil {
				return data, nil
			}
			if why == nil {
				why = err
			}
		}
	}
	if why != nil {
		return nil, refuse("%s: %v", clean, why)
	}
	return nil, refuse("%s is not under a directory the daemon allows (--allow-upload-dir %s)", clean, strings.Join(t.files.uploadDirs, ", "))
}

// readUnder reads the regular file rel of dir through an os.Root of dir,
// so no link leads out, up to maxFileBytes.
func readUnder(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		return nil, fmt.Errorf("cannot be read under %s (a symbolic link leading out of it is refused): %w", dir, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("larger than the %d bytes an upload takes", maxFileBytes)
	}
	return data, nil
}

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/browsertask/browsertask/engine"
)

// sessionFlags are `browsertask run`'s ways to a browser session from a
// terminal, where create_browser_session (an MCP tool) is out of reach:
// --session ID uses a session another process holds (browsertask
// sessions new, a daemon), --session new opens one in this process for
// this run, --session-state FILE opens one restoring a saved login, and
// --save-session FILE writes the session's cookies and localStorage when
// the run ends, for a later --session-state or sessions import.
type sessionFlags struct {
	id    string
	state string
	save  string
	// created is the session this process opened (closed by finish).
	created string
}

// define registers the session flags on fs.
func (s *sessionFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&s.id, "session", "", `run inside this browser session: an ID from "browsertask sessions new", or "new" to open one here for this run`)
	fs.StringVar(&s.state, "session-state", "", "open a new session restoring this saved state file (--save-session, sessions export) and run inside it")
	fs.StringVar(&s.save, "save-session", "", "when the run ends, write its session's state (cookies, localStorage: keep the file private) to FILE")
}

// isNew reports whether this process opens the run's session.
func (s *sessionFlags) isNew() bool { return s.id == "new" || s.state != "" }

// open returns the session id to submit with, opening a session here when
// asked. A state file read from stdin competes with --inputs -.
func (s *sessionFlags) open(ctx context.Context, eng *engine.Engine, stdin io.Reader, stdinUsed bool) (string, error) {
	if s.state != "" && s.id != "" && s.id != "new" {
		return "", fmt.Errorf("--session-state opens a new session: leave out --session %s (or use --session new)", s.id)
	}
	if !s.isNew() {
		if s.save != "" && s.id == "" {
			return "", errors.New("--save-session needs a session: add --session new (a session opened here for this run)")
		}
		return s.id, nil
	}
	var req engine.CreateSessionRequest
	if s.state != "" {
		b, err := jsonArg("--session-state", s.state, stdin, &stdinUsed)
		if err != nil {
			return "", err
		}
		req.StorageState = b
	}
	sess, err := eng.CreateSession(ctx, req)
	if err != nil {
		return "", domainErr(err)
	}
	s.created = sess.ID
	return sess.ID, nil
}

// finish saves the session's state when --save-session asked, then closes
// a session this process opened (it cannot outlive the process anyway).
func (s *sessionFlags) finish(ctx context.Context, eng *engine.Engine, stderr io.Writer) error {
	var err error
	if s.save != "" {
		id := s.created
		if id == "" {
			id = s.id
		}
		if err = saveSessionState(ctx, eng, id, s.save); err == nil {
			fmt.Fprintf(stderr, "saved session %s to %s (reuse it with --session-state %s)\n", id, s.save, s.save)
		}
	}
	if s.created != "" {
		if _, cerr := eng.CloseSession(ctx, s.created); cerr != nil && err == nil && engine.CodeOf(cerr) != engine.SessionNotFound {
			err = domainErr(cerr)
		}
	}
	return err
}

// saveSessionState exports a session held by this process into file,
// readable by its owner only, written whole or not at all (a temporary
// file renamed over it).
func saveSessionState(ctx context.Context, eng *engine.Engine, sessionID, file string) error {
	exp, err := eng.ExportSessionState(ctx, sessionID)
	if err != nil {
		return domainErr(err)
	}
	var b []byte
	for int64(len(b)) < exp.Size {
		chunk, err := eng.ArtifactBytes(ctx, exp.ArtifactID, int64(len(b)), exp.Size-int64(len(b)))
		if err != nil {
			return domainErr(err)
		}
		if len(chunk) == 0 {
			return fmt.Errorf("session state %s ended at %d of %d bytes", exp.ArtifactID, len(b), exp.Size)
		}
		b = append(b, chunk...)
	}
	return writeFileAtomic(file, b, 0o600)
}

// writeFileAtomic writes b to file through a temporary file in the same
// directory, so an interrupted write leaves the old file whole.
func writeFileAtomic(file string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/browsertask/browsertask/engine"
	"golang.org/x/term"
)

// terminal is the person's terminal on stdin, for the questions a run
// asks: prompts go to out (stderr, so stdout stays the command's output),
// answers are read from in line by line, secrets without echo.
type terminal struct {
	in  io.Reader
	out io.Writer
	// secret reads one line without echoing it.
	secret func() ([]byte, error)
	// restore puts the terminal back as it was (echo on) when a hidden
	// prompt is abandoned (the run ended, Ctrl-C).
	restore func()
}

// ttyReader is a stdin that is a terminal: it reads a line without echo.
// Tests pass one as stdin to stand in for a person at a terminal.
type ttyReader interface {
	io.Reader
	ReadPassword() ([]byte, error)
}

// openTerminal returns the terminal stdin is, or nil when stdin is not a
// terminal (a pipe, a file, /dev/null): then nothing prompts, and a value
// is read as one line of stdin.
func openTerminal(stdin io.Reader, out io.Writer) *terminal {
	switch in := stdin.(type) {
	case ttyReader:
		return &terminal{in: in, out: out, secret: in.ReadPassword, restore: func() {}}
	case *os.File:
		fd := int(in.Fd())
		if !term.IsTerminal(fd) {
			return nil
		}
		restore := func() {}
		if st, err := term.GetState(fd); err == nil {
			restore = func() { _ = term.Restore(fd, st) }
		}
		return &terminal{in: in, out: out, secret: func() ([]byte, error) { return term.ReadPassword(fd) }, restore: restore}
	}
	return nil
}

// readLine reads one line from r, byte by byte so nothing after it is
// consumed, without its line ending. It returns io.EOF when r ends before
// any byte.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			if b.Len() == 0 {
				return "", io.EOF
			}
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimSuffix(b.String(), "\r"), nil
}

// parseYesNo reads a confirm answer: yes/y/true or no/n/false, any case.
func parseYesNo(s string) (yes, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "true":
		return true, true
	case "n", "no", "false":
		return false, true
	}
	return false, false
}

// questionText is what a prompt shows of q: its message, or its request
// id when it has none.
func questionText(q engine.Question) string {
	if m := strings.TrimSpace(q.Message); m != "" {
		return m
	}
	return "Answer for " + q.RequestID
}

// ask prompts for the answer to q until it gets one that fits its kind:
// hidden input for a secret, a line for text, y/n for confirm. It fails
// when the terminal ends (EOF) or cannot be read.
func (t *terminal) ask(q engine.Question) (engine.Answer, error) {
	for {
		switch q.Kind {
		case engine.QuestionSecret:
			fmt.Fprintf(t.out, "%s (hidden): ", questionText(q))
			b, err := t.secret()
			fmt.Fprintln(t.out) // the newline typed was not echoed
			if err != nil {
				return engine.Answer{}, fmt.Errorf("read the answer: %w", err)
			}
			if v := strings.TrimRight(string(b), "\r\n"); v != "" {
				return engine.Answer{Value: &v}, nil
			}
		case engine.QuestionText:
			fmt.Fprintf(t.out, "%s: ", questionText(q))
			v, err := readLine(t.in)
			if err != nil {
				return engine.Answer{}, fmt.Errorf("read the answer: %w", err)
			}
			if v != "" {
				return engine.Answer{Value: &v}, nil
			}
		case engine.QuestionConfirm, engine.QuestionTakeover:
			if q.Kind == engine.QuestionTakeover {
				fmt.Fprintf(t.out, "%s\n  act in the run's browser: %s\nDone? [y = done, n = give up]: ", questionText(q), q.Waiting().URL)
			} else {
				fmt.Fprintf(t.out, "%s [y/n]: ", questionText(q))
			}
			v, err := readLine(t.in)
			if err != nil {
				return engine.Answer{}, fmt.Errorf("read the answer: %w", err)
			}
			if yes, ok := parseYesNo(v); ok {
				return engine.Answer{Confirm: &yes}, nil
			}
			fmt.Fprintln(t.out, "please answer y or n")
			continue
		default:
			return engine.Answer{}, fmt.Errorf("request %s is an MCP request; answer it with the client that started the task", q.RequestID)
		}
		fmt.Fprintln(t.out, "the answer is empty; type the value (Ctrl-C cancels)")
	}
}

// answered describes an answer for the person, never a secret's value:
// "otp (secret)", "name (text: alice)", "ok (confirm: yes)".
func answered(q engine.Question, a engine.Answer) string {
	switch {
	case q.Kind == engine.QuestionSecret:
		return q.RequestID + " (secret)"
	case a.Confirm != nil && *a.Confirm:
		return q.RequestID + " (confirm: yes)"
	case a.Confirm != nil:
		return q.RequestID + " (confirm: no)"
	case a.Value != nil:
		return fmt.Sprintf("%s (%s: %s)", q.RequestID, q.Kind, *a.Value)
	}
	return q.RequestID
}

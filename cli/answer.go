package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

const answerUsage = `Usage: browsertask answer RUN [VALUE] [--request ID] [--yes|--no] [flags]

Answers the question a running run waits on (a one-time code, a value, a
yes/no), whichever process executes the run. A text or secret question
takes VALUE; without it the value is typed at the terminal (a secret
without echo), or read as one line of stdin when stdin is not a terminal.
A confirm question takes --yes or --no (or VALUE yes/no). A secret answer
travels sealed to the executing process and is never printed. --request
names the question when the run waits on more than one (browsertask show
RUN lists them under inputRequest). RUN is the run id, or a unique prefix
of it after "run_" such as the 8 characters the dashboard shows. Exits 1
when the run is unknown, waits for nothing, or the answer does not fit the
question.

Examples:
  browsertask answer run_0b7c...                  # type the one-time code, hidden
  echo 123456 | browsertask answer run_0b7c...    # from a script
  browsertask answer run_0b7c... --yes            # confirm
  browsertask answer run_0b7c... alice --request username`

// cmdAnswer answers a run's outstanding question with AnswerQuestion on
// the shared database; the process executing the run picks it up.
func cmdAnswer(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var requestID string
	var yes, no bool
	sub := &cmdFlags{usage: answerUsage, minArgs: 1, maxArgs: 2, define: func(fs *flag.FlagSet) {
		fs.StringVar(&requestID, "request", "", "the requestId of the question, when the run waits on more than one")
		fs.BoolVar(&yes, "yes", false, "answer a confirm question yes")
		fs.BoolVar(&no, "no", false, "answer a confirm question no")
	}}
	a, err := openForCLI(ctx, "answer", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	runID, err := resolveRunID(ctx, a.engine, sub.args[0])
	if err != nil {
		return err
	}
	value, hasValue := "", len(sub.args) == 2
	if hasValue {
		value = sub.args[1]
	}
	if yes && no {
		return errors.New("--yes and --no both given: use one")
	}
	q, err := waitingQuestion(ctx, a.engine, runID, requestID)
	if err != nil {
		return err
	}
	var ans engine.Answer
	switch q.Kind {
	case engine.QuestionConfirm, engine.QuestionTakeover:
		// A takeover is answered like a confirm: yes = done, no = declined.
		switch {
		case yes || no:
			if hasValue {
				return fmt.Errorf("give --yes, --no or VALUE yes/no, not both")
			}
			ans.Confirm = &yes
		case hasValue:
			v, ok := parseYesNo(value)
			if !ok {
				return fmt.Errorf("request %s of run %s asks yes/no (%q): use --yes or --no, not %q", q.RequestID, runID, questionText(q), value)
			}
			ans.Confirm = &v
		default:
			if ans, err = readAnswer(q, stdin, stderr); err != nil {
				return err
			}
		}
	case engine.QuestionText, engine.QuestionSecret:
		switch {
		case yes || no:
			return fmt.Errorf("request %s of run %s asks for a %s value (%q), not yes/no: give VALUE, or omit it to type it", q.RequestID, runID, q.Kind, questionText(q))
		case hasValue:
			if value == "" {
				return fmt.Errorf("VALUE is empty: give the %s value, or omit it to type it", q.Kind)
			}
			if q.Kind == engine.QuestionSecret {
				fmt.Fprintln(stderr, "note: a secret on the command line may stay in the shell history; omit VALUE to type it hidden")
			}
			ans.Value = &value
		default:
			if ans, err = readAnswer(q, stdin, stderr); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("request %s of run %s is an MCP request; answer it with the client that started the task", q.RequestID, runID)
	}
	if _, err := a.engine.AnswerQuestion(ctx, runID, q.RequestID, ans); err != nil {
		return domainErr(err)
	}
	fmt.Fprintf(stdout, "answered %s of %s\n", answered(q, ans), runID)
	return nil
}

// waitingQuestion finds the question of run runID to answer: requestID's,
// or the only one outstanding. Its errors say what the run does instead
// and how to go on.
func waitingQuestion(ctx context.Context, eng *engine.Engine, runID, requestID string) (engine.Question, error) {
	r, err := eng.Get(ctx, runID)
	if err != nil {
		return engine.Question{}, domainErr(err)
	}
	pending, err := eng.PendingQuestions(ctx, runID)
	if err != nil {
		return engine.Question{}, domainErr(err)
	}
	if len(pending) == 0 || r.Status != engine.StatusRunning {
		return engine.Question{}, fmt.Errorf("run %s is %s and waits for no answer (browsertask show %s says what it does)", runID, r.Status, runID)
	}
	var ids []string
	for _, q := range pending {
		if q.RequestID == requestID || (requestID == "" && len(pending) == 1) {
			return q, nil
		}
		ids = append(ids, fmt.Sprintf("%s (%s: %s)", q.RequestID, q.Kind, questionText(q)))
	}
	if requestID == "" {
		return engine.Question{}, fmt.Errorf("run %s waits for %d answers: %s; name one with --request ID", runID, len(pending), strings.Join(ids, ", "))
	}
	return engine.Question{}, fmt.Errorf("run %s waits for no answer to --request %s (answered already, expired, or never asked); it waits for: %s", runID, requestID, strings.Join(ids, ", "))
}

// readAnswer gets the answer to q when no VALUE was given: typed at the
// terminal, or one line of stdin when stdin is not a terminal.
func readAnswer(q engine.Question, stdin io.Reader, stderr io.Writer) (engine.Answer, error) {
	if t := openTerminal(stdin, stderr); t != nil {
		return t.ask(q)
	}
	line, err := readLine(stdin)
	if err != nil && !errors.Is(err, io.EOF) {
		return engine.Answer{}, fmt.Errorf("read the answer from stdin: %w", err)
	}
	if q.Kind == engine.QuestionConfirm || q.Kind == engine.QuestionTakeover {
		yes, ok := parseYesNo(line)
		if !ok {
			return engine.Answer{}, fmt.Errorf("request %s asks yes/no (%q): use --yes or --no (stdin gave %q)", q.RequestID, questionText(q), line)
		}
		return engine.Answer{Confirm: &yes}, nil
	}
	if line == "" {
		return engine.Answer{}, fmt.Errorf("no %s value on stdin for request %s (%q): give VALUE, pipe one line, or run on a terminal to type it", q.Kind, q.RequestID, questionText(q))
	}
	return engine.Answer{Value: &line}, nil
}

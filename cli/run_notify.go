package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/notify"
)

// notifyFlags are --notify (a desktop notification) and --notify-url (a
// signed webhook) for a run that ends or starts waiting for a person while
// nobody watches the terminal. The webhook's secret is read from
// --notify-secret-file or BROWSERTASK_NOTIFY_SECRET, never from a flag
// value, which would stay in the shell history.
type notifyFlags struct {
	desktop    bool
	url        string
	secretFile string
}

// define registers the notification flags.
func (n *notifyFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&n.desktop, "notify", false, "show a desktop notification (notify-send) when the run ends or waits for you")
	fs.StringVar(&n.url, "notify-url", "", "POST the run's summary as JSON to this URL when it ends or waits for you (no inputs or results; signed with --notify-secret-file)")
	fs.StringVar(&n.secretFile, "notify-secret-file", "", "file holding the shared secret that signs --notify-url bodies: header "+notify.SignatureHeader+": sha256=HMAC-SHA256(secret, body) in hex (else BROWSERTASK_NOTIFY_SECRET)")
}

// open builds the notifier the flags ask for (nil: none). Errors name the
// flag and the fix.
func (n *notifyFlags) open(getenv func(string) string, stderr io.Writer) (runNotifier, error) {
	if !n.desktop && n.url == "" {
		if n.secretFile != "" {
			return nil, fmt.Errorf("--notify-secret-file signs --notify-url bodies: add --notify-url")
		}
		return nil, nil
	}
	out := &notifier{w: stderr}
	if n.desktop {
		cmd, err := notify.FindNotifySend(getenv("PATH"))
		if err != nil {
			return nil, err
		}
		out.desktop = &notify.Desktop{Command: cmd}
	}
	if n.url != "" {
		u, err := url.Parse(n.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--notify-url must be an http(s) URL such as https://hooks.example/browsertask, got %q", n.url)
		}
		secret := []byte(strings.TrimSpace(getenv("BROWSERTASK_NOTIFY_SECRET")))
		if n.secretFile != "" {
			b, err := os.ReadFile(n.secretFile)
			if err != nil {
				return nil, fmt.Errorf("--notify-secret-file: %v", err)
			}
			secret = []byte(strings.TrimSpace(string(b)))
		}
		if len(secret) == 0 {
			fmt.Fprintln(stderr, "note: --notify-url bodies are unsigned: give the receiver's shared secret with --notify-secret-file or BROWSERTASK_NOTIFY_SECRET")
		}
		out.hook = &notify.Webhook{URL: n.url, Secret: secret}
	}
	return out, nil
}

// notifier sends a run's notifications in the background (a slow webhook
// must not stall the progress shown) and waits for them when the run
// ended, so the command's exit never drops the last one.
type notifier struct {
	w       io.Writer
	desktop *notify.Desktop
	hook    *notify.Webhook
	wg      sync.WaitGroup
}

// notifyDeadline bounds the deliveries of one notification, retries
// included.
const notifyDeadline = time.Minute

// Waiting notifies that r waits for a person.
func (n *notifier) Waiting(ctx context.Context, r *engine.Run) {
	n.send(ctx, summaryOf(notify.Waiting, r))
}

// Ended notifies that r ended and waits for every delivery.
func (n *notifier) Ended(ctx context.Context, r *engine.Run) {
	n.send(ctx, summaryOf(notify.Ended, r))
	n.wg.Wait()
}

// send delivers s through each channel in its own goroutine.
func (n *notifier) send(ctx context.Context, s notify.Summary) {
	deliver := func(name string, f func(context.Context, notify.Summary) error) {
		n.wg.Add(1)
		engine.Go(ctx, nil, "cli.notify."+name, func() {
			defer n.wg.Done()
			dctx, cancel := context.WithTimeout(ctx, notifyDeadline)
			defer cancel()
			if err := f(dctx, s); err != nil {
				fmt.Fprintf(n.w, "notification (%s) not delivered: %v\n", name, err)
			}
		}, func(p *engine.Panic) {
			// fn's deferred Done has run.
			fmt.Fprintf(n.w, "notification (%s) not delivered: %v\n", name, p)
		})
	}
	if n.desktop != nil {
		deliver("desktop", n.desktop.Send)
	}
	if n.hook != nil {
		deliver("webhook", n.hook.Send)
	}
}

// summaryOf is what a notification may say about r: no inputs, answers
// or results (internal/notify).
func summaryOf(ev notify.Event, r *engine.Run) notify.Summary {
	s := notify.Summary{Event: ev, RunID: r.RunID, TemplateID: r.TemplateID, Status: string(r.Status),
		DoneSteps: r.Progress.DoneSteps, TotalSteps: r.Progress.TotalSteps, FailedSteps: r.Progress.FailedSteps,
		ArtifactIDs: append([]string{}, r.ArtifactIDs...), At: time.Now().UnixMilli()}
	if r.Error != nil {
		s.ErrorCode, s.Message = string(r.Error.Code), r.Error.Message
	}
	if q := r.Question; q != nil && ev == notify.Waiting {
		s.QuestionKind, s.Question = q.Kind, q.Message
	}
	return s
}

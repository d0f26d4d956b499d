package notify

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// Desktop shows notifications with the notify-send command (libnotify),
// which hands them to the session's freedesktop notification service over
// D-Bus: the one way that works on every Linux desktop without speaking
// D-Bus here.
type Desktop struct {
	// Command is the notify-send executable (FindNotifySend).
	Command string
}

// FindNotifySend returns the notify-send on path (a PATH value), or an
// error that says which package provides it.
func FindNotifySend(path string) (string, error) {
	for _, dir := range splitPath(path) {
		p := dir + "/notify-send"
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("--notify: notify-send is not on PATH; install it (Debian/Ubuntu: apt-get install libnotify-bin) or use --notify-url")
}

// desktopTimeout bounds one notify-send: a desktop without a notification
// service must not hold the command up.
const desktopTimeout = 10 * time.Second

// Send shows s. A waiting run's notification is critical (it stays until
// dismissed: a person is needed); an ended run's is normal.
func (d Desktop) Send(ctx context.Context, s Summary) error {
	ctx, cancel := context.WithTimeout(ctx, desktopTimeout)
	defer cancel()
	urgency := "normal"
	if s.Event == Waiting || s.Status == "failed" {
		urgency = "critical"
	}
	cmd := exec.CommandContext(ctx, d.Command, "--app-name=browsertask", "--urgency="+urgency,
		"--category=transfer.complete", s.Title(), s.Body())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("notify-send: %v: %s", err, out)
	}
	return nil
}

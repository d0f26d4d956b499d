//go:build !linux

package browser

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttrs is the portable fallback: no process group and no parent-death
// signal, so Close kills the browser process directly.
func setProcAttrs(cmd *exec.Cmd) {}

// killTree kills the browser process (its children exit when it goes).
func killTree(pid int) {
	if pid <= 0 {
		return
	}
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// pidAlive reports whether a process with this id exists (best effort).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// GroupMembers returns the leader itself when it is alive; process groups
// are only inspected on Linux.
func GroupMembers(pgid int) []int {
	if pidAlive(pgid) {
		return []int{pgid}
	}
	return nil
}

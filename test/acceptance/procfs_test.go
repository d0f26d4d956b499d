package acceptance

// Browser and /proc helpers of the black-box harness: skipping browser tests
// without Chromium, and finding the processes a daemon started.

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// procState returns the state letter of /proc/PID/stat ("" when gone).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// procAlive reports whether pid is a live (non-zombie) process.
func procAlive(pid int) bool {
	st := procState(pid)
	return st != "" && st != "Z" && st != "X"
}

// descendants lists the live descendants of pid (children, grandchildren…)
// by walking /proc/*/stat parent links.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int][]int{}
	for _, e := range entries {
		var child int
		if _, err := fmt.Sscanf(e.Name(), "%d", &child); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscanf(s[i+2:], "%s %d", &state, &ppid); err != nil {
			continue
		}
		parent[ppid] = append(parent[ppid], child)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range parent[p] {
			if procAlive(c) {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// cmdline returns a process's command line with spaces for NULs.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

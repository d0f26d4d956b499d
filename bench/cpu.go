package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat CPU times (100 on
// Linux for every architecture Go supports).
const clockTicks = 100

// cpuTimes is CPU seconds used so far (user + system) by this process and
// by the process groups of the given browser PIDs (the browser was started
// as a group leader; exited renderers count through their reaper's
// cutime/cstime). Zero where /proc is not available.
func cpuTimes(browserPIDs []int) (self, browser float64) {
	groups := map[int]bool{}
	for _, p := range browserPIDs {
		groups[p] = true
	}
	self, _, _ = procCPU("/proc/self/stat")
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range paths {
		t, pgrp, ok := procCPU(path)
		if ok && groups[pgrp] {
			browser += t
		}
	}
	return self, browser
}

// procCPU reads utime+stime+cutime+cstime (seconds) and the process group
// from one /proc/PID/stat file.
func procCPU(path string) (float64, int, bool) {
	// Fields after "(comm)": state(3) ppid(4) pgrp(5) ... utime(14) stime(15) cutime(16) cstime(17).
	f := procStat(path)
	if len(f) < 15 {
		return 0, 0, false
	}
	pgrp, _ := strconv.Atoi(f[2])
	var ticks int64
	for _, k := range []int{11, 12, 13, 14} {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += n
	}
	return float64(ticks) / clockTicks, pgrp, true
}

// procStat returns the fields of a /proc/PID/stat file after the
// parenthesised command (state, ppid, pgrp, …); nil when unreadable.
func procStat(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

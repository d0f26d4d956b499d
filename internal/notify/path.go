package notify

import (
	"os"
	"path/filepath"
)

// splitPath splits a PATH value; an empty entry is the current directory
// and is skipped (a notification must not run a file from wherever the
// command was started).
func splitPath(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if dir != "" && filepath.IsAbs(dir) {
			out = append(out, dir)
		}
	}
	return out
}

// isExecutable reports whether p is a regular file someone may execute.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

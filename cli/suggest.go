package cli

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
)

// commands are the subcommands dispatch knows, for suggestions.
var commands = []string{"serve", "mcp", "run", "runs", "show", "cancel", "answer", "artifact", "templates", "sessions", "doctor", "version", "help"}

// nearest returns the candidate closest to word by edit distance, or ""
// when none is close enough to be what was meant (at most 2 edits, and
// fewer than half the word's letters; a candidate word begins with also
// counts).
func nearest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= 2 && bestD*2 < max(len(word), 2) {
		return best
	}
	var prefixed []string
	for _, c := range candidates {
		if len(word) >= 3 && strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) > 0 {
		sort.Strings(prefixed)
		return prefixed[0]
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, with a swap of
// two neighbouring letters counted as one edit (--inptu is --input).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// flagError turns a flag parse error into one that names the fix: an
// unknown flag suggests the nearest defined one, and every error ends
// with the command's one-line usage (not the whole help).
func flagError(fs *flag.FlagSet, err error, synopsis string) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = fmt.Sprintf("unknown flag --%s", name)
		if n := nearest(name, names); n != "" {
			msg += fmt.Sprintf(": did you mean --%s?", n)
		}
	}
	return fmt.Errorf("%s\n%s", msg, synopsis)
}

// synopsisOf is the first line of a command's usage plus where the rest
// is: what an error prints instead of the whole help.
func synopsisOf(usage, cmd string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(usage), "\n")
	return fmt.Sprintf("%s   (browsertask %s --help for more)", line, cmd)
}

// unknownCommand says a command does not exist, suggests the nearest and
// gives the one-line usage.
func unknownCommand(cmd string) error {
	msg := fmt.Sprintf("unknown command %q", cmd)
	if n := nearest(cmd, commands); n != "" {
		msg += fmt.Sprintf(": did you mean %q?", n)
	}
	return errors.New(msg + "\nUsage: browsertask COMMAND [flags]   (browsertask help lists the commands)")
}

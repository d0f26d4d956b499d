package engine

import (
	"sort"
	"strings"
)

// Nearest returns the candidate closest to word by edit distance, or ""
// when none is close enough to be what was meant (at most 2 edits, and
// fewer than half the word's letters; a candidate word begins with also
// counts). The CLI's flags and commands and the templates' inputs are
// suggested by it, one rule for every "did you mean".
func Nearest(word string, candidates []string) string {
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

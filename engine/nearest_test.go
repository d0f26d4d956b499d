package engine

import "testing"

func TestNearest(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"inptu", "input"}, {"sesion", "session"}, {"outputschema", "output-schema"}, {"ful", "full"}, {"x", ""}, {"zzzzzz", ""},
	} {
		if got := Nearest(c.word, []string{"input", "inputs", "session", "session-state", "output-schema", "full", "db"}); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

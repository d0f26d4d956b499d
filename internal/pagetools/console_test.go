package pagetools

import (
	"strings"
	"sync/atomic"
	"testing"
)

// TestConsoleLogKeepsTheLatest: a tab that logs past consoleKeep keeps its
// latest messages, says how many after since it let go, answers at most
// limit with more, and cuts a long message's text.
func TestConsoleLogKeepsTheLatest(t *testing.T) {
	var seq atomic.Int64
	c := newConsoleLog(&seq)
	for i := 0; i < consoleKeep+100; i++ {
		c.add("log", "  message  ", "", 0)
	}
	c.add("error", strings.Repeat("é", consoleTextLimit+5), "http://127.0.0.1/x", 3)
	got, lost, more := c.after(0, consoleMaxAnswer)
	if len(got) != consoleMaxAnswer || !more || lost != 101 || got[0].Seq != 102 || got[0].Text != "message" {
		t.Fatalf("after(0): %d messages from seq %d, lost %d, more %v; want %d from 102, lost 101, more", len(got), got[0].Seq, lost, more, consoleMaxAnswer)
	}
	got, lost, more = c.after(seq.Load()-1, 10)
	if len(got) != 1 || more || lost != 0 || got[0].Level != "error" || []rune(got[0].Text)[consoleTextLimit-1] != 'é' || !strings.HasSuffix(got[0].Text, "… (cut)") {
		t.Fatalf("after the last but one: %+v lost %d more %v", got, lost, more)
	}
	if got, _, _ := c.after(seq.Load(), 10); len(got) != 0 {
		t.Errorf("after the last: %+v; want none", got)
	}
}

package sqlcommon

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/browsertask/browsertask/engine"
)

// TestPurgeRefusesAnUnknownParam: a step naming a value Purge does not
// have fails with the step and the name, before any transaction starts
// (a typo in a store's step list must not run the statement short of an
// argument).
func TestPurgeRefusesAnUnknownParam(t *testing.T) {
	writes := 0
	write := func(context.Context, func(Tx) error) error { writes++; return nil }
	steps := []PurgeStep{{Name: "runs", SQL: `DELETE FROM runs`, Params: []string{"now", "bacth"}}}
	n, err := Purge(context.Background(), write, steps, engine.PurgeParams{Now: 1}, 10)
	if err == nil || !strings.Contains(err.Error(), `purge runs: no value named "bacth"`) {
		t.Fatalf("Purge = %d, %v; want an error naming step runs and value bacth", n, err)
	}
	if n != 0 || writes != 0 {
		t.Fatalf("Purge touched %d rows in %d transactions; want none", n, writes)
	}
}

// TestLoadMigrations: files come back in version order whatever their
// listing order, and each malformed set is refused naming the file or the
// version, with the store's prefix.
func TestLoadMigrations(t *testing.T) {
	ms, err := LoadMigrations(fstest.MapFS{
		"m/0010_later.sql": {Data: []byte("B")},
		"m/0002_first.sql": {Data: []byte("A")},
	}, "m", "db")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0] != (Migration{Version: 2, Name: "0002_first.sql", SQL: "A"}) ||
		ms[1] != (Migration{Version: 10, Name: "0010_later.sql", SQL: "B"}) {
		t.Fatalf("LoadMigrations = %+v; want 0002 then 0010", ms)
	}
	for _, c := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"m/init.sql": ""}, `postgres: migration "init.sql": want NNNN_name.sql`},
		{map[string]string{"m/0001_a.txt": ""}, `postgres: migration "0001_a.txt": want NNNN_name.sql`},
		{map[string]string{"m/0000_a.sql": ""}, `postgres: migration "0000_a.sql": bad version`},
		{map[string]string{"m/x1_a.sql": ""}, `postgres: migration "x1_a.sql": bad version`},
		{map[string]string{"m/0003_a.sql": "", "m/3_b.sql": ""}, `postgres: duplicate migration version 3`},
	} {
		fsys := fstest.MapFS{}
		for name, body := range c.files {
			fsys[name] = &fstest.MapFile{Data: []byte(body)}
		}
		if _, err := LoadMigrations(fsys, "m", "postgres"); err == nil || err.Error() != c.want {
			t.Errorf("LoadMigrations(%v) error = %v; want %q", c.files, err, c.want)
		}
	}
}

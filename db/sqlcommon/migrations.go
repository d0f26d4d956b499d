package sqlcommon

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one forward-only schema step of a store, read from a file
// named NNNN_description.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads the migrations in dir of fsys (each store embeds
// its own, in its own SQL dialect) in version order. prefix starts every
// error ("db", "postgres"). Errors: a file not named NNNN_name.sql, a
// version that is not a positive number, two files with one version.
func LoadMigrations(fsys fs.FS, dir, prefix string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: read migrations: %w", prefix, err)
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		if !ok || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("%s: migration %q: want NNNN_name.sql", prefix, name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: migration %q: bad version", prefix, name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%s: read migration %q: %w", prefix, name, err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("%s: duplicate migration version %d", prefix, ms[i].Version)
		}
	}
	return ms, nil
}

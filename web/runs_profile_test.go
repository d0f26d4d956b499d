package web_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// TestRunsByProfile (issue 31): the runs list shows which profile each run
// used, filters by it (/runs?profile=work and /?profile=work, the filter
// select keeps the choice, the table's refresh keeps the filter), and the
// profiles page links each profile to its runs.
func TestRunsByProfile(t *testing.T) {
	e := newEnvConfig(t, "", false, engine.Config{PollInterval: 50 * time.Millisecond, ProfilesDir: filepath.Join(t.TempDir(), "profiles")})
	ctx := context.Background()
	for _, name := range []string{"work", "home"} {
		if _, err := e.eng.CreateProfile(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string][]string{}
	for _, profile := range []string{"work", "", "home", "work"} {
		in, _ := json.Marshal(map[string]any{})
		res, err := e.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: in, Mode: engine.ModeAsync, Profile: profile})
		if err != nil {
			t.Fatalf("submit on profile %q: %v", profile, err)
		}
		ids[profile] = append(ids[profile], res.Run.RunID)
	}
	rowIDs := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<tr data-run-id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

	for _, path := range []string{"/runs?profile=work", "/?profile=work"} {
		st, body := get(t, e, path, nil)
		if st != 200 || !slices.Equal(rowIDs(body), sorted(ids["work"])) {
			t.Fatalf("GET %s: %d rows %v, want %v", path, st, rowIDs(body), sorted(ids["work"]))
		}
		if !strings.Contains(body, `<option value="work" selected>work</option>`) || !strings.Contains(body, `<option value="home">home</option>`) {
			t.Errorf("GET %s: the profile filter does not hold work (selected) and home", path)
		}
		if !strings.Contains(body, `hx-get="/?profile=work"`) {
			t.Errorf("GET %s: the table's refresh does not keep the profile filter", path)
		}
		if n := strings.Count(body, `href="/?profile=work"`); n != 2 {
			t.Errorf("GET %s: %d links to the runs on work, want one per row (2)", path, n)
		}
	}
	if st, body := get(t, e, "/?profile=home", nil); st != 200 || !slices.Equal(rowIDs(body), ids["home"]) {
		t.Fatalf("GET /?profile=home: %d rows %v, want %v", st, rowIDs(body), ids["home"])
	}
	if st, body := get(t, e, "/?profile=gone", nil); st != 200 || len(rowIDs(body)) != 0 || !strings.Contains(body, "No runs match these filters") ||
		!strings.Contains(body, `<option value="gone" selected>gone</option>`) {
		t.Fatalf("GET /?profile=gone: %d rows %v, want none and the empty state keeping the filter", st, rowIDs(body))
	}
	st, body := get(t, e, "/", nil)
	if st != 200 || len(rowIDs(body)) != 4 || strings.Count(body, `class="mono hide-narrow run-profile"`) != 4 ||
		strings.Count(body, `href="/?profile=work"`) != 2 || strings.Count(body, `href="/?profile=home"`) != 1 {
		t.Fatalf("GET /: %d rows %v; want 4 with a profile cell each, 2 linked to work, 1 to home", st, rowIDs(body))
	}
	st, body = get(t, e, "/profiles", nil)
	for _, name := range []string{"work", "home"} {
		if st != 200 || !strings.Contains(body, `<a class="profile-runs" href="/?profile=`+name+`"`) {
			t.Errorf("GET /profiles: %d, no link from %s to its runs", st, name)
		}
	}
}

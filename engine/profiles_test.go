package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestProfileSubmissionRules: a run's profile must exist, cannot come with
// a sessionId, and is refused under trust restricted unless
// AllowProfilesRestricted; a run with a known profile keeps its name.
// Creating makes a 0700 directory; a bad name or a second profile of the
// same name is INVALID_PARAMETER naming "name"; deleting removes the
// directory.
func TestProfileSubmissionRules(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "profiles")
	h := newHarness(t, engine.Config{ProfilesDir: dir}, "")
	field := func(err error) string {
		e := engine.AsError(err)
		f, _ := e.Details["field"].(string)
		return string(e.Code) + " " + f
	}
	if _, err := h.eng.CreateProfile(ctx, "Work Mail", ""); field(err) != "INVALID_PARAMETER name" {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := h.eng.CreateProfile(ctx, "work", "office"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "work")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("profile directory: %v %v, want mode 0700", fi, err)
	}
	if _, err := h.eng.CreateProfile(ctx, "work", ""); field(err) != "INVALID_PARAMETER name" {
		t.Fatalf("second work: %v", err)
	}
	submit := func(r engine.SubmitRequest) error {
		r.TemplateID, r.Inputs, r.Mode = "test_sleep", json.RawMessage(`{}`), engine.ModeAsync
		res, err := h.eng.Submit(ctx, r)
		if err == nil && res.Run.Profile != r.Profile {
			t.Fatalf("run.Profile %q, want %q", res.Run.Profile, r.Profile)
		}
		return err
	}
	if err := submit(engine.SubmitRequest{Profile: "nope"}); field(err) != "INVALID_PARAMETER profile" {
		t.Fatalf("unknown profile: %v", err)
	}
	if err := submit(engine.SubmitRequest{Profile: "work", SessionID: "sess_x"}); field(err) != "INVALID_PARAMETER profile" {
		t.Fatalf("profile with sessionId: %v", err)
	}
	if err := submit(engine.SubmitRequest{Profile: "work"}); err != nil {
		t.Fatalf("profile work: %v", err)
	}
	h.stop()

	r := newHarness(t, engine.Config{ProfilesDir: dir, TrustLevel: "restricted"}, "")
	if _, err := r.eng.CreateProfile(ctx, "work", ""); err != nil {
		t.Fatal(err)
	}
	_, err := r.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", Profile: "work", Mode: engine.ModeAsync})
	if field(err) != "TRUST_LEVEL_NOT_ALLOWED profile" {
		t.Fatalf("restricted: %v", err)
	}
	ok := newHarness(t, engine.Config{ProfilesDir: filepath.Join(t.TempDir(), "p"), TrustLevel: "restricted", AllowProfilesRestricted: true}, "")
	if _, err := ok.eng.CreateProfile(ctx, "work", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ok.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", Profile: "work", Mode: engine.ModeAsync}); err != nil {
		t.Fatalf("restricted with AllowProfilesRestricted: %v", err)
	}
	if err := r.eng.DeleteProfile(ctx, "work"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "work")); !os.IsNotExist(err) {
		t.Fatalf("directory after delete: %v", err)
	}
}

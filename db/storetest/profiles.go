package storetest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// profileStore returns h's store as an engine.ProfileStore, skipping the
// case for a backend that does not keep profiles yet.
func profileStore(t *testing.T, h Harness) engine.ProfileStore {
	t.Helper()
	ps, ok := h.Store.(engine.ProfileStore)
	if !ok {
		t.Skip("this backend does not implement engine.ProfileStore")
	}
	return ps
}

// testProfiles: profiles are created once, listed by name, leased by one
// owner at a time (taken over when the lease lapsed or its holder is
// dead), released with their usage, and deleted only without a live
// lease.
func testProfiles(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("CreateGetList", func(t *testing.T) {
		ps := profileStore(t, nh(t))
		ctx := t.Context()
		if err := ps.CreateProfile(ctx, engine.BrowserProfile{Name: "work", Note: "the office", CreatedAt: base}); err != nil {
			t.Fatal(err)
		}
		checkErr(t, "CreateProfile(again)", ps.CreateProfile(ctx, engine.BrowserProfile{Name: "work", CreatedAt: base + 1}), engine.ErrConflict)
		if err := ps.CreateProfile(ctx, engine.BrowserProfile{Name: "alpha", CreatedAt: base + 2}); err != nil {
			t.Fatal(err)
		}
		want := engine.BrowserProfile{Name: "work", Note: "the office", CreatedAt: base, Sites: []string{}}
		got, err := ps.GetProfile(ctx, "work")
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("GetProfile = %+v, %v; want %+v", got, err, want)
		}
		_, err = ps.GetProfile(ctx, "nope")
		checkErr(t, "GetProfile(unknown)", err, engine.ErrNotFound)
		list, err := ps.ListProfiles(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "work" {
			t.Fatalf("ListProfiles = %+v, %v; want alpha, work", list, err)
		}
	})

	t.Run("LeaseOneHolder", func(t *testing.T) {
		ps := profileStore(t, nh(t))
		ctx := t.Context()
		if err := ps.CreateProfile(ctx, engine.BrowserProfile{Name: "p", CreatedAt: base}); err != nil {
			t.Fatal(err)
		}
		claim := func(owner string, now int64, dead ...string) string {
			t.Helper()
			h, err := ps.AcquireProfileLease(ctx, engine.ProfileLeaseClaim{Name: "p", OwnerID: owner, Now: now, Until: now + 1000, DeadOwners: dead})
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		if h := claim("a", base); h != "a" {
			t.Fatalf("first claim: holder %q, want a", h)
		}
		if h := claim("b", base+10); h != "a" {
			t.Fatalf("claim while a holds it: holder %q, want a", h)
		}
		if h := claim("a", base+20); h != "a" {
			t.Fatalf("a claims again: holder %q, want a", h)
		}
		checkErr(t, "RenewProfileLease(b)", ps.RenewProfileLease(ctx, "p", "b", base+5000), engine.ErrConflict)
		if err := ps.RenewProfileLease(ctx, "p", "a", base+5000); err != nil {
			t.Fatal(err)
		}
		if h := claim("b", base+4000); h != "a" {
			t.Fatalf("claim before the renewed lease lapsed: holder %q, want a", h)
		}
		if h := claim("b", base+4000, "a"); h != "b" {
			t.Fatalf("claim with a dead: holder %q, want b", h)
		}
		if h := claim("c", base+6000); h != "c" {
			t.Fatalf("claim after b's lease lapsed: holder %q, want c", h)
		}
		_, err := ps.AcquireProfileLease(ctx, engine.ProfileLeaseClaim{Name: "nope", OwnerID: "a", Now: base, Until: base + 1})
		checkErr(t, "AcquireProfileLease(unknown)", err, engine.ErrNotFound)
	})

	t.Run("ReleaseRecordsUsage", func(t *testing.T) {
		ps := profileStore(t, nh(t))
		ctx := t.Context()
		if err := ps.CreateProfile(ctx, engine.BrowserProfile{Name: "p", CreatedAt: base}); err != nil {
			t.Fatal(err)
		}
		if _, err := ps.AcquireProfileLease(ctx, engine.ProfileLeaseClaim{Name: "p", OwnerID: "a", Now: base, Until: base + 1000}); err != nil {
			t.Fatal(err)
		}
		checkErr(t, "DeleteProfile(leased)", ps.DeleteProfile(ctx, "p", base+1, nil), engine.ErrConflict)
		u := engine.ProfileUsage{LastUsedAt: base + 50, Sites: []string{"a.test", "b.test"}, SizeBytes: 4096}
		if err := ps.ReleaseProfileLease(ctx, "p", "a", u); err != nil {
			t.Fatal(err)
		}
		got, err := ps.GetProfile(ctx, "p")
		want := engine.BrowserProfile{Name: "p", CreatedAt: base, LastUsedAt: base + 50, Sites: []string{"a.test", "b.test"}, SizeBytes: 4096}
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("after release: %+v, %v; want %+v", got, err, want)
		}
		if h, err := ps.AcquireProfileLease(ctx, engine.ProfileLeaseClaim{Name: "p", OwnerID: "b", Now: base + 60, Until: base + 1000}); err != nil || h != "b" {
			t.Fatalf("claim after release: %q, %v; want b", h, err)
		}
		checkErr(t, "DeleteProfile(leased by b)", ps.DeleteProfile(ctx, "p", base+70, nil), engine.ErrConflict)
		if err := ps.DeleteProfile(ctx, "p", base+70, []string{"b"}); err != nil {
			t.Fatalf("DeleteProfile with b dead: %v", err)
		}
		checkErr(t, "DeleteProfile(gone)", ps.DeleteProfile(ctx, "p", base+80, nil), engine.ErrNotFound)
	})
	t.Run("ListRunsByProfile", func(t *testing.T) {
		h := nh(t)
		profileStore(t, h)
		s := h.Store
		for i, profile := range []string{"work", "", "home", "work", ""} {
			r := queuedRun(fmt.Sprintf("run_p%d", i), base+int64(i))
			r.Profile = profile
			mustCreate(t, s, r)
		}
		for profile, want := range map[string][]string{"work": {"run_p3", "run_p0"}, "home": {"run_p2"}, "none": {}} {
			runs, total, err := s.ListRuns(t.Context(), engine.RunFilter{Now: base + 100, Profile: profile})
			got := []string{}
			for _, r := range runs {
				if r.Profile != profile {
					t.Errorf("profile %q: run %s has profile %q", profile, r.RunID, r.Profile)
				}
				got = append(got, r.RunID)
			}
			if err != nil || total != len(want) || !reflect.DeepEqual(got, want) {
				t.Errorf("ListRuns(profile %q) = %v total %d, %v; want %v", profile, got, total, err, want)
			}
		}
	})
}

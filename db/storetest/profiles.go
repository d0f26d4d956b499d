package storetest

import (
	"fmt"
	"reflect"
	"sync"
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
// dead, and by exactly one of several processes claiming at once),
// released with their usage, and deleted only without a live lease; a
// run's profile is stored with it and read back by every run read.
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
	t.Run("LeaseRace", func(t *testing.T) { testProfileLeaseRace(t, nh(t)) })
	t.Run("RunKeepsProfile", func(t *testing.T) { testRunKeepsProfile(t, nh(t)) })
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

// testProfileLeaseRace: owners on several handles (processes) claim one
// free profile at once; exactly one gets it and every answer names it.
func testProfileLeaseRace(t *testing.T, h Harness) {
	ps := profileStore(t, h)
	if err := ps.CreateProfile(t.Context(), engine.BrowserProfile{Name: "p", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	handles := []engine.ProfileStore{ps}
	for range 2 {
		p, ok := peer(t, h).(engine.ProfileStore)
		if !ok {
			t.Fatal("the peer handle is not an engine.ProfileStore but the store is")
		}
		handles = append(handles, p)
	}
	const n = 8
	holders := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			holders[i], errs[i] = handles[i%len(handles)].AcquireProfileLease(t.Context(), engine.ProfileLeaseClaim{
				Name: "p", OwnerID: fmt.Sprintf("owner_%d", i), Now: base, Until: base + 1000})
		}()
	}
	close(start)
	wg.Wait()
	granted, winner := 0, ""
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		if holders[i] == fmt.Sprintf("owner_%d", i) {
			granted++
			winner = holders[i]
		}
	}
	if granted != 1 {
		t.Fatalf("%d of %d concurrent claims got the lease (holders %q); want exactly 1", granted, n, holders)
	}
	for i, got := range holders {
		if got != winner {
			t.Errorf("claim %d: holder %q, want the winner %q", i, got, winner)
		}
	}
	got, err := ps.GetProfile(t.Context(), "p")
	if err != nil || got.HolderID != winner || got.LeaseExpiresAt != base+1000 {
		t.Fatalf("GetProfile after the race = %+v, %v; want holder %q until %d", got, err, winner, base+1000)
	}
}

// testRunKeepsProfile: the profile a run was created with comes back from
// CreateRun, GetRun, ListRuns and ClaimRuns; a run without one reads "".
func testRunKeepsProfile(t *testing.T, h Harness) {
	profileStore(t, h)
	s := h.Store
	withProfile := queuedRun("run_a", base)
	withProfile.Profile = "work"
	if got := mustCreate(t, s, withProfile); got.Profile != "work" {
		t.Fatalf("CreateRun returned profile %q, want work", got.Profile)
	}
	if got := mustCreate(t, s, queuedRun("run_b", base+1)); got.Profile != "" {
		t.Fatalf("CreateRun without a profile returned profile %q, want \"\"", got.Profile)
	}
	if got := mustGet(t, s, "run_a"); got.Profile != "work" {
		t.Fatalf("GetRun(run_a).Profile = %q, want work", got.Profile)
	}
	runs, total, err := s.ListRuns(t.Context(), engine.RunFilter{Now: base + 2})
	if err != nil || total != 2 || len(runs) != 2 {
		t.Fatalf("ListRuns = %d runs (total %d), %v; want 2", len(runs), total, err)
	}
	got := map[string]string{runs[0].RunID: runs[0].Profile, runs[1].RunID: runs[1].Profile}
	if want := map[string]string{"run_a": "work", "run_b": ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ListRuns profiles = %v, want %v", got, want)
	}
	if c := mustClaim(t, s, "owner_1", base+3); c.RunID != "run_a" || c.Profile != "work" {
		t.Fatalf("ClaimRuns = %s with profile %q; want run_a with work", c.RunID, c.Profile)
	}
	if c := mustClaim(t, s, "owner_1", base+4); c.RunID != "run_b" || c.Profile != "" {
		t.Fatalf("ClaimRuns = %s with profile %q; want run_b without one", c.RunID, c.Profile)
	}
}

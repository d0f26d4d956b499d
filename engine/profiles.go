package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// BrowserProfile is a named persistent browser profile: a Chromium
// user-data directory owned by browsertask (ProfilesDir/<name>, mode 0700)
// that a person signs into by hand once and runs then use by name. Only
// names of sites are kept here, never a cookie value.
type BrowserProfile struct {
	Name string `json:"name"`
	Note string `json:"note"`
	// CreatedAt and LastUsedAt are Unix milliseconds (LastUsedAt = 0:
	// never opened).
	CreatedAt  int64 `json:"createdAt"`
	LastUsedAt int64 `json:"lastUsedAt"`
	// Sites are the cookie domains the profile held when its browser last
	// closed (names only, sorted, without a leading dot).
	Sites []string `json:"sites"`
	// SizeBytes is the directory's size when its browser last closed.
	SizeBytes int64 `json:"sizeBytes"`
	// HolderID is the owner id of the process whose browser has the
	// profile open ("" = none) and LeaseExpiresAt when that lease lapses
	// without a renewal.
	HolderID       string `json:"holderId,omitempty"`
	LeaseExpiresAt int64  `json:"leaseExpiresAt,omitempty"`
}

// ProfileLeaseClaim asks for a profile's lease: granted when nobody holds
// it, the caller holds it already, the lease expired (LeaseExpiresAt <=
// Now) or the holder is one of DeadOwners (PeerAlive said so).
type ProfileLeaseClaim struct {
	Name       string
	OwnerID    string
	Now        int64
	Until      int64
	DeadOwners []string
}

// ProfileStore keeps profiles and their leases. It is separate from Store
// so a backend can add it later: the engine uses it when its Store also
// implements it, and answers EXECUTION_ERROR "profiles need …" otherwise.
// Methods return ErrNotFound for a missing profile and ErrConflict where
// said.
type ProfileStore interface {
	// CreateProfile inserts p. ErrConflict when the name exists.
	CreateProfile(ctx context.Context, p BrowserProfile) error
	// GetProfile returns one profile.
	GetProfile(ctx context.Context, name string) (*BrowserProfile, error)
	// ListProfiles returns every profile, by name.
	ListProfiles(ctx context.Context) ([]BrowserProfile, error)
	// DeleteProfile removes the profile row unless a lease other than
	// one held by a dead owner (deadOwners) or an expired one (<= now) is
	// on it: ErrConflict then.
	DeleteProfile(ctx context.Context, name string, now int64, deadOwners []string) error
	// AcquireProfileLease grants the lease (see ProfileLeaseClaim) and
	// returns the holder after the write: c.OwnerID when granted, the
	// other holder when not.
	AcquireProfileLease(ctx context.Context, c ProfileLeaseClaim) (holder string, err error)
	// RenewProfileLease extends a lease ownerID holds; ErrConflict when
	// it no longer does.
	RenewProfileLease(ctx context.Context, name, ownerID string, until int64) error
	// ReleaseProfileLease ends ownerID's lease (a no-op when another
	// holds it) and records what the closed browser left: last use,
	// sites and size.
	ReleaseProfileLease(ctx context.Context, name, ownerID string, usage ProfileUsage) error
}

// ProfileUsage is what a profile's browser left when it closed.
type ProfileUsage struct {
	LastUsedAt int64
	Sites      []string
	SizeBytes  int64
}

// profileNameRE is the profile name rule: 1–63 characters, lowercase ASCII
// letters, digits, '-' and '_', starting with a letter or a digit. The name
// is a directory name on every OS and needs no quoting in a shell.
var profileNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ProfileNameRule says the rule in error messages and help.
const ProfileNameRule = "1-63 characters: lowercase letters, digits, '-' and '_', starting with a letter or digit (e.g. \"work\")"

// CheckProfileName returns INVALID_PARAMETER naming field when name breaks
// the rule.
func CheckProfileName(field, name string) error {
	if !profileNameRE.MatchString(name) {
		return Errorf(InvalidParameter, "%s %q is not a profile name: %s", field, name, ProfileNameRule).
			WithDetails(map[string]any{"field": field})
	}
	return nil
}

// profileStore returns the store's ProfileStore, or EXECUTION_ERROR.
func (e *Engine) profileStore() (ProfileStore, error) {
	if e.profiles == nil {
		return nil, Errorf(ExecutionError, "this database backend does not keep browser profiles yet (SQLite does)")
	}
	if e.cfg.ProfilesDir == "" {
		return nil, Errorf(ExecutionError, "no profiles directory is configured (it is the database's directory + /profiles)")
	}
	return e.profiles, nil
}

// ProfileDir is where profile name's Chromium user-data directory lives.
func (e *Engine) ProfileDir(name string) string {
	return filepath.Join(e.cfg.ProfilesDir, name)
}

// CreateProfile creates an empty profile and its directory (mode 0700).
// Errors: INVALID_PARAMETER (name rule, a name in use: field "name"),
// EXECUTION_ERROR.
func (e *Engine) CreateProfile(ctx context.Context, name, note string) (*BrowserProfile, error) {
	ps, err := e.profileStore()
	if err != nil {
		return nil, err
	}
	if err := CheckProfileName("name", name); err != nil {
		return nil, err
	}
	if len(note) > 1000 {
		return nil, Errorf(InvalidParameter, "note is %d bytes; at most 1000", len(note)).WithDetails(map[string]any{"field": "note"})
	}
	if err := os.MkdirAll(e.cfg.ProfilesDir, 0o700); err != nil {
		return nil, Wrap(ExecutionError, err, "create the profiles directory: %v", err)
	}
	p := BrowserProfile{Name: name, Note: note, CreatedAt: e.now(), Sites: []string{}}
	if err := ps.CreateProfile(ctx, p); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, Errorf(InvalidParameter, "a profile named %q exists; choose another name or delete it first", name).
				WithDetails(map[string]any{"field": "name"})
		}
		return nil, Wrap(ExecutionError, err, "store profile: %v", err)
	}
	// A directory left by a profile deleted while its files were busy is
	// not this profile's: start empty.
	dir := e.ProfileDir(name)
	_ = os.RemoveAll(dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		_ = ps.DeleteProfile(ctx, name, e.now(), nil)
		return nil, Wrap(ExecutionError, err, "create profile directory: %v", err)
	}
	return &p, nil
}

// Profiles lists the profiles. Errors: EXECUTION_ERROR.
func (e *Engine) Profiles(ctx context.Context) ([]BrowserProfile, error) {
	ps, err := e.profileStore()
	if err != nil {
		return nil, err
	}
	list, err := ps.ListProfiles(ctx)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list profiles: %v", err)
	}
	return list, nil
}

// GetProfile returns one profile. Errors: INVALID_PARAMETER (unknown
// name, field "profile"), EXECUTION_ERROR.
func (e *Engine) GetProfile(ctx context.Context, name string) (*BrowserProfile, error) {
	ps, err := e.profileStore()
	if err != nil {
		return nil, err
	}
	if err := CheckProfileName("profile", name); err != nil {
		return nil, err
	}
	p, err := ps.GetProfile(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(InvalidParameter, "profile %q does not exist: create it with sign_in_profile (or `browsertask profiles new %s`); list_profiles lists them", name, name).
			WithDetails(map[string]any{"field": "profile"})
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read profile: %v", err)
	}
	return p, nil
}

// DeleteProfile removes the profile and its directory. It is refused
// while a live process has the profile's browser open. Errors:
// INVALID_PARAMETER (unknown), EXECUTION_ERROR (in use).
func (e *Engine) DeleteProfile(ctx context.Context, name string) error {
	ps, err := e.profileStore()
	if err != nil {
		return err
	}
	if _, err := e.GetProfile(ctx, name); err != nil {
		return err
	}
	dead, err := e.deadOwners(ctx)
	if err != nil {
		return err
	}
	if err := ps.DeleteProfile(ctx, name, e.now(), dead); err != nil {
		if errors.Is(err, ErrConflict) {
			return Errorf(ExecutionError, "profile %q is in use by a run; delete it once its runs ended", name).
				WithDetails(map[string]any{"profile": name})
		}
		return Wrap(ExecutionError, err, "delete profile: %v", err)
	}
	if err := os.RemoveAll(e.ProfileDir(name)); err != nil {
		return Wrap(ExecutionError, err, "profile %q is deleted but its directory could not be removed: %v", name, err)
	}
	return nil
}

// deadOwners lists the owner rows PeerAlive calls dead.
func (e *Engine) deadOwners(ctx context.Context) ([]string, error) {
	owners, err := e.store.ListOwners(ctx)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read owners: %v", err)
	}
	var dead []string
	for _, o := range owners {
		if !e.PeerAlive(o) {
			dead = append(dead, o.ID)
		}
	}
	return dead, nil
}

// DirSize adds up the sizes of the regular files under dir.
func DirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// SortedSites returns the distinct cookie domains, without a leading dot,
// sorted.
func SortedSites(domains []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, d := range domains {
		for len(d) > 0 && d[0] == '.' {
			d = d[1:]
		}
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// profileErr wraps a store error in profile context.
func profileErr(op, name string, err error) error {
	return Wrap(ExecutionError, err, "%s profile %q: %v", op, name, fmt.Sprint(err))
}

// checkRunProfile checks a submission's profile: a known name, not with a
// sessionId, and under trust restricted only with AllowProfilesRestricted.
// Errors: INVALID_PARAMETER (field "profile"), TRUST_LEVEL_NOT_ALLOWED.
func (e *Engine) checkRunProfile(ctx context.Context, r SubmitRequest) error {
	if r.Profile == "" {
		return nil
	}
	if r.SessionID != "" {
		return Errorf(InvalidParameter, "give sessionId or profile, not both: a profile is its own browser with its own cookies; "+
			"drop sessionId to run in profile %q, or drop profile to run in the session", r.Profile).
			WithDetails(map[string]any{"field": "profile"})
	}
	if e.cfg.TrustLevel == "restricted" && !e.cfg.AllowProfilesRestricted {
		return Errorf(TrustLevelNotAllowed, "profile %q: browser profiles hold a person's signed-in sites and are refused under trust restricted; "+
			"start the server with --allow-profiles-restricted to allow them", r.Profile).
			WithDetails(map[string]any{"field": "profile"})
	}
	_, err := e.GetProfile(ctx, r.Profile)
	return err
}

// SignInTemplate is the template a person signs into a profile with.
const SignInTemplate = "profile_sign_in"

// SignInProfile creates profile name when it does not exist yet (with
// note) and submits a profile_sign_in run on it that opens startURL and
// waits for a person to sign in through the live view and press Done. An
// existing profile is signed into again (another site, an expired login).
// The run waits for the person; its question carries the live view's
// URL. Errors: INVALID_PARAMETER (name, url), TRUST_LEVEL_NOT_ALLOWED,
// EXECUTION_ERROR.
func (e *Engine) SignInProfile(ctx context.Context, name, note, startURL string, mode Mode) (*BrowserProfile, *SubmitResult, error) {
	if err := CheckProfileName("name", name); err != nil {
		return nil, nil, err
	}
	if _, ok := e.templates[SignInTemplate]; !ok {
		return nil, nil, Errorf(ExecutionError, "this process has no %s template", SignInTemplate)
	}
	p, err := e.GetProfile(ctx, name)
	if err != nil {
		if p, err = e.CreateProfile(ctx, name, note); err != nil {
			return nil, nil, err
		}
	}
	in, _ := json.Marshal(map[string]string{"url": startURL})
	res, err := e.Submit(ctx, SubmitRequest{TemplateID: SignInTemplate, Profile: name, Inputs: in, Mode: mode})
	if err != nil {
		return nil, nil, err
	}
	return p, res, nil
}

// LiveViewURL is the dashboard page of run runID's live view in this
// process ("" when this process serves no dashboard).
func (e *Engine) LiveViewURL(runID string) string { return LiveURL(e.liveBaseURL(), runID) }

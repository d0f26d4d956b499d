package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// Profiles is what the profiles page needs of the engine (the engine
// implements it; a dashboard over an engine without it shows no profiles).
type Profiles interface {
	Profiles(ctx context.Context) ([]engine.BrowserProfile, error)
	SignInProfile(ctx context.Context, name, note, startURL string, mode engine.Mode) (*engine.BrowserProfile, *engine.SubmitResult, error)
	DeleteProfile(ctx context.Context, name string) error
}

var _ Profiles = (*engine.Engine)(nil)

// ProfilesView is the profiles page.
type ProfilesView struct {
	Page     Page
	Profiles []ProfileRow
	// Name, Note and URL refill the form after a refused submission, and
	// Error says why.
	Name, Note, URL, Error string
}

// ProfileRow is one profile in the list.
type ProfileRow struct {
	Name, Note, Sites, Created, LastUsed, Size string
	// InUse names the process holding the profile's browser ("" = none).
	InUse string
	// DeleteURL deletes the profile (POST).
	DeleteURL string
	// RunsURL lists the runs that used the profile.
	RunsURL string
}

// profilesPage lists the profiles and the "New profile" form.
func (d *Dashboard) profilesPage(w http.ResponseWriter, r *http.Request) {
	d.renderProfiles(w, r, http.StatusOK, ProfilesView{})
}

// renderProfiles renders the page with v's form values.
func (d *Dashboard) renderProfiles(w http.ResponseWriter, r *http.Request, status int, v ProfilesView) {
	ps, ok := d.eng.(Profiles)
	if !ok {
		d.fail(w, r, engine.Errorf(engine.ExecutionError, "this dashboard has no browser profiles"))
		return
	}
	list, err := ps.Profiles(r.Context())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Page = d.page("Profiles", "profiles")
	now := d.now()
	for _, p := range list {
		row := ProfileRow{Name: p.Name, Note: p.Note, Sites: strings.Join(p.Sites, ", "), Created: ago(now, p.CreatedAt),
			LastUsed: "never", Size: size(p.SizeBytes), InUse: p.HolderID,
			DeleteURL: "/profiles/" + url.PathEscape(p.Name) + "/delete", RunsURL: profileRunsURL(p.Name)}
		if p.LastUsedAt > 0 {
			row.LastUsed = ago(now, p.LastUsedAt)
		}
		if p.LeaseExpiresAt <= now.UnixMilli() {
			row.InUse = ""
		}
		v.Profiles = append(v.Profiles, row)
	}
	d.render(w, r, status, profilesPage(v), nil)
}

// newProfile creates (or signs into again) a profile and opens the sign-in
// run's page at its live view, where the person signs in and presses Done.
func (d *Dashboard) newProfile(w http.ResponseWriter, r *http.Request) {
	ps, ok := d.eng.(Profiles)
	if !ok {
		d.fail(w, r, engine.Errorf(engine.ExecutionError, "this dashboard has no browser profiles"))
		return
	}
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, engine.Errorf(engine.InvalidParameter, "form: %v", err))
		return
	}
	v := ProfilesView{Name: strings.TrimSpace(r.PostFormValue("name")), Note: r.PostFormValue("note"), URL: strings.TrimSpace(r.PostFormValue("url"))}
	_, res, err := ps.SignInProfile(r.Context(), v.Name, v.Note, v.URL, engine.ModeAsync)
	if err != nil {
		v.Error = engine.AsError(err).Message
		d.renderProfiles(w, r, errorStatus(engine.AsError(err)), v)
		return
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(res.Run.RunID)+"#live", http.StatusSeeOther)
}

// deleteProfile deletes a profile and its directory.
func (d *Dashboard) deleteProfile(w http.ResponseWriter, r *http.Request) {
	ps, ok := d.eng.(Profiles)
	if !ok {
		d.fail(w, r, engine.Errorf(engine.ExecutionError, "this dashboard has no browser profiles"))
		return
	}
	if err := ps.DeleteProfile(r.Context(), r.PathValue("name")); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/profiles", http.StatusSeeOther)
}

// profileRunsURL is the runs list filtered to the runs on profile name.
func profileRunsURL(name string) string { return "/?profile=" + url.QueryEscape(name) }

// profileNames lists the profiles for the runs list's filter, with cur
// (the filter set, perhaps a deleted profile's) among them; nil when the
// engine keeps no profiles and none is asked for.
func (d *Dashboard) profileNames(ctx context.Context, cur string) []string {
	var names []string
	if ps, ok := d.eng.(Profiles); ok {
		if list, err := ps.Profiles(ctx); err == nil {
			for _, p := range list {
				names = append(names, p.Name)
			}
		}
	}
	if cur != "" && !slices.Contains(names, cur) {
		names = append(names, cur)
	}
	return names
}

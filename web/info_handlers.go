package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// sessionsPage lists the browser sessions that queued and running runs use
// (sessions are created per run until the sessions tools arrive).
func (d *Dashboard) sessionsPage(w http.ResponseWriter, r *http.Request) {
	v := SessionsView{Page: d.page("Sessions", "sessions")}
	byID := map[string]*SessionRow{}
	now := d.now()
	for _, st := range []engine.RunStatus{engine.StatusRunning, engine.StatusQueued} {
		list, err := d.eng.List(r.Context(), engine.ListQuery{Status: string(st), Limit: 1000})
		if err != nil {
			d.fail(w, r, err)
			return
		}
		for _, run := range list.Runs {
			row := byID[run.SessionID]
			if row == nil {
				row = &SessionRow{ID: run.SessionID, Status: string(st), Latest: ago(now, run.CreatedAt),
					RunURL: "/runs/" + url.PathEscape(run.RunID)}
				byID[run.SessionID] = row
			}
			row.Runs++
		}
	}
	// Named sessions (create_browser_session) are listed whether a run
	// uses them or not: the interactive tools act in them, and each one's
	// page shows those calls.
	named, err := d.eng.ListSessions(r.Context())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	for _, s := range named {
		if byID[s.ID] == nil {
			byID[s.ID] = &SessionRow{ID: s.ID, Status: "open", Latest: "—"}
		}
	}
	for _, row := range byID {
		if strings.HasPrefix(row.ID, "sess_") {
			row.URL = "/sessions/" + url.PathEscape(row.ID)
		}
		v.Sessions = append(v.Sessions, *row)
	}
	sort.Slice(v.Sessions, func(i, j int) bool { return v.Sessions[i].ID < v.Sessions[j].ID })
	d.render(w, r, http.StatusOK, sessionsPage(v), nil)
}

// templatesPage describes every template with its schema and examples.
func (d *Dashboard) templatesPage(w http.ResponseWriter, r *http.Request) {
	v := TemplatesView{Page: d.page("Templates", "templates")}
	for _, t := range d.eng.Templates() {
		tv := TemplateView{ID: t.TemplateID, Title: t.Title, Version: t.Version, Description: t.Description,
			TrustLevel: t.TrustLevel, Resumable: t.Resumable, Steps: t.EstimatedStepsHint,
			Schema: pretty(t.InputSchema), RunURL: "/runs/new?template=" + url.QueryEscape(t.TemplateID)}
		var vs []string
		for _, n := range t.Versions {
			vs = append(vs, fmt.Sprint(n))
		}
		tv.Versions = strings.Join(vs, ", ")
		for _, ex := range t.Examples {
			tv.Examples = append(tv.Examples, pretty(ex))
		}
		v.Templates = append(v.Templates, tv)
	}
	d.render(w, r, http.StatusOK, templatesPage(v), nil)
}

// profilePage shows the runtime profile, the database and how to connect.
func (d *Dashboard) profilePage(w http.ResponseWriter, r *http.Request) {
	p := d.eng.Profile()
	mcpURL := "http://" + d.opts.Addr + "/mcp"
	if d.opts.Addr == "" {
		mcpURL = "http://" + r.Host + "/mcp"
	}
	// Stdio clients start their own process: on this database, so their
	// runs show here.
	args := []string{"mcp"}
	if d.opts.DBPath != "" {
		args = append(args, "--db", d.opts.DBPath)
	}
	v := ProfileView{Page: d.page("Profile", "profile"), DBPath: d.opts.DBPath, MCPURL: mcpURL,
		Snippets: ClientSnippets(d.opts.Binary, args, mcpURL, d.opts.Token != "")}
	v.Browser = "not started yet"
	if p.Browser != nil {
		v.Browser = strings.TrimSpace(p.Browser.Mode + " " + p.Browser.Product)
		if p.Browser.Error != "" {
			v.Browser += " (" + p.Browser.Error + ")"
		}
	}
	raw, _ := json.Marshal(p)
	var fields map[string]any
	_ = json.Unmarshal(raw, &fields)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "browser" && k != "artifactEncodingRule" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, _ := json.Marshal(fields[k])
		v.Fields = append(v.Fields, KV{Key: k, Value: strings.Trim(string(b), `"`)})
	}
	d.render(w, r, http.StatusOK, profilePage(v), nil)
}

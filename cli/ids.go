package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// Short ids: the dashboard shows a run as the first 8 characters of its id
// after "run_" (web's shortID), so show, cancel, answer and artifact take
// any unique prefix of a run id after "run_", or of an artifact id after
// "art_", as well as the whole id. A prefix that matches nothing is passed
// on as it is (the command then reports the usual not-found error); one
// that matches several is refused with the candidates named.

// idListPage is how many runs one List call reads while resolving.
const idListPage = 1000

// maxCandidates is the most candidates an ambiguous prefix's error names.
const maxCandidates = 10

// fullIDLen is the length of a whole id's UUID part.
const fullIDLen = 36

// idPrefix returns the part of arg after the kind's prefix ("run_",
// "art_") and whether arg may be a short id of that kind: a non-empty,
// shorter than whole, lowercase hexadecimal UUID prefix.
func idPrefix(arg, kind string) (string, bool) {
	p := strings.ToLower(strings.TrimPrefix(arg, kind))
	if p == "" || len(p) >= fullIDLen {
		return p, false
	}
	for _, c := range p {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return p, false
		}
	}
	return p, true
}

// eachRun calls f with every run the engine lists, newest first, paging
// by position so runs created meanwhile neither repeat nor hide others.
func eachRun(ctx context.Context, eng *engine.Engine, f func(*engine.Run)) error {
	q := engine.ListQuery{Limit: idListPage}
	for {
		list, err := eng.List(ctx, q)
		if err != nil {
			return domainErr(err)
		}
		for _, r := range list.Runs {
			f(r)
		}
		if len(list.Runs) < q.Limit {
			return nil
		}
		last := list.Runs[len(list.Runs)-1]
		q.BeforeCreatedAt, q.BeforeRunID = last.CreatedAt, last.RunID
	}
}

// resolveRunID turns a run id or a unique prefix of one (after "run_")
// into the run's whole id.
func resolveRunID(ctx context.Context, eng *engine.Engine, arg string) (string, error) {
	p, ok := idPrefix(arg, "run_")
	if !ok {
		return arg, nil
	}
	var hits []*engine.Run
	err := eachRun(ctx, eng, func(r *engine.Run) {
		if strings.HasPrefix(strings.TrimPrefix(r.RunID, "run_"), p) {
			hits = append(hits, r)
		}
	})
	if err != nil {
		return "", err
	}
	switch len(hits) {
	case 0:
		return arg, nil
	case 1:
		return hits[0].RunID, nil
	}
	names := make([]string, 0, min(len(hits), maxCandidates))
	for _, r := range hits[:min(len(hits), maxCandidates)] {
		names = append(names, fmt.Sprintf("  %s  %s  %s  %s", r.RunID, r.Status, r.TemplateID,
			time.UnixMilli(r.CreatedAt).Format("2006-01-02 15:04:05")))
	}
	return "", fmt.Errorf("run id %q is ambiguous: it starts %d runs; give more of the id:\n%s%s",
		arg, len(hits), strings.Join(names, "\n"), more(len(hits)))
}

// resolveArtifactID turns an artifact id or a unique prefix of one (after
// "art_") into the whole id. It looks among the artifacts of the runs the
// engine lists and of the forgotten runs its history keeps (artifacts
// outlive their runs).
func resolveArtifactID(ctx context.Context, eng *engine.Engine, arg string) (string, error) {
	p, ok := idPrefix(arg, "art_")
	if !ok {
		return arg, nil
	}
	type hit struct{ id, runID string }
	var hits []hit
	seen := map[string]bool{}
	look := func(ids []string, runID string) {
		for _, id := range ids {
			if strings.HasPrefix(strings.TrimPrefix(id, "art_"), p) && !seen[id] {
				seen[id] = true
				hits = append(hits, hit{id, runID})
			}
		}
	}
	if err := eachRun(ctx, eng, func(r *engine.Run) { look(r.ArtifactIDs, r.RunID) }); err != nil {
		return "", err
	}
	for offset := 0; ; offset += idListPage {
		h, err := eng.History(ctx, idListPage, offset)
		if err != nil {
			return "", domainErr(err)
		}
		for _, r := range h.Runs {
			look(r.ArtifactIDs, r.RunID)
		}
		if len(h.Runs) < idListPage {
			break
		}
	}
	switch len(hits) {
	case 0:
		return arg, nil
	case 1:
		return hits[0].id, nil
	}
	names := make([]string, 0, min(len(hits), maxCandidates))
	for _, h := range hits[:min(len(hits), maxCandidates)] {
		names = append(names, fmt.Sprintf("  %s  (run %s)", h.id, h.runID))
	}
	return "", fmt.Errorf("artifact id %q is ambiguous: it starts %d artifacts; give more of the id:\n%s%s",
		arg, len(hits), strings.Join(names, "\n"), more(len(hits)))
}

// more says how many candidates an error left out.
func more(n int) string {
	if n <= maxCandidates {
		return ""
	}
	return fmt.Sprintf("\n  … and %d more", n-maxCandidates)
}

package fidelity

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The acceptance thresholds of the issue (28, acceptance 2): the share of
// pages whose aspect is equal on both paths. Fields and meta have none;
// they are reported.
const (
	MinTitleEqual = 0.995
	MinLinksEqual = 0.99
	MinTextEqual  = 0.95
)

// Thresholds maps an aspect to its minimum share of equal pages.
var Thresholds = map[string]float64{AspectTitle: MinTitleEqual, AspectLinks: MinLinksEqual, AspectText: MinTextEqual}

// Report is the comparison of one corpus.
type Report struct {
	Name      string
	Generator string
	// Pages counts the pages compared.
	Pages int
	// Equal counts, per aspect, the pages where both paths agree.
	Equal map[string]int
	// Classes counts, per aspect and class, the pages that differ.
	Classes map[string]map[string]int
	// Diffs lists every difference, in page order.
	Diffs []Diff
	// FailedBrowser and FailedHTTP count pages with an error on that path.
	FailedBrowser, FailedHTTP int
	// Finished counts the pages both paths read without an error: the
	// denominator of the issue's figures ("on the pages both paths
	// finished"). FinishedEqual counts, per aspect, those of them where
	// both paths agree.
	Finished      int
	FinishedEqual map[string]int
	// Unfinished lists the pages that did not finish on a path, one Diff
	// each (aspect "page", the class says how: page-failed:timeout,
	// page-failed:script-navigation, …; "both-failed" when both paths
	// failed alike, a 404 say).
	Unfinished []Diff
	// Time is the wall time of each side's runs; Elapsed of the whole.
	Time    map[string]time.Duration
	Elapsed time.Duration
}

// NewReport starts an empty report.
func NewReport(name, generator string) *Report {
	return &Report{Name: name, Generator: generator, Equal: map[string]int{}, FinishedEqual: map[string]int{},
		Classes: map[string]map[string]int{}, Time: map[string]time.Duration{}}
}

// Add compares one page and counts it.
func (r *Report) Add(name string, b, h Page, src *Source) {
	r.Pages++
	b = markOffline(b, h, src)
	if b.Error != nil {
		r.FailedBrowser++
	}
	if h.Error != nil {
		r.FailedHTTP++
	}
	diffs := Compare(name, b, h, src)
	differs := map[string]bool{}
	for _, d := range diffs {
		if differs[d.Aspect] && d.Aspect != AspectFields {
			continue
		}
		if !differs[d.Aspect] {
			if r.Classes[d.Aspect] == nil {
				r.Classes[d.Aspect] = map[string]int{}
			}
			r.Classes[d.Aspect][d.Class]++
		}
		differs[d.Aspect] = true
	}
	finished := b.Error == nil && h.Error == nil
	if finished {
		r.Finished++
	}
	for _, a := range Aspects {
		if !differs[a] {
			r.Equal[a]++
			if finished {
				r.FinishedEqual[a]++
			}
		}
	}
	r.Diffs = append(r.Diffs, diffs...)
	switch {
	case finished:
	case len(diffs) > 0:
		r.Unfinished = append(r.Unfinished, Diff{Page: name, Aspect: "page", Class: diffs[0].Class, Detail: diffs[0].Detail})
	default:
		r.Unfinished = append(r.Unfinished, Diff{Page: name, Aspect: "page", Class: "both-failed",
			Detail: fmt.Sprintf("browser %s http %s", errMsg(b), errMsg(h))})
	}
}

// Share is the share of the pages both paths finished whose aspect is
// equal (0 with no such page): the figure. A page that failed on
// one path is listed in Unfinished with its class, not counted here.
func (r *Report) Share(aspect string) float64 { return r.ShareExcusing(aspect) }

// ShareAll is the share of all pages whose aspect is equal, a page that
// failed on one path counting as different.
func (r *Report) ShareAll(aspect string) float64 {
	if r.Pages == 0 {
		return 0
	}
	return float64(r.Equal[aspect]) / float64(r.Pages)
}

// ShareExcusing is Share counting as equal the pages whose aspect differs
// only by the excused classes (a documentation site whose menu a script
// writes: the HTTP path cannot read it by design, and render "auto" is
// what must notice). The page-failed classes are never in the
// denominator, so excusing them changes nothing.
func (r *Report) ShareExcusing(aspect string, excused ...string) float64 {
	if r.Finished == 0 {
		return 0
	}
	n := r.FinishedEqual[aspect]
	for _, c := range excused {
		if !strings.HasPrefix(c, ClassPageFailed) {
			n += r.Classes[aspect][c]
		}
	}
	return float64(n) / float64(r.Finished)
}

// Gaps lists the thresholds this report misses, one sentence each, with
// the excused classes counted as equal.
func (r *Report) Gaps(excused ...string) []string {
	var out []string
	for _, a := range Aspects {
		want, ok := Thresholds[a]
		share := r.ShareExcusing(a, excused...)
		if !ok || share >= want {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s equal on %.1f%% of the %d pages both paths finished, want ≥ %.1f%% (%s)",
			r.Name, a, 100*share, r.Finished, 100*want, r.classSummary(a)))
	}
	return out
}

// classSummary is "class n, class n" for an aspect, largest first.
func (r *Report) classSummary(aspect string) string {
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range r.Classes[aspect] {
		kvs = append(kvs, kv{k, v})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if a.v != b.v {
			return b.v - a.v
		}
		return strings.Compare(a.k, b.k)
	})
	parts := make([]string, len(kvs))
	for i, e := range kvs {
		parts[i] = fmt.Sprintf("%s %d", e.k, e.v)
	}
	return strings.Join(parts, ", ")
}

// Print writes the corpus's figures: pages, the share equal per aspect on
// the pages both paths finished (with the threshold where there is one),
// without the pages only scripts make differ, and over all pages, the
// classes of the pages that differ, then every page that did not finish
// with its class.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "  %s (%s): %d pages, %d finished on both paths; failed: browser %d, http %d; browser %.1f s, http %.1f s\n",
		r.Name, r.Generator, r.Pages, r.Finished, r.FailedBrowser, r.FailedHTTP, r.Time["browser"].Seconds(), r.Time["http"].Seconds())
	for _, a := range Aspects {
		mark := ""
		if want, ok := Thresholds[a]; ok {
			verdict := "ok"
			if r.Share(a) < want {
				verdict = "BELOW"
			}
			mark = fmt.Sprintf(" (want ≥ %.1f%%: %s)", 100*want, verdict)
		}
		fmt.Fprintf(w, "    %-6s equal %5.1f%% (%d/%d)%s; without script-generated %.1f%%; of all pages %.1f%%", a,
			100*r.Share(a), r.FinishedEqual[a], r.Finished, mark, 100*r.ShareExcusing(a, ClassScript), 100*r.ShareAll(a))
		if s := r.classSummary(a); s != "" {
			fmt.Fprintf(w, "; differ: %s", s)
		}
		fmt.Fprintln(w)
	}
	for _, d := range r.Unfinished {
		fmt.Fprintf(w, "    not finished: %s: %s (%s)\n", d.Page, d.Class, short(d.Detail, 200))
	}
}

// WriteDetails writes every difference, one line each: corpus, page,
// aspect, class and the short diff, tab-separated.
func (r *Report) WriteDetails(w io.Writer) error {
	for _, d := range r.Diffs {
		detail := strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(d.Detail)
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Name, d.Page, d.Aspect, d.Class, detail); err != nil {
			return err
		}
	}
	return nil
}

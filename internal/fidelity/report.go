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
	// Time is the wall time of each side's runs; Elapsed of the whole.
	Time    map[string]time.Duration
	Elapsed time.Duration
}

// NewReport starts an empty report.
func NewReport(name, generator string) *Report {
	return &Report{Name: name, Generator: generator, Equal: map[string]int{},
		Classes: map[string]map[string]int{}, Time: map[string]time.Duration{}}
}

// Add compares one page and counts it.
func (r *Report) Add(name string, b, h Page, src *Source) {
	r.Pages++
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
	for _, a := range Aspects {
		if !differs[a] {
			r.Equal[a]++
		}
	}
	r.Diffs = append(r.Diffs, diffs...)
}

// Share is the share of pages whose aspect is equal (0 with no page).
func (r *Report) Share(aspect string) float64 { return r.ShareExcusing(aspect) }

// ShareExcusing is Share counting as equal the pages whose aspect differs
// only by the excused classes (a documentation site whose menu a script
// writes: the HTTP path cannot read it by design, and render "auto" is
// what must notice).
func (r *Report) ShareExcusing(aspect string, excused ...string) float64 {
	if r.Pages == 0 {
		return 0
	}
	n := r.Equal[aspect]
	for _, c := range excused {
		n += r.Classes[aspect][c]
	}
	return float64(n) / float64(r.Pages)
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
		out = append(out, fmt.Sprintf("%s: %s equal on %.1f%% of %d pages, want ≥ %.1f%% (%s)",
			r.Name, a, 100*share, r.Pages, 100*want, r.classSummary(a)))
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

// Print writes the corpus's figures: pages, the share equal per aspect
// (with the threshold where there is one) and the classes of the pages
// that differ.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "  %s (%s): %d pages; failed: browser %d, http %d; browser %.1f s, http %.1f s\n",
		r.Name, r.Generator, r.Pages, r.FailedBrowser, r.FailedHTTP, r.Time["browser"].Seconds(), r.Time["http"].Seconds())
	for _, a := range Aspects {
		mark := ""
		if want, ok := Thresholds[a]; ok {
			verdict := "ok"
			if r.Share(a) < want {
				verdict = "BELOW"
			}
			mark = fmt.Sprintf(" (want ≥ %.1f%%: %s)", 100*want, verdict)
		}
		fmt.Fprintf(w, "    %-6s equal %5.1f%% (%d/%d)%s", a, 100*r.Share(a), r.Equal[a], r.Pages, mark)
		if s := r.classSummary(a); s != "" {
			fmt.Fprintf(w, "; differ: %s", s)
		}
		fmt.Fprintln(w)
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

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Replies that fit a model's context (README, "Replies sized for a
// model"). Every tool reply is, in order:
//
//  1. a text block with a one-line summary for a person or a model
//     ("batch_extract_pages succeeded: 998/1000 pages, 2 failed (HTTP 404) —
//     full results in art_…");
//  2. a text block with the reply's JSON, which is also structuredContent;
//  3. for replies that name artifacts, one resource_link block per
//     artifact (browsertask://artifacts/{id}, name, mimeType, size; at most
//     maxLinks), and for a finished run with images (screenshot_pages, a
//     run_steps screenshot) image blocks of the first maxImages of them,
//     downscaled JPEGs.
//
// The budget (profile maxInlineBytes) bounds the JSON: a run's result is
// cut to whole items (engine.InlineResult); when images follow, the JSON
// gets half the budget and the images share what is left.

const (
	// maxLinks is the most resource_link blocks in one reply.
	maxLinks = 20
	// maxImages is the most image blocks in one reply.
	maxImages = 3
	// linkReserve is room kept for the resource links in the budget.
	linkReserve = 200 * maxLinks
)

// budget is the reply budget in bytes.
func (s *Server) budget() int { return int(s.eng.Profile().MaxInlineBytes) }

// runReply answers a run (get_task_run, a sync run_task_template,
// tasks/result): wrap gives what is encoded (the run, or a syncRunReply around
// it), with its result cut to the budget; links and, for a finished run,
// images follow the JSON.
func (s *Server) runReply(ctx context.Context, run *engine.Run, wrap func(*engine.Run) any, isError bool) *sdk.CallToolResult {
	budget := s.budget() - linkReserve
	images := run.Status.Terminal() && len(run.ArtifactIDs) > 0
	var metas []*engine.Artifact
	if len(run.ArtifactIDs) > 0 {
		metas = s.artifactMetas(ctx, run.ArtifactIDs)
		images = images && countImages(metas) > 0
	}
	if images {
		budget /= 2
	}
	inline := *run
	if len(run.Result) > 0 {
		shell := inline
		shell.Result = nil
		rest, err := json.Marshal(wrap(&shell))
		if err == nil {
			inline.Result, _ = engine.InlineResult(run.Result, max(budget-len(rest)+len("null"), 256))
		}
	}
	res := jsonResult(wrap(&inline), isError)
	res.Content[0] = &sdk.TextContent{Text: runSummary(&inline)}
	res.Content = append(res.Content, resourceLinks(metas)...)
	if images {
		used := 0
		for _, c := range res.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				used += len(t.Text)
			}
		}
		res.Content = append(res.Content, s.imageBlocks(ctx, metas, s.budget()-used-linkReserve)...)
	}
	return res
}

// artifactMetas looks up the first maxLinks artifacts (tombstones and
// missing ones are left out).
func (s *Server) artifactMetas(ctx context.Context, ids []string) []*engine.Artifact {
	var out []*engine.Artifact
	for _, id := range ids {
		if len(out) == maxLinks {
			break
		}
		a, err := s.eng.Artifact(ctx, id)
		if err != nil || a == nil || a.Expired {
			continue
		}
		out = append(out, a)
	}
	return out
}

// resourceLinks are the artifacts as resource_link blocks.
func resourceLinks(metas []*engine.Artifact) []sdk.Content {
	out := make([]sdk.Content, 0, len(metas))
	for _, a := range metas {
		size := a.Size
		out = append(out, &sdk.ResourceLink{URI: artifactURIPrefix + a.ID, Name: a.Name, MIMEType: a.MimeType, Size: &size,
			Description: fmt.Sprintf("artifact %s of run %s; resources/read returns it whole up to %d bytes, get_artifact reads it in chunks",
				a.ID, a.RunID, MaxResourceArtifactBytes)})
	}
	return out
}

// summaryLine is the first text block of a reply that is not a run.
func summaryLine(v any, isError bool) string {
	switch x := v.(type) {
	case *engine.Error:
		return fmt.Sprintf("error %s: %s", x.Code, x.Message)
	case *engine.Run:
		return runSummary(x)
	case syncRunReply:
		return runSummary(x.Run)
	case asyncHandle:
		s := fmt.Sprintf("run %s %s (async): poll get_task_run with this runId", x.RunID, x.Status)
		if x.Deduplicated {
			s = fmt.Sprintf("run %s already exists for this idempotencyKey (%s): poll get_task_run", x.RunID, x.Status)
		}
		if x.Question != nil {
			s += fmt.Sprintf("; it waits for a person (%s): %s", x.Question.Kind, x.Question.Message)
		}
		return s
	case runList:
		return listSummary(x)
	case *engine.ArtifactChunk:
		return fmt.Sprintf("artifact %s (%s): bytes %d-%d of %d%s", x.ArtifactID, x.MimeType, x.Offset,
			x.Offset+x.Length, x.TotalSize, map[bool]string{true: ", complete", false: "; read on from offset+length"}[x.Complete])
	case *engine.CancelResult:
		if x.Success {
			return fmt.Sprintf("run %s canceled", x.RunID)
		}
		return fmt.Sprintf("run %s not canceled: %s", x.RunID, x.Reason)
	case eventPage:
		return fmt.Sprintf("%d event(s), nextSeq %d%s", len(x.Events), x.NextSeq, map[bool]string{true: ", the run has ended", false: ""}[x.Terminal])
	case answeredRun:
		return fmt.Sprintf("answer to %s request %s of run %s recorded", x.Kind, x.RequestID, x.RunID)
	case *engine.Session:
		if x.ClosedAt != nil {
			return fmt.Sprintf("browser session %s closed", x.ID)
		}
		return fmt.Sprintf("browser session %s open", x.ID)
	case engine.Profile:
		return fmt.Sprintf("runtime profile: browsertask %s, up to %d concurrent runs, %d URLs per run, answers up to %d bytes",
			x.Version, x.MaxConcurrentRuns, x.MaxURLs, x.MaxInlineBytes)
	}
	if isError {
		return "error"
	}
	return "ok"
}

// runSummary says where a run is in one line.
func runSummary(r *engine.Run) string {
	head := fmt.Sprintf("%s %s", r.TemplateID, r.Status)
	switch r.Status {
	case engine.StatusFailed, engine.StatusCanceled:
		if r.Error != nil {
			return fmt.Sprintf("%s: %s — %s", head, r.Error.Code, r.Error.Message)
		}
		return head
	case engine.StatusQueued:
		return head + ": waiting for a free slot (poll get_task_run)"
	case engine.StatusRunning:
		if r.Question != nil {
			return fmt.Sprintf("%s: waiting for a person (%s): %s — ask your user, then answer_task_run", head, r.Question.Kind, r.Question.Message)
		}
		return fmt.Sprintf("%s: %s", head, progressWords(r.Progress))
	}
	s := fmt.Sprintf("%s: %s", head, progressWords(r.Progress))
	var res map[string]json.RawMessage
	if json.Unmarshal(r.Result, &res) == nil {
		if why := failureReasons(res); why != "" {
			s += " (" + why + ")"
		}
		var id string
		if json.Unmarshal(res["artifactId"], &id) == nil && id != "" {
			s += " — full results in " + id
		}
		var k, n int
		if string(res["truncated"]) == "true" && json.Unmarshal(res["itemsInline"], &k) == nil && json.Unmarshal(res["itemsTotal"], &n) == nil {
			s += fmt.Sprintf("; the first %d of %d items are inline", k, n)
		}
	}
	if len(r.ArtifactIDs) > 0 {
		s += fmt.Sprintf("; %d artifact(s)", len(r.ArtifactIDs))
	}
	return s
}

// progressWords is "998/1000 pages, 2 failed", using the noun of the
// progress message ("12/12 steps") or "items".
func progressWords(p engine.Progress) string {
	noun := "items"
	if f := strings.Fields(p.Message); len(f) >= 2 && strings.Contains(f[0], "/") {
		noun = strings.Trim(f[1], ",;:()")
	}
	s := fmt.Sprintf("%d/%d %s", p.DoneSteps-p.FailedSteps, p.TotalSteps, noun)
	if p.TotalSteps == 0 {
		s = "done"
	}
	if p.FailedSteps > 0 {
		s += fmt.Sprintf(", %d failed", p.FailedSteps)
	}
	return s
}

// failureReasons names up to three distinct reasons items of a result's
// largest list failed for ("HTTP 404, NAVIGATION_TIMEOUT").
func failureReasons(res map[string]json.RawMessage) string {
	var seen []string
	for _, v := range res {
		var items []struct {
			HTTPStatus int `json:"httpStatus"`
			Error      *struct {
				Code string `json:"errorCode"`
			} `json:"error"`
		}
		if json.Unmarshal(v, &items) != nil {
			continue
		}
		for _, it := range items {
			if it.Error == nil || len(seen) == 3 {
				continue
			}
			why := it.Error.Code
			if it.HTTPStatus >= 400 {
				why = fmt.Sprintf("HTTP %d", it.HTTPStatus)
			}
			if !slices.Contains(seen, why) {
				seen = append(seen, why)
			}
		}
	}
	return strings.Join(seen, ", ")
}

// listSummary counts a page of runs by status.
func listSummary(l runList) string {
	counts := map[engine.RunStatus]int{}
	for _, r := range l.Runs {
		counts[r.Status]++
	}
	var parts []string
	for _, st := range []engine.RunStatus{engine.StatusQueued, engine.StatusRunning, engine.StatusSucceeded,
		engine.StatusPartialSuccess, engine.StatusFailed, engine.StatusCanceled} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	s := fmt.Sprintf("%d run(s) match, showing %d from offset %d", l.Total, len(l.Runs), l.Offset)
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s + " (results are left out: get_task_run has them)"
}

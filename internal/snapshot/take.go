package snapshot

import (
	"context"
	"strconv"
	"strings"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// Options shape one snapshot.
type Options struct {
	// MaxTokens bounds the snapshot's size, estimated as ceil(bytes/4)
	// like the formats' token estimates; 0 means no bound. A snapshot
	// over it is cut at a line boundary and ends with a line naming the
	// From that returns the rest.
	MaxTokens int
	// From skips the first From lines of the body, to read on where a
	// cut snapshot stopped (the header is always shown).
	From int
	// ChangedOnly returns only the lines that differ from the tab's last
	// snapshot: new ones prefixed "+ ", gone ones "- ".
	ChangedOnly bool
	// Expand lists references of summarised lists and tables to show
	// whole.
	Expand []string
}

// Snapshot is one reading of a tab.
type Snapshot struct {
	// Text is what a model reads: a header (title, URL), then the body.
	Text string `json:"text"`
	// Tokens is the estimate of Text's size, ceil(bytes/4).
	Tokens int `json:"tokens"`
	// Lines is the number of body lines of the whole snapshot (before
	// From, MaxTokens or ChangedOnly).
	Lines int `json:"lines"`
	// Next is the From that reads on after a cut; 0 when nothing was cut.
	Next int `json:"next,omitempty"`
}

// Tokens estimates the tokens of s as ceil(bytes/4), the rule every size
// in browsertask's replies uses.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Take reads the accessibility tree of page and its frames and writes it
// as a snapshot, giving references from refs (the tab's table). Errors:
// the CDP call's error when the page is gone or ctx ends.
func Take(ctx context.Context, page *rod.Page, refs *Refs, o Options) (*Snapshot, error) {
	p := page.Context(ctx)
	root, err := readTree(p, refs)
	if err != nil {
		return nil, err
	}
	expand := map[string]bool{}
	for _, e := range o.Expand {
		expand[strings.TrimSpace(e)] = true
	}
	body := render(root, refs, expand)
	info, err := p.Info()
	if err != nil {
		return nil, err
	}
	return shape(info.Title, info.URL, body, refs, o), nil
}

// readTree reads the main frame's tree (telling refs which document it
// is) and hangs every child frame's tree
// under its iframe node. A frame whose tree cannot be read (an
// out-of-process frame) is left unread and marked so by the renderer.
func readTree(p *rod.Page, refs *Refs) (*node, error) {
	ft, err := proto.PageGetFrameTree{}.Call(p)
	if err != nil {
		return nil, err
	}
	refs.document(string(ft.FrameTree.Frame.LoaderID))
	main := ft.FrameTree.Frame.ID
	ax, err := proto.AccessibilityGetFullAXTree{FrameID: main}.Call(p)
	if err != nil {
		return nil, err
	}
	root := fromAX(main, ax.Nodes)
	owners := map[nodeKey]*node{}
	var index func(n *node, depth int)
	index = func(n *node, depth int) {
		if n == nil || depth > 2000 {
			return
		}
		if n.role == "Iframe" {
			owners[n.key] = n
		}
		for _, c := range n.children {
			index(c, depth+1)
		}
	}
	index(root, 0)
	// A frame in the parent's process is read through the parent's
	// session (c): the page's, or a cross-site frame's own (below) for
	// the frames inside it.
	var hang func(c proto.Client, parent proto.PageFrameID, kids []*proto.PageFrameTree, depth int)
	hang = func(c proto.Client, parent proto.PageFrameID, kids []*proto.PageFrameTree, depth int) {
		for _, k := range kids {
			if depth > 8 {
				return
			}
			own, err := proto.DOMGetFrameOwner{FrameID: k.Frame.ID}.Call(c)
			if err != nil {
				continue
			}
			holder := owners[nodeKey{parent, own.BackendNodeID}]
			if holder == nil {
				continue
			}
			sub, err := proto.AccessibilityGetFullAXTree{FrameID: k.Frame.ID}.Call(c)
			if err != nil {
				continue
			}
			holder.frame = fromAX(k.Frame.ID, sub.Nodes)
			index(holder.frame, 0)
			hang(c, k.Frame.ID, k.ChildFrames, depth+1)
		}
	}
	hang(p, main, ft.FrameTree.ChildFrames, 0)
	// Frames in another process (cross-site iframes under site
	// isolation) are not in the page's frame tree: they are targets of
	// their own, found by their owner element in this page.
	missing := map[proto.DOMBackendNodeID]*node{}
	for k, n := range owners {
		if n.frame == nil && !refs.isRemote(k.frame) {
			missing[k.backend] = n
		}
	}
	if len(missing) == 0 {
		return root, nil
	}
	targets, err := proto.TargetGetTargets{}.Call(p.Browser().Context(p.GetContext()))
	if err != nil {
		return root, nil
	}
	for _, tg := range targets.TargetInfos {
		if tg.Type != "iframe" {
			continue
		}
		frame := proto.PageFrameID(tg.TargetID)
		own, err := proto.DOMGetFrameOwner{FrameID: frame}.Call(p)
		if err != nil || missing[own.BackendNodeID] == nil {
			continue
		}
		holder := missing[own.BackendNodeID]
		fc, err := refs.frameSession(p, frame)
		if err != nil {
			continue
		}
		sub, err := proto.AccessibilityGetFullAXTree{}.Call(fc)
		if err != nil {
			continue
		}
		holder.frame = fromAX(frame, sub.Nodes)
		index(holder.frame, 0)
		if ft, err := (proto.PageGetFrameTree{}).Call(fc); err == nil {
			hang(fc, frame, ft.FrameTree.ChildFrames, 1)
		}
	}
	return root, nil
}

// shape applies From, ChangedOnly and MaxTokens to the body and adds the
// header. The whole body becomes the tab's last snapshot either way.
func shape(title, url string, body []string, refs *Refs, o Options) *Snapshot {
	prev := refs.swapLast(body)
	s := &Snapshot{Lines: len(body)}
	head := "page " + quote(cut(squash(title), textLimit)) + " " + url + "\n"
	lines := body
	if o.ChangedOnly {
		lines = diff(prev, body)
		head += "changes since the last snapshot: " + strconv.Itoa(len(lines)) + " lines\n"
	}
	if o.From > 0 {
		lines = lines[min(o.From, len(lines)):]
	}
	var b strings.Builder
	b.WriteString(head)
	for i, l := range lines {
		if o.MaxTokens > 0 && (b.Len()+len(l)+4)/4+20 > o.MaxTokens {
			s.Next = o.From + i
			b.WriteString("… cut at maxTokens " + strconv.Itoa(o.MaxTokens) + ": " + strconv.Itoa(len(lines)-i) +
				" more lines, read on with from=" + strconv.Itoa(s.Next) + "\n")
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	s.Text = b.String()
	s.Tokens = Tokens(s.Text)
	return s
}

// diff returns the lines of cur not in prev ("+ ") then those of prev not
// in cur ("- "), each counted as a multiset so repeated lines are fair.
func diff(prev, cur []string) []string {
	count := map[string]int{}
	for _, l := range prev {
		count[l]++
	}
	var out []string
	for _, l := range cur {
		if count[l] > 0 {
			count[l]--
			continue
		}
		out = append(out, "+ "+l)
	}
	for _, l := range prev {
		if count[l] > 0 {
			count[l]--
			out = append(out, "- "+l)
		}
	}
	return out
}

package snapshot

import (
	"strconv"
	"strings"
	"sync"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// nodeKey names a DOM node for as long as it lives: backend node ids are
// unique within a renderer, and the frame keeps ids of frames in other
// processes apart.
type nodeKey struct {
	frame   proto.PageFrameID
	backend proto.DOMBackendNodeID
}

// Refs is the reference table of one tab: it hands out "e1", "e2", … in
// the order nodes are first seen and gives a node the same reference in
// every later snapshot of the tab, so a model can keep using a reference
// it read earlier while the node exists. It also keeps the tab's last
// snapshot, for Options.ChangedOnly. The zero value is not usable; call
// NewRefs. Safe for concurrent use.
type Refs struct {
	mu    sync.Mutex
	byKey map[nodeKey]int
	byRef map[int]nodeKey
	last  []string
	// next is the number of the last reference handed out; it never goes
	// back, so a reference read on an earlier document never names a node
	// of a later one.
	next int
	// doc is the loader of the main frame's document the table is for.
	doc string
	// frames are the sessions attached to the out-of-process frames the
	// snapshots read (oopif.go).
	frames map[proto.PageFrameID]proto.TargetSessionID
}

// NewRefs returns an empty table for a new tab.
func NewRefs() *Refs {
	return &Refs{byKey: map[nodeKey]int{}, byRef: map[int]nodeKey{}, frames: map[proto.PageFrameID]proto.TargetSessionID{}}
}

// ref returns the reference of k, assigning the next one when k is new.
func (r *Refs) ref(k nodeKey) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.byKey[k]
	if !ok {
		r.next++
		n = r.next
		r.byKey[k] = n
		r.byRef[n] = k
	}
	return "e" + strconv.Itoa(n)
}

// lookup returns the node a reference names. Errors: INVALID_PARAMETER
// naming field when ref is not of the form e<number> or was never handed
// out on this tab.
func (r *Refs) lookup(field, ref string) (nodeKey, error) {
	n, err := ParseRef(ref)
	if err != nil {
		return nodeKey{}, &engine.Error{Code: engine.InvalidParameter, Message: field + ": " + err.Error(),
			Recovery: "use a reference from the latest snapshot of the tab, such as e12"}
	}
	r.mu.Lock()
	k, ok := r.byRef[n]
	r.mu.Unlock()
	if !ok {
		return nodeKey{}, &engine.Error{Code: engine.InvalidParameter, Message: field + ": reference " + ref + " is unknown on this tab",
			Recovery: "take a new snapshot of the tab and use one of its references"}
	}
	return k, nil
}

// Has reports whether the node with the given backend id in frame has a
// reference, and which. Tests use it to hold the snapshot to the DOM.
func (r *Refs) Has(frame proto.PageFrameID, backend proto.DOMBackendNodeID) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.byKey[nodeKey{frame, backend}]
	if !ok {
		return "", false
	}
	return "e" + strconv.Itoa(n), true
}

// document notes the main frame's document (its loader id). A new one
// forgets the nodes of the old, whose backend ids died with it, so the
// table does not grow with every page a tab visits; numbering goes on.
func (r *Refs) document(loader string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if loader == r.doc {
		return
	}
	r.doc = loader
	clear(r.byKey)
	clear(r.byRef)
	clear(r.frames)
}

// swapLast stores lines as the tab's last snapshot and returns the one
// before.
func (r *Refs) swapLast(lines []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.last
	r.last = lines
	return prev
}

// refError is why ParseRef refused a reference.
type refError string

func (e refError) Error() string { return string(e) }

// ParseRef reads a reference ("e12", surrounding spaces allowed, as a model
// may copy it) into its number. It refuses anything else, including "e0",
// signs and leading zeros, so that one node has one spelling.
func ParseRef(s string) (int, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != 'e' {
		return 0, refError(strconv.Quote(s) + " is not a reference (e followed by a number, such as e12)")
	}
	d := s[1:]
	if d[0] == '0' || len(d) > 9 {
		return 0, refError(strconv.Quote(s) + " is not a reference (e followed by a number from 1, such as e12)")
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, refError(strconv.Quote(s) + " is not a reference (e followed by a number, such as e12)")
		}
	}
	n, _ := strconv.Atoi(d)
	return n, nil
}

// Line returns the line of the tab's last snapshot that ref heads (its
// role, name and value as the model read them), "" when none does: a
// record of what was acted on that a person can read.
func (r *Refs) Line(ref string) string {
	ref = strings.TrimSpace(ref)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.last {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, ref+" "); ok {
			return ref + " " + rest
		}
	}
	return ""
}

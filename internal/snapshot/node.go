package snapshot

import (
	"strings"

	"github.com/go-rod/rod/lib/proto"
)

// node is one accessibility node as the renderer needs it, read from CDP
// (fromAX) or built by tests.
type node struct {
	role    string
	name    string
	value   string
	ignored bool
	// props holds the states and attributes that matter to a reader
	// (checked, disabled, expanded, required, level, focusable, …) as text.
	props    map[string]string
	key      nodeKey
	children []*node
	// frame is the root of the iframe's own document, set on an Iframe
	// node whose frame was read.
	frame *node
}

// axText returns an AX value as text: strings as they are, numbers and
// booleans as JSON writes them.
func axText(v *proto.AccessibilityAXValue) string {
	if v == nil || v.Value.Nil() {
		return ""
	}
	if s, ok := v.Value.Val().(string); ok {
		return s
	}
	return strings.Trim(v.Value.JSON("", ""), `"`)
}

// fromAX builds the tree of one frame's nodes. The root is the node without
// a parent (the document); nil when nodes is empty.
func fromAX(frame proto.PageFrameID, nodes []*proto.AccessibilityAXNode) *node {
	byID := make(map[proto.AccessibilityAXNodeID]*node, len(nodes))
	for _, ax := range nodes {
		n := &node{role: axText(ax.Role), name: axText(ax.Name), value: axText(ax.Value),
			ignored: ax.Ignored, key: nodeKey{frame, ax.BackendDOMNodeID}}
		for _, p := range ax.Properties {
			if n.props == nil {
				n.props = map[string]string{}
			}
			n.props[string(p.Name)] = axText(p.Value)
		}
		byID[ax.NodeID] = n
	}
	var root *node
	for _, ax := range nodes {
		n := byID[ax.NodeID]
		for _, c := range ax.ChildIDs {
			if cn, ok := byID[c]; ok && cn != n {
				n.children = append(n.children, cn)
			}
		}
		if root == nil && ax.ParentID == "" {
			root = n
		}
	}
	return root
}

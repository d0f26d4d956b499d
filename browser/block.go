package browser

import (
	"context"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Resource types a tab can be told not to load (Tab.BlockResources).
const (
	ResourceImage      = "image"
	ResourceMedia      = "media"
	ResourceFont       = "font"
	ResourceStylesheet = "stylesheet"
)

// ResourceTypes lists the names Tab.BlockResources accepts, in a fixed
// order.
func ResourceTypes() []string {
	return []string{ResourceImage, ResourceMedia, ResourceFont, ResourceStylesheet}
}

// resourceMask is a set of blockable resource types, one bit each (the
// order of ResourceTypes). The zero value blocks nothing.
type resourceMask uint32

// cdpResourceType is the Chromium resource type of each bit, in the order
// of ResourceTypes.
func cdpResourceType(i int) proto.NetworkResourceType {
	return [...]proto.NetworkResourceType{
		proto.NetworkResourceTypeImage,
		proto.NetworkResourceTypeMedia,
		proto.NetworkResourceTypeFont,
		proto.NetworkResourceTypeStylesheet,
	}[i]
}

// parseResourceMask turns resource type names into a mask. Errors:
// INVALID_PARAMETER naming the unknown type and the accepted ones.
func parseResourceMask(types []string) (resourceMask, error) {
	var m resourceMask
	names := ResourceTypes()
next:
	for _, t := range types {
		for i, n := range names {
			if t == n {
				m |= 1 << i
				continue next
			}
		}
		return 0, engine.Errorf(engine.InvalidParameter, "unknown resource type %q; use %s", t, strings.Join(names, ", "))
	}
	return m, nil
}

// has reports whether Chromium resource type rt is in the set.
func (m resourceMask) has(rt proto.NetworkResourceType) bool {
	for i := range ResourceTypes() {
		if m&(1<<i) != 0 && cdpResourceType(i) == rt {
			return true
		}
	}
	return false
}

// patterns are the Fetch patterns that pause the set's requests, one per
// type (any URL), so they can be failed before they reach the network.
// Empty for the empty set.
func (m resourceMask) patterns() []*proto.FetchRequestPattern {
	var pats []*proto.FetchRequestPattern
	for i := range ResourceTypes() {
		if m&(1<<i) != 0 {
			pats = append(pats, &proto.FetchRequestPattern{URLPattern: "*", ResourceType: cdpResourceType(i)})
		}
	}
	return pats
}

// BlockResources makes the tab fail every request for a resource of the
// given types (ResourceTypes: "image", "media", "font", "stylesheet") with
// net::ERR_BLOCKED_BY_CLIENT before it reaches the network, in the tab's
// own frames and in the out-of-process frames it loads afterwards. A
// blocked resource never fails the page, and the page's status and final
// URL are unchanged; the URL policy is applied first, so a request it
// refuses fails the page as before. An empty list blocks nothing, and then
// only the requests the URL policy needs paused are intercepted (none
// under trust local). Call it before loading pages: frames already loaded
// in out-of-process targets keep the set they were adopted with.
//
// The set belongs to the holder: it lasts until the tab is released and
// the next AcquireTab starts with nothing blocked, so a tab of a named
// session reused by another run loads everything unless that run blocks
// resources itself. Errors: INVALID_PARAMETER for an unknown type;
// PAGE_CRASHED, EXECUTION_ERROR when the browser refuses the new
// interception (the tab must not be used then).
func (tb *Tab) BlockResources(ctx context.Context, types []string) error {
	m, err := parseResourceMask(types)
	if err != nil {
		return err
	}
	if resourceMask(tb.t.block.Load()) == m {
		return nil
	}
	tb.t.block.Store(uint32(m))
	if err := tb.s.enableFetch(tb.client(ctx), tb.t); err != nil {
		return tb.mapErr(ctx, err, "block resources")
	}
	return nil
}

// withBlocking adds the Fetch patterns of blocked resource types to the
// URL policy's. When the policy already pauses every request the list is
// kept as is.
func withBlocking(policy []*proto.FetchRequestPattern, m resourceMask) []*proto.FetchRequestPattern {
	if m == 0 {
		return policy
	}
	for _, p := range policy {
		if (p.URLPattern == "*" || p.URLPattern == "") && p.ResourceType == "" {
			return policy
		}
	}
	return append(append([]*proto.FetchRequestPattern(nil), policy...), m.patterns()...)
}

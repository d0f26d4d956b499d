package browser

import (
	"context"
	"encoding/json"

	"github.com/go-rod/rod/lib/proto"
)

// SetIdentity makes the tab present itself as a run asks (inputs.userAgent
// and inputs.headers): userAgent, when not empty, replaces the User-Agent
// header and navigator.userAgent (Emulation.setUserAgentOverride); headers
// are added to every request the tab's page makes, subresources included
// (Network.setExtraHTTPHeaders, which needs the Network domain on: it
// stays on while the tab is held). Requests of out-of-process frames and
// workers are the child targets' and do not carry the headers.
//
// The identity is the holder's alone: a tab that had one is closed on
// Release instead of going back to the pool, so the next run (of this
// session or another) never inherits it. Errors: the CDP call's, mapped
// like every tab error (EXECUTION_ERROR, PAGE_CRASHED, ctx's cause).
func (tb *Tab) SetIdentity(ctx context.Context, userAgent string, headers map[string]string) error {
	if userAgent == "" && len(headers) == 0 {
		return nil
	}
	tb.t.identity.Store(true)
	c := tb.client(ctx)
	if userAgent != "" {
		if err := (proto.EmulationSetUserAgentOverride{UserAgent: userAgent}).Call(c); err != nil {
			return tb.mapErr(ctx, err, "set the User-Agent")
		}
	}
	if len(headers) == 0 {
		return nil
	}
	if err := (proto.NetworkEnable{}).Call(c); err != nil {
		return tb.mapErr(ctx, err, "enable the network domain")
	}
	raw, err := json.Marshal(headers)
	if err != nil {
		return err
	}
	var h proto.NetworkHeaders
	if err := json.Unmarshal(raw, &h); err != nil {
		return err
	}
	if err := (proto.NetworkSetExtraHTTPHeaders{Headers: h}).Call(c); err != nil {
		return tb.mapErr(ctx, err, "set the extra request headers")
	}
	return nil
}

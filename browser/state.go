package browser

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// StorageState is a session's saved login: its cookies and the
// localStorage of the origins it visited. export_session_state writes it as
// a JSON artifact and create_browser_session takes it back.
type StorageState struct {
	Cookies []Cookie      `json:"cookies"`
	Origins []OriginState `json:"origins"`
}

// Cookie is one browser cookie.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"` // Unix seconds; -1 for a session cookie
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite,omitempty"`
}

// OriginState is the localStorage of one origin.
type OriginState struct {
	Origin       string      `json:"origin"`
	LocalStorage []NameValue `json:"localStorage"`
}

// NameValue is one localStorage entry.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// noteOrigin remembers the origin of a loaded page, for ExportState.
func (s *Session) noteOrigin(raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return
	}
	s.mu.Lock()
	if s.origins == nil {
		s.origins = map[string]bool{}
	}
	if len(s.origins) < 1000 {
		s.origins[u.Scheme+"://"+u.Host] = true
	}
	s.mu.Unlock()
}

// ExportState returns the session's cookies and the localStorage of every
// origin its tabs loaded (empty origins left out). Errors:
// SESSION_NOT_FOUND, EXECUTION_ERROR.
func (s *Session) ExportState(ctx context.Context) (*StorageState, error) {
	res, err := proto.StorageGetCookies{BrowserContextID: s.b.BrowserContextID}.Call(s.b.Context(ctx))
	if err != nil {
		return nil, s.mapErr(ctx, nil, err, "read cookies")
	}
	st := &StorageState{Cookies: []Cookie{}, Origins: []OriginState{}}
	for _, c := range res.Cookies {
		exp := float64(c.Expires)
		if c.Session {
			exp = -1
		}
		st.Cookies = append(st.Cookies, Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Expires: exp, HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)})
	}
	s.mu.Lock()
	origins := make([]string, 0, len(s.origins))
	for o := range s.origins {
		origins = append(origins, o)
	}
	s.mu.Unlock()
	sort.Strings(origins)
	if len(origins) == 0 {
		return st, nil
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		return nil, err
	}
	defer tb.Release(true)
	for _, o := range origins {
		raw, err := tb.atOrigin(ctx, o, `JSON.stringify(Object.entries(localStorage))`)
		if err != nil {
			return nil, err
		}
		var entries [][2]string
		var text string
		if json.Unmarshal(raw, &text) != nil || json.Unmarshal([]byte(text), &entries) != nil {
			return nil, engine.Errorf(engine.ExecutionError, "read localStorage of %s: unexpected answer", o)
		}
		os := OriginState{Origin: o, LocalStorage: []NameValue{}}
		for _, kv := range entries {
			os.LocalStorage = append(os.LocalStorage, NameValue{Name: kv[0], Value: kv[1]})
		}
		if len(os.LocalStorage) > 0 {
			st.Origins = append(st.Origins, os)
		}
	}
	return st, nil
}

// atOrigin evaluates expr in the tab on an empty page of origin, answered
// by the interception itself: the origin's server is not contacted. Every
// request of the tab is paused meanwhile (the tab's own patterns may pause
// none), and its interception is restored afterwards.
func (tb *Tab) atOrigin(ctx context.Context, origin, expr string) (json.RawMessage, error) {
	tb.t.synthetic.Store(true)
	defer tb.t.synthetic.Store(false)
	if err := setFetch(tb.client(ctx), []*proto.FetchRequestPattern{{URLPattern: "*"}}); err != nil {
		return nil, tb.mapErr(ctx, err, "intercept the requests of "+origin)
	}
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), resetTimeout)
		defer cancel()
		_ = tb.s.enableFetch(tb.client(c), tb.t)
	}()
	nav, err := proto.PageNavigate{URL: origin + "/"}.Call(tb.client(ctx))
	if err != nil {
		return nil, tb.mapErr(ctx, err, "open "+origin)
	}
	if nav.ErrorText != "" {
		return nil, engine.Errorf(engine.ExecutionError, "open %s for its storage: %s", origin, nav.ErrorText)
	}
	if _, err := tb.evalRetry(ctx, waitLoadJS("")); err != nil {
		return nil, err
	}
	return tb.Eval(ctx, expr)
}

// ImportState restores cookies and localStorage saved by ExportState.
// Errors: INVALID_PARAMETER (a cookie or origin the browser refuses),
// SESSION_NOT_FOUND, EXECUTION_ERROR.
func (s *Session) ImportState(ctx context.Context, st *StorageState) error {
	if st == nil {
		return nil
	}
	if len(st.Cookies) > 0 {
		params := make([]*proto.NetworkCookieParam, 0, len(st.Cookies))
		for _, c := range st.Cookies {
			cp := &proto.NetworkCookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
				Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: proto.NetworkCookieSameSite(c.SameSite)}
			if c.Expires > 0 {
				cp.Expires = proto.TimeSinceEpoch(c.Expires)
			}
			params = append(params, cp)
		}
		if err := (proto.StorageSetCookies{Cookies: params, BrowserContextID: s.b.BrowserContextID}).Call(s.b.Context(ctx)); err != nil {
			if ctx.Err() == nil && s.in.alive(s.gen) {
				return engine.Wrap(engine.InvalidParameter, err, "storageState.cookies: the browser refused them: %v", err)
			}
			return s.mapErr(ctx, nil, err, "restore cookies")
		}
	}
	if len(st.Origins) == 0 {
		return nil
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		return err
	}
	defer tb.Release(true)
	for i, o := range st.Origins {
		if u, err := url.Parse(o.Origin); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return engine.Errorf(engine.InvalidParameter, "storageState.origins[%d].origin must be an http(s) origin, got %q", i, o.Origin)
		}
		items, err := json.Marshal(o.LocalStorage)
		if err != nil {
			return engine.Wrap(engine.ExecutionError, err, "encode localStorage: %v", err)
		}
		js := `(() => { for (const kv of ` + string(items) + `) localStorage.setItem(kv.name, kv.value); return true })()`
		if _, err := tb.atOrigin(ctx, strings.TrimSuffix(o.Origin, "/"), js); err != nil {
			return err
		}
		s.noteOrigin(o.Origin)
	}
	return nil
}

package browser

import (
	"context"
	"net/url"

	"github.com/go-rod/rod/lib/proto"
)

// proxyCreds are the user name and password of a session's proxy, given
// to it when it asks (Fetch.authRequired with source Proxy). They are kept
// here only, never in the context's proxyServer or in a log line.
type proxyCreds struct {
	user, pass string
}

// splitProxy parses a session's proxy URL into the context's proxy server
// ("scheme://host:port", socks5h written socks5) and its credentials (nil
// without user info). An unparsable URL is passed through for Chromium to
// refuse.
func splitProxy(proxy string) (server string, creds *proxyCreds) {
	u, err := url.Parse(proxy)
	if err != nil || u.Host == "" {
		return proxy, nil
	}
	scheme := u.Scheme
	if scheme == "socks5h" {
		scheme = "socks5"
	}
	server = scheme + "://" + u.Host
	if u.User != nil {
		pw, _ := u.User.Password()
		creds = &proxyCreds{user: u.User.Username(), pass: pw}
	}
	return server, creds
}

// answerAuth answers an authentication challenge paused by the Fetch
// domain: the session's proxy gets its credentials; anything else (a
// site's own 401, a proxy when the session has none) is cancelled, as a
// headless browser without a person would, so the page ends with its
// 401/407 instead of waiting.
func (s *Session) answerAuth(target cdpTarget, t *tab, e *proto.FetchAuthRequired) {
	defer s.recoverHandler(t, "Fetch.authRequired")
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp := &proto.FetchAuthChallengeResponse{Response: proto.FetchAuthChallengeResponseResponseCancelAuth}
	if s.creds != nil && e.AuthChallenge != nil && e.AuthChallenge.Source == proto.FetchAuthChallengeSourceProxy {
		resp = &proto.FetchAuthChallengeResponse{Response: proto.FetchAuthChallengeResponseResponseProvideCredentials,
			Username: s.creds.user, Password: s.creds.pass}
	}
	_ = proto.FetchContinueWithAuth{RequestID: e.RequestID, AuthChallengeResponse: resp}.Call(target.with(c))
}

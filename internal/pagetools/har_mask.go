package pagetools

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// credentialHeaders are headers whose whole value is a credential.
var credentialHeaders = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "Set-Cookie": true}

// urlHeaders are headers whose value is a URL, masked as URLs are.
var urlHeaders = map[string]bool{"Referer": true, "Location": true, "Content-Location": true}

// maskHAR returns doc as JSON with its secrets masked by the codebase's
// one rule (engine.SecretMasker, engine.SecretName):
//   - the values of credential headers (Authorization,
//     Proxy-Authorization, Cookie, Set-Cookie) and of headers whose name
//     says secret (X-Api-Token…);
//   - the values of query parameters and form fields whose name says
//     secret (password, token, code, pin…), in the URL, the Referer and
//     Location headers, queryString, params and the body's text;
//   - then every spelling of the passwords typed on the page (secrets) in
//     every value of the document: a login form whose fields are called
//     f1 and f2 is masked by what was typed into its password field,
//     wherever the value travels (the POST body, a redirect's URL, a page
//     echoing it), header and parameter names included; the document's own
//     keys are left alone, so a short password never breaks the HAR's
//     structure. A body kept as
//     base64 (binary) is not searched.
func maskHAR(doc *harDoc, secrets []string) ([]byte, error) {
	mask := engine.SecretMasker(secrets)
	for _, e := range doc.Log.Entries {
		rq, rs := &e.Request, &e.Response
		maskHeaders(rq.Headers, mask)
		maskHeaders(rs.Headers, mask)
		rq.URL = mask(maskQuery(rq.URL))
		rs.RedirectURL = mask(maskQuery(rs.RedirectURL))
		maskParams(rq.QueryString, mask)
		if pd := rq.PostData; pd != nil {
			maskParams(pd.Params, mask)
			if strings.HasPrefix(strings.ToLower(pd.MimeType), "application/x-www-form-urlencoded") {
				pd.Text = maskFormText(pd.Text)
			}
			pd.Text = mask(pd.Text)
		}
		if rs.Content.Encoding == "" {
			rs.Content.Text = mask(rs.Content.Text)
		}
		e.Comment = mask(e.Comment)
	}
	return json.Marshal(doc)
}

func maskHeaders(h []harNV, mask func(string) string) {
	for i := range h {
		name := http.CanonicalHeaderKey(h[i].Name)
		switch {
		case credentialHeaders[name] || engine.SecretName(name):
			h[i].Value = engine.SecretMask
		case urlHeaders[name]:
			h[i].Value = maskQuery(h[i].Value)
		}
		h[i].Name, h[i].Value = mask(h[i].Name), mask(h[i].Value)
	}
}

func maskParams(p []harNV, mask func(string) string) {
	for i := range p {
		if engine.SecretName(p[i].Name) {
			p[i].Value = engine.SecretMask
		}
		p[i].Name, p[i].Value = mask(p[i].Name), mask(p[i].Value)
	}
}

// maskQuery masks the values of u's query parameters whose name says
// secret, leaving the rest of u as it was written.
func maskQuery(u string) string {
	base, q, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	q, frag, hasFrag := strings.Cut(q, "#")
	out := base + "?" + maskFormText(q)
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// maskFormText masks, in an application/x-www-form-urlencoded text, the
// values of fields whose name (decoded) says secret; the rest is kept
// byte for byte.
func maskFormText(s string) string {
	parts := strings.Split(s, "&")
	for i, part := range parts {
		k, _, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		name := k
		if d, err := url.QueryUnescape(k); err == nil {
			name = d
		}
		if engine.SecretName(name) {
			parts[i] = k + "=" + engine.SecretMask
		}
	}
	return strings.Join(parts, "&")
}

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

// maskHAR returns doc as JSON with its secrets masked by the codebase's
// one rule (engine.MaskSecrets, engine.SecretName):
//   - the values of credential headers (Authorization,
//     Proxy-Authorization, Cookie, Set-Cookie) and of headers whose name
//     says secret (X-Api-Token…);
//   - the values of query parameters and form fields whose name says
//     secret (password, token, code, pin…), in the URL, the Referer and
//     Location headers, queryString, params and the body's text;
//   - then every spelling of the passwords typed on the page (secrets),
//     in every string of the document: a login form whose fields are
//     called f1 and f2 is masked by what was typed into its password
//     field, wherever the value travels (the POST body, a redirect's
//     URL, a page echoing it).
func maskHAR(doc *harDoc, secrets []string) ([]byte, error) {
	for _, e := range doc.Log.Entries {
		maskHeaders(e.Request.Headers)
		maskHeaders(e.Response.Headers)
		e.Request.URL = maskQuery(e.Request.URL)
		e.Response.RedirectURL = maskQuery(e.Response.RedirectURL)
		maskParams(e.Request.QueryString)
		if pd := e.Request.PostData; pd != nil {
			maskParams(pd.Params)
			if len(pd.Params) > 0 {
				pd.Text = maskFormText(pd.Text)
			}
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return engine.MaskSecretsJSON(b, secrets), nil
}

// urlHeaders are headers whose value is a URL, masked as URLs are.
var urlHeaders = map[string]bool{"Referer": true, "Location": true, "Content-Location": true}

func maskHeaders(h []harNV) {
	for i := range h {
		name := http.CanonicalHeaderKey(h[i].Name)
		switch {
		case credentialHeaders[name] || engine.SecretName(name):
			h[i].Value = engine.SecretMask
		case urlHeaders[name]:
			h[i].Value = maskQuery(h[i].Value)
		}
	}
}

func maskParams(p []harNV) {
	for i := range p {
		if engine.SecretName(p[i].Name) {
			p[i].Value = engine.SecretMask
		}
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

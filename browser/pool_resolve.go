package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxVersionBody bounds the /json/version answer read (a browser's is
// well under 1 KiB).
const maxVersionBody = 64 << 10

// resolveEndpoint turns an http(s):// endpoint into its DevTools WebSocket
// URL by asking its /json/version, within ctx. It replaces rod's
// launcher.ResolveURL, which has no deadline (an endpoint that accepts the
// connection and never answers held the instance, and with it every
// session's liveness check, forever) and panics on a body it cannot read.
//
// The WebSocket URL keeps the host:port the endpoint was given as: a
// browser behind a proxy, a port forward or a container names itself by
// an address the caller may not reach.
func resolveEndpoint(ctx context.Context, client *http.Client, endpoint string) (string, error) {
	base, err := url.Parse(endpoint)
	if err != nil || base.Host == "" {
		return "", fmt.Errorf("browser endpoint %q is not a URL with a host", endpoint)
	}
	v := *base
	v.Path, v.RawPath, v.RawQuery, v.Fragment = "/json/version", "", "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return "", err
	}
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("ask %s: %w", v.String(), err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxVersionBody))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", v.String(), err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered HTTP %d", v.String(), res.StatusCode)
	}
	return wsFromVersion(body, base)
}

// wsFromVersion reads webSocketDebuggerUrl from a /json/version answer and
// points it at base's host (and ws/wss after base's scheme).
func wsFromVersion(body []byte, base *url.URL) (string, error) {
	var ver struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &ver); err != nil {
		return "", fmt.Errorf("/json/version of %s is not JSON: %v", base.Host, err)
	}
	ws, err := url.Parse(ver.WS)
	if err != nil || ver.WS == "" || (ws.Scheme != "ws" && ws.Scheme != "wss") {
		return "", fmt.Errorf("/json/version of %s gives no webSocketDebuggerUrl (got %q): is it a Chromium with remote debugging?", base.Host, ver.WS)
	}
	// Only the browser's path and query are kept: the scheme follows base,
	// the host is base's, and nothing else of the answer is used.
	out := url.URL{Scheme: "ws", Host: base.Host, Path: ws.Path, RawPath: ws.RawPath, RawQuery: ws.RawQuery}
	if strings.EqualFold(base.Scheme, "https") || strings.EqualFold(base.Scheme, "wss") {
		out.Scheme = "wss"
	}
	return out.String(), nil
}

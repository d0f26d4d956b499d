package wire

import (
	"fmt"
	"net/http"
	"time"

	"github.com/browsertask/browsertask/mcp"
	"github.com/browsertask/browsertask/web"
)

// HTTPOptions say how a listener serves the process.
type HTTPOptions struct {
	// Token, when set, is required on /mcp, /sse and the dashboard.
	Token string
	// AllowedOrigins are browser origins allowed besides the listener's
	// own loopback ones.
	AllowedOrigins []string
	// SessionTimeout closes idle MCP HTTP sessions (0: mcp's default).
	SessionTimeout time.Duration
	// Binary is the command the dashboard's client snippets launch for
	// stdio ("" = "browsertask").
	Binary string
}

// Handler serves the process on the listener at addr (host:port): /mcp
// (Streamable HTTP), /sse (the deprecated HTTP+SSE transport of MCP
// 2024-11-05, for old clients), GET /healthz and the dashboard at /, all
// behind the same Host, Origin and token checks. Pages opened by the
// process's own browser may never reach addr.
func (p *Process) Handler(addr string, o HTTPOptions) http.Handler {
	p.Browser.DenyHost(addr)
	mux := http.NewServeMux()
	mo := mcp.HTTPOptions{Token: o.Token, AllowedOrigins: o.AllowedOrigins, SessionTimeout: o.SessionTimeout}
	mux.Handle("/mcp", p.MCP.HTTPHandler(mo))
	mux.Handle("/sse", p.MCP.SSEHandler(mo))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/", web.New(web.Options{
		Engine: p.Engine, Live: p.Browser, Token: o.Token, AllowedOrigins: o.AllowedOrigins, DBPath: p.dbPath, Addr: addr, Binary: o.Binary,
		Version: p.version, Logger: p.Log.With("component", "web"),
	}))
	return mux
}

package main

import (
	"os"

	"github.com/browsertask/browsertask/web"
)

// dashboard builds the web dashboard for this app, served at "/" next to
// /mcp with the same token.
func (a *app) dashboard(token, addr string) *web.Dashboard {
	bin, err := os.Executable()
	if err != nil {
		bin = "browsertask"
	}
	return web.New(web.Options{
		Engine: a.engine, Token: token, DBPath: a.cfg.dbPath, Addr: addr, Binary: bin,
		Version: version, Logger: a.log.With("component", "web"),
	})
}

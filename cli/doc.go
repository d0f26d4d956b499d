// Package cli is browsertask's command line: one file per command (serve,
// mcp, run, runs, show, cancel, artifact, templates, sessions, doctor), the
// flags every command shares (config.go, flags.go) and the wiring of one
// process (app.go: database, browser manager, engine, MCP server, dashboard).
// main.go only hands os.Args, the environment and the standard streams to Run.
package cli

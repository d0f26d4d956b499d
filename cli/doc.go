// Package cli is browsertask's command line: one file per command (serve,
// mcp, run, runs, show, cancel, answer, artifact, templates, sessions,
// doctor), the flags every command shares (config.go, flags.go), the
// wiring of one process (app.go: database, browser manager, engine, MCP
// server, dashboard) and the person's terminal for the questions runs ask
// (terminal.go, run_questions.go). main.go only hands os.Args, the
// environment and the standard streams to Run.
package cli

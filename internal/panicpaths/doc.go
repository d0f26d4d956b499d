// Package panicpaths holds the test that injects a panic into each
// goroutine-spawning path of the daemon (engine.WithFaults, one site at a
// time) and shows the process survives each: the page or run the panic
// belonged to ends with EXECUTION_ERROR "internal error in <site>", the
// engine keeps running runs. It wires the daemon in the test's process
// (database, browser manager, templates, engine, MCP) as serve does; it
// has no other code.
package panicpaths

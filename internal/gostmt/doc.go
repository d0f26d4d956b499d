// Package gostmt holds the check that no package starts a goroutine
// outside engine.Go (engine/goroutine.go): its test walks every non-test
// Go file of the module and refuses a bare go statement, or a call of a
// method named Go (errgroup.Group, sync.WaitGroup) that would start one
// without a panic guard, outside a short allow-list of process-level
// loops. An unguarded panic in any goroutine ends the process and every
// run with it (issue 26). .ci/run runs the test before the suite; it has
// no other code.
package gostmt

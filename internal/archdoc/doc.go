// Package archdoc keeps docs/architecture.md true to the code. Its test
// runs `go list -json ./...` at the module root and fails when
//
//   - a package directory of the module has no row in the doc's
//     hand-written Packages table (the table that says what each package
//     owns),
//   - that table names a directory that does not exist, or one that holds
//     Go files but is no package `go list` knows,
//   - the generated table (between the archdoc:begin and archdoc:end
//     markers) differs from what `go list` says: each package, its level
//     in the import graph and the module's packages it imports (non-test
//     imports only, so a test gaining a helper does not stale the map).
//
// `go test ./internal/archdoc -update` rewrites the generated table; the
// hand-written rows are for a person to write. The package has no other
// code: a map that drifts from the code misleads every reader, and only a
// test notices drift.
package archdoc

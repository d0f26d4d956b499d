package page

import (
	"errors"
	"fmt"
	"strings"
)

// MaxDepth is the deepest element nesting golang.org/x/net/html parses:
// a page whose open elements (html and body included) go past it is
// refused whole. Browsers have no such limit, so a page this deep can
// only be read through a browser's own DOM.
const MaxDepth = 512

// DepthError is the error of a parse refused because the page nests
// elements deeper than MaxDepth. Callers tell it apart (errors.As) to
// name the cause and the way out (render "browser") in the page's error.
type DepthError struct{}

// Error says what happened in words a user can act on.
func (*DepthError) Error() string {
	return fmt.Sprintf("the page nests elements deeper than the HTML parser's limit of %d levels", MaxDepth)
}

// ParseError turns an error of golang.org/x/net/html's parser into the
// error this package reports: a *DepthError for its nesting limit, the
// parser's own error wrapped otherwise. It is exported so that every
// package parsing pages with that parser (structured) reports the same
// error.
func ParseError(err error) error {
	if err == nil {
		return nil
	}
	var de *DepthError
	if errors.As(err, &de) {
		return err
	}
	if strings.Contains(err.Error(), "open stack of elements exceeds") {
		return &DepthError{}
	}
	return fmt.Errorf("the page's HTML cannot be parsed: %w", err)
}

package page

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Why a page looks like an application shell whose content a script
// renders (the reasons AppShell returns).
const (
	// ShellNoFields: fields were requested and none was found.
	ShellNoFields = "no-fields"
	// ShellNoscript: a <noscript> asks for JavaScript.
	ShellNoscript = "noscript"
	// ShellNoText: the body has next to no visible text but has scripts.
	ShellNoText = "no-text"
)

// MinShellText is the number of letters and digits below which a body
// with scripts counts as empty (ShellNoText). The smallest fixture pages
// that need no script have about 30.
const MinShellText = 20

// AppShell tells whether the HTML alone is probably not the page a
// browser shows, so `auto` mode should render it in a browser. r is this
// document's extraction result for the requested fields (the other parts
// of r are not used). It reports the first reason found, in this order:
// ShellNoFields (fields were requested and every one is null or an empty
// list), ShellNoscript (a <noscript> whose text mentions JavaScript, such
// as "You need to enable JavaScript to run this app"), ShellNoText (the
// body has fewer than MinShellText letters and digits of visible text and
// at least one <script>); "" when none applies.
func (d *Document) AppShell(r *Result) string {
	if r != nil && len(r.Fields) > 0 && len(r.FieldErrors) == 0 {
		found := false
		for _, v := range r.Fields {
			switch v := v.(type) {
			case nil:
			case []any:
				found = found || len(v) > 0
			default:
				found = true
			}
		}
		if !found {
			return ShellNoFields
		}
	}
	scripts, noscript := false, false
	walk(d.root, func(n *html.Node) bool {
		switch {
		case isHTML(n, atom.Script):
			scripts = true
		case isHTML(n, atom.Noscript):
			if strings.Contains(strings.ToLower(textContent(n)), "javascript") {
				noscript = true
			}
		}
		return true
	})
	if noscript {
		return ShellNoscript
	}
	if scripts {
		letters := 0
		if b := d.body(); b != nil {
			for _, r := range d.innerText(b) {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					letters++
				}
			}
		}
		if letters < MinShellText {
			return ShellNoText
		}
	}
	return ""
}

package page

import "strings"

// rewriteIsWhere rewrites the :is() and :where() of a selector, which
// cascadia (v1.3) does not parse, into what it does: `:is(A, B)` matches
// exactly the elements `:not(:not(A, B))` matches, and cascadia gives a
// :not() the specificity of its most specific argument, as :is() has. A
// :where() has none, so spec is the selector to take the specificity
// from: its :where(…) become `:not(:not(*))` (no specificity, matches any
// element). Real sheets use both (WordPress's block styles write
// `:where(.wp-block-…)`, reset sheets `:is(h1, h2)`); without the rewrite
// their rules were dropped and the HTTP path kept text they hide. The
// lists are not forgiving here (an argument cascadia cannot parse drops
// the rule, where a browser drops only the argument). Nested :is() and
// :where() are rewritten too; ok is false when a parenthesis is not
// closed.
func rewriteIsWhere(sel string) (match, spec string, ok bool) {
	if !strings.Contains(strings.ToLower(sel), ":is(") && !strings.Contains(strings.ToLower(sel), ":where(") {
		return sel, sel, true
	}
	var m, s strings.Builder
	var quote byte
	for i := 0; i < len(sel); i++ {
		c := sel[i]
		switch {
		case c == '\\' && i+1 < len(sel):
			m.WriteString(sel[i : i+2])
			s.WriteString(sel[i : i+2])
			i++
			continue
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ':':
			name := ""
			lower := strings.ToLower(sel[i:])
			if strings.HasPrefix(lower, ":is(") {
				name = "is"
			} else if strings.HasPrefix(lower, ":where(") {
				name = "where"
			}
			if name == "" {
				break
			}
			open := i + len(name) + 1
			end := closingParen(sel, open)
			if end < 0 {
				return "", "", false
			}
			im, is, ok := rewriteIsWhere(sel[open+1 : end])
			if !ok {
				return "", "", false
			}
			m.WriteString(":not(:not(" + im + "))")
			if name == "where" {
				s.WriteString(":not(:not(*))")
			} else {
				s.WriteString(":not(:not(" + is + "))")
			}
			i = end
			continue
		}
		m.WriteByte(c)
		s.WriteByte(c)
	}
	return m.String(), s.String(), true
}

// closingParen returns the index of the ")" that closes the "(" at open,
// skipping quoted strings and escapes, or -1.
func closingParen(s string, open int) int {
	depth := 0
	var quote byte
	for i := open; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

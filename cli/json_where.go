package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// jsonProblem says what is wrong with the JSON text b that failed to
// decode with err, and where: "line 3, column 14 (near `"a": }`): invalid
// character '}' looking for beginning of value". A person fixes a file by
// its line and column, which encoding/json's byte offset does not give.
func jsonProblem(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte itself: point at it.
		return fmt.Sprintf("%s: %s", jsonWhere(b, syn.Offset-1), syn.Error())
	case errors.As(err, &typ):
		where := jsonWhere(b, typ.Offset)
		if typ.Field != "" {
			return fmt.Sprintf("%s: %s is %s, want %s", where, typ.Field, typ.Value, typ.Type)
		}
		return fmt.Sprintf("%s: got %s, want %s", where, typ.Value, typ.Type)
	case err != nil && strings.Contains(err.Error(), "unexpected end of JSON input"):
		return fmt.Sprintf("%s: the text ends before the JSON value does (a missing } or ] or \")", jsonWhere(b, int64(len(b))))
	case err != nil:
		return err.Error()
	}
	return ""
}

// jsonWhere turns a byte offset into "line L, column C" (both from 1,
// columns in characters) with the text just before it.
func jsonWhere(b []byte, offset int64) string {
	off := int(min(max(offset, 0), int64(len(b))))
	line, col := 1, 1
	for i := 0; i < off; {
		r, size := utf8.DecodeRune(b[i:])
		i += size
		if r == '\n' {
			line, col = line+1, 1
			continue
		}
		col++
	}
	start := max(0, off-20)
	for start > 0 && start < len(b) && !utf8.RuneStart(b[start]) {
		start--
	}
	near := strings.Join(strings.Fields(string(b[start:off])), " ")
	if near == "" {
		return fmt.Sprintf("line %d, column %d", line, col)
	}
	return fmt.Sprintf("line %d, column %d (after `%s`)", line, col, near)
}

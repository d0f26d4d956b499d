package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// maxCookieFile bounds an imported cookie file: a browser's whole cookie
// jar is well under it.
const maxCookieFile = 16 << 20

// ParseCookieFile reads a file to import into a profile: a Playwright
// storageState JSON object ({cookies, origins}, what export_session_state
// writes too) or a Netscape cookies.txt (curl, wget, yt-dlp and the
// "cookies.txt" browser extensions write it), told apart by the first
// non-blank byte ('{' is JSON). Errors: INVALID_PARAMETER naming the line
// or the field and what is wrong with it.
func ParseCookieFile(data []byte) (*StorageState, error) {
	if len(data) > maxCookieFile {
		return nil, engine.Errorf(engine.InvalidParameter, "the cookie file has %d bytes; at most %d", len(data), maxCookieFile)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return parseStorageState(trimmed)
	}
	return parseNetscape(data)
}

// parseStorageState decodes and checks a storageState object.
func parseStorageState(data []byte) (*StorageState, error) {
	var st StorageState
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&st); err != nil {
		return nil, engine.Errorf(engine.InvalidParameter, "storageState: not a Playwright storageState JSON object: %v", err)
	}
	for i, c := range st.Cookies {
		if c.Name == "" || c.Domain == "" {
			return nil, engine.Errorf(engine.InvalidParameter, "storageState.cookies[%d]: name and domain are required", i)
		}
		if c.Path == "" {
			st.Cookies[i].Path = "/"
		}
		switch c.SameSite {
		case "", "Strict", "Lax", "None":
		default:
			return nil, engine.Errorf(engine.InvalidParameter, "storageState.cookies[%d].sameSite %q: want Strict, Lax or None", i, c.SameSite)
		}
	}
	if st.Cookies == nil {
		st.Cookies = []Cookie{}
	}
	return &st, nil
}

// httpOnlyPrefix marks an HttpOnly cookie's line in cookies.txt (curl's
// convention); other lines starting with '#' are comments.
const httpOnlyPrefix = "#HttpOnly_"

// parseNetscape reads cookies.txt: one cookie a line, seven fields
// separated by tabs — domain, include subdomains (TRUE/FALSE), path,
// secure (TRUE/FALSE), expiry (Unix seconds, 0 = a session cookie),
// name, value.
func parseNetscape(data []byte) (*StorageState, error) {
	st := &StorageState{Cookies: []Cookie{}}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		httpOnly := false
		if strings.HasPrefix(line, httpOnlyPrefix) {
			line, httpOnly = line[len(httpOnlyPrefix):], true
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) == 6 {
			f = append(f, "") // an empty value, its tab trimmed by an editor
		}
		if len(f) != 7 {
			return nil, engine.Errorf(engine.InvalidParameter, "cookies.txt line %d: %d tab-separated fields; want 7 (domain, subdomains, path, secure, expiry, name, value)", n+1, len(f))
		}
		sub, err := netscapeBool(f[1])
		if err != nil {
			return nil, engine.Errorf(engine.InvalidParameter, "cookies.txt line %d, field 2 (include subdomains): %v", n+1, err)
		}
		secure, err := netscapeBool(f[3])
		if err != nil {
			return nil, engine.Errorf(engine.InvalidParameter, "cookies.txt line %d, field 4 (secure): %v", n+1, err)
		}
		exp, err := strconv.ParseInt(strings.TrimSpace(f[4]), 10, 64)
		if err != nil || exp < 0 {
			return nil, engine.Errorf(engine.InvalidParameter, "cookies.txt line %d, field 5 (expiry): %q is not Unix seconds", n+1, f[4])
		}
		domain := strings.TrimSpace(f[0])
		if domain == "" || f[5] == "" {
			return nil, engine.Errorf(engine.InvalidParameter, "cookies.txt line %d: the domain and the name must not be empty", n+1)
		}
		// A cookie for subdomains is a domain cookie (leading dot); one
		// for the host alone keeps the bare host.
		domain = strings.TrimPrefix(domain, ".")
		if sub {
			domain = "." + domain
		}
		expires := float64(exp)
		if exp == 0 {
			expires = -1
		}
		path := f[2]
		if path == "" {
			path = "/"
		}
		st.Cookies = append(st.Cookies, Cookie{Name: f[5], Value: f[6], Domain: domain, Path: path, Expires: expires,
			HTTPOnly: httpOnly, Secure: secure})
	}
	if len(st.Cookies) == 0 {
		return nil, engine.Errorf(engine.InvalidParameter, "the file holds no cookies: want a Playwright storageState JSON or a Netscape cookies.txt")
	}
	return st, nil
}

// netscapeBool reads TRUE or FALSE (any case).
func netscapeBool(s string) (bool, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TRUE":
		return true, nil
	case "FALSE":
		return false, nil
	}
	return false, fmt.Errorf("%q: want TRUE or FALSE", s)
}

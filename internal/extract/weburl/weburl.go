// Package weburl parses URLs the way browsers do (the WHATWG URL Standard's
// basic URL parser, without state overrides), so that a URL resolved in Go
// against a page's base reads exactly like the one a browser's `a.href` or
// `location.href` gives: tabs and newlines dropped, backslashes as slashes
// in http(s) URLs, dot segments resolved, scheme and host lower-cased,
// international hosts in punycode, IPv4 shorthand (0x7f.1) and IPv6
// written canonically, default ports dropped, spaces and non-ASCII
// characters percent-encoded per component.
//
// Where Chromium (the browser the extraction is compared with) departs from
// the standard, this package follows Chromium: "|" is percent-encoded in
// paths, "'" in the query of every URL (not only http(s)), a space before
// an opaque path's "?" stays a space, and a space or "*" in a host is
// percent-encoded instead of failing.
//
// Known differences from a browser: a query is always percent-encoded as
// UTF-8 (a browser uses the page's encoding for the query of http(s) URLs
// on a non-UTF-8 page), and hosts go through golang.org/x/net/idna rather
// than the browser's own IDNA tables.
package weburl

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// URL is a parsed URL. Its fields are already serialized (percent-encoded
// where the standard says so), so String only joins them.
type URL struct {
	// Scheme is lower case, without the colon.
	Scheme string
	// Username and Password are percent-encoded.
	Username, Password string
	// Host is the serialized host (IPv6 in brackets); HasHost tells a
	// missing host from an empty one ("file:///x" has an empty host).
	Host    string
	HasHost bool
	// Port is empty when absent or the scheme's default.
	Port string
	// Path holds the path segments of a hierarchical URL; Opaque the path
	// of a URL such as mailto:x or javascript:... (OpaquePath true).
	Path       []string
	Opaque     string
	OpaquePath bool
	// Query and Fragment are without their "?" and "#"; HasQuery and
	// HasFragment tell an empty one from none.
	Query       string
	HasQuery    bool
	Fragment    string
	HasFragment bool
}

// ErrInvalid is wrapped by every parse failure.
var ErrInvalid = errors.New("invalid URL")

// specialPorts are the special schemes and their default ports ("" for
// file, which has none).
var specialPorts = map[string]string{
	"ftp": "21", "file": "", "http": "80", "https": "443", "ws": "80", "wss": "443",
}

// IsSpecial reports whether the URL's scheme is a special one (http,
// https, ws, wss, ftp, file).
func (u *URL) IsSpecial() bool { _, ok := specialPorts[u.Scheme]; return ok }

// Parse parses input on its own (an absolute URL).
func Parse(input string) (*URL, error) { return ParseRef(input, nil) }

// Resolve resolves ref against the absolute URL base and serializes the
// result. ok is false when base or ref cannot be parsed.
func Resolve(base, ref string) (string, bool) {
	b, err := Parse(base)
	if err != nil {
		return "", false
	}
	u, err := ParseRef(ref, b)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// Normalize parses an absolute URL and serializes it as a browser would
// show it (location.href). ok is false when it cannot be parsed.
func Normalize(raw string) (string, bool) {
	u, err := Parse(raw)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// String serializes the URL (the standard's URL serializer, fragment
// included).
func (u *URL) String() string {
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteByte(':')
	if u.HasHost {
		b.WriteString("//")
		if u.Username != "" || u.Password != "" {
			b.WriteString(u.Username)
			if u.Password != "" {
				b.WriteByte(':')
				b.WriteString(u.Password)
			}
			b.WriteByte('@')
		}
		b.WriteString(u.Host)
		if u.Port != "" {
			b.WriteByte(':')
			b.WriteString(u.Port)
		}
	}
	if u.OpaquePath {
		b.WriteString(u.Opaque)
	} else {
		if !u.HasHost && len(u.Path) > 1 && u.Path[0] == "" {
			b.WriteString("/.")
		}
		for _, seg := range u.Path {
			b.WriteByte('/')
			b.WriteString(seg)
		}
	}
	if u.HasQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if u.HasFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}

// WithoutFragment returns a copy of u without its fragment.
func (u *URL) WithoutFragment() *URL {
	c := u.clone()
	c.Fragment, c.HasFragment = "", false
	return c
}

func (u *URL) clone() *URL {
	c := *u
	c.Path = append([]string(nil), u.Path...)
	return &c
}

// parser states (the standard's names).
type state int

const (
	stSchemeStart state = iota
	stScheme
	stNoScheme
	stSpecialRelativeOrAuthority
	stPathOrAuthority
	stRelative
	stRelativeSlash
	stSpecialAuthoritySlashes
	stSpecialAuthorityIgnoreSlashes
	stAuthority
	stHost
	stPort
	stFile
	stFileSlash
	stFileHost
	stPathStart
	stPath
	stOpaquePath
	stQuery
	stFragment
)

// eof stands for the end of the input in the state machine.
const eof rune = -1

// ParseRef parses input relative to base (nil for none): the standard's
// basic URL parser. Errors wrap ErrInvalid.
func ParseRef(input string, base *URL) (*URL, error) {
	in := []rune(prepare(input))
	u := &URL{}
	st := stSchemeStart
	var buf strings.Builder
	atSign, insideBrackets, passwordTokenSeen := false, false, false
	fail := func(why string) (*URL, error) {
		return nil, fmt.Errorf("%w: %q: %s", ErrInvalid, input, why)
	}
	// remaining returns the input after position p as a string.
	remaining := func(p int) string {
		if p+1 >= len(in) {
			return ""
		}
		return string(in[p+1:])
	}
	for p := 0; ; p++ {
		c := eof
		if p < len(in) {
			c = in[p]
		}
		switch st {
		case stSchemeStart:
			if isASCIIAlpha(c) {
				buf.WriteRune(toLowerASCII(c))
				st = stScheme
			} else {
				st = stNoScheme
				p--
			}
		case stScheme:
			switch {
			case isASCIIAlphanumeric(c) || c == '+' || c == '-' || c == '.':
				buf.WriteRune(toLowerASCII(c))
			case c == ':':
				u.Scheme = buf.String()
				buf.Reset()
				switch {
				case u.Scheme == "file":
					st = stFile
				case u.IsSpecial() && base != nil && base.Scheme == u.Scheme:
					st = stSpecialRelativeOrAuthority
				case u.IsSpecial():
					st = stSpecialAuthoritySlashes
				case strings.HasPrefix(remaining(p), "/"):
					st = stPathOrAuthority
					p++
				default:
					u.OpaquePath = true
					st = stOpaquePath
				}
			default:
				buf.Reset()
				st = stNoScheme
				p = -1
			}
		case stNoScheme:
			if base == nil || (base.OpaquePath && c != '#') {
				return fail("a relative reference without a base URL")
			}
			if base.OpaquePath && c == '#' {
				u.Scheme, u.OpaquePath, u.Opaque = base.Scheme, true, base.Opaque
				u.Query, u.HasQuery = base.Query, base.HasQuery
				u.HasFragment = true
				st = stFragment
			} else if base.Scheme != "file" {
				st = stRelative
				p--
			} else {
				st = stFile
				p--
			}
		case stSpecialRelativeOrAuthority:
			if c == '/' && strings.HasPrefix(remaining(p), "/") {
				st = stSpecialAuthorityIgnoreSlashes
				p++
			} else {
				st = stRelative
				p--
			}
		case stPathOrAuthority:
			if c == '/' {
				st = stAuthority
			} else {
				st = stPath
				p--
			}
		case stRelative:
			u.Scheme = base.Scheme
			switch {
			case c == '/':
				st = stRelativeSlash
			case u.IsSpecial() && c == '\\':
				st = stRelativeSlash
			default:
				u.Username, u.Password = base.Username, base.Password
				u.Host, u.HasHost, u.Port = base.Host, base.HasHost, base.Port
				u.Path = append([]string(nil), base.Path...)
				u.Query, u.HasQuery = base.Query, base.HasQuery
				switch c {
				case '?':
					u.Query, u.HasQuery = "", true
					st = stQuery
				case '#':
					u.HasFragment = true
					st = stFragment
				case eof:
				default:
					u.Query, u.HasQuery = "", false
					u.shortenPath()
					st = stPath
					p--
				}
			}
		case stRelativeSlash:
			if u.IsSpecial() && (c == '/' || c == '\\') {
				st = stSpecialAuthorityIgnoreSlashes
			} else if c == '/' {
				st = stAuthority
			} else {
				u.Username, u.Password = base.Username, base.Password
				u.Host, u.HasHost, u.Port = base.Host, base.HasHost, base.Port
				st = stPath
				p--
			}
		case stSpecialAuthoritySlashes:
			if c == '/' && strings.HasPrefix(remaining(p), "/") {
				st = stSpecialAuthorityIgnoreSlashes
				p++
			} else {
				st = stSpecialAuthorityIgnoreSlashes
				p--
			}
		case stSpecialAuthorityIgnoreSlashes:
			if c != '/' && c != '\\' {
				st = stAuthority
				p--
			}
		case stAuthority:
			if c == '@' {
				if atSign {
					s := buf.String()
					buf.Reset()
					buf.WriteString("%40")
					buf.WriteString(s)
				}
				atSign = true
				for _, r := range buf.String() {
					if r == ':' && !passwordTokenSeen {
						passwordTokenSeen = true
						continue
					}
					enc := percentEncodeRune(r, userinfoSet)
					if passwordTokenSeen {
						u.Password += enc
					} else {
						u.Username += enc
					}
				}
				buf.Reset()
			} else if c == eof || c == '/' || c == '?' || c == '#' || (u.IsSpecial() && c == '\\') {
				if atSign && buf.Len() == 0 {
					return fail("credentials without a host")
				}
				p -= utf8.RuneCountInString(buf.String()) + 1
				buf.Reset()
				st = stHost
			} else {
				buf.WriteRune(c)
			}
		case stHost, stFileHost:
			if st == stFileHost {
				if c == eof || c == '/' || c == '\\' || c == '?' || c == '#' {
					p--
					s := buf.String()
					if isWindowsDriveLetter(s, false) {
						st = stPath
					} else if s == "" {
						u.Host, u.HasHost = "", true
						st = stPathStart
					} else {
						h, err := parseHost(s, false)
						if err != nil {
							return fail(err.Error())
						}
						if h == "localhost" {
							h = ""
						}
						u.Host, u.HasHost = h, true
						buf.Reset()
						st = stPathStart
					}
				} else {
					buf.WriteRune(c)
				}
				continue
			}
			if c == ':' && !insideBrackets {
				if buf.Len() == 0 {
					return fail("a port without a host")
				}
				h, err := parseHost(buf.String(), !u.IsSpecial())
				if err != nil {
					return fail(err.Error())
				}
				u.Host, u.HasHost = h, true
				buf.Reset()
				st = stPort
			} else if c == eof || c == '/' || c == '?' || c == '#' || (u.IsSpecial() && c == '\\') {
				p--
				if u.IsSpecial() && buf.Len() == 0 {
					return fail("an empty host")
				}
				h, err := parseHost(buf.String(), !u.IsSpecial())
				if err != nil {
					return fail(err.Error())
				}
				u.Host, u.HasHost = h, true
				buf.Reset()
				st = stPathStart
			} else {
				if c == '[' {
					insideBrackets = true
				}
				if c == ']' {
					insideBrackets = false
				}
				buf.WriteRune(c)
			}
		case stPort:
			if isASCIIDigit(c) {
				buf.WriteRune(c)
			} else if c == eof || c == '/' || c == '?' || c == '#' || (u.IsSpecial() && c == '\\') {
				if buf.Len() > 0 {
					n, err := strconv.ParseUint(buf.String(), 10, 32)
					if err != nil || n > 65535 {
						return fail("the port is out of range")
					}
					port := strconv.FormatUint(n, 10)
					if def, ok := specialPorts[u.Scheme]; ok && def == port {
						port = ""
					}
					u.Port = port
					buf.Reset()
				}
				st = stPathStart
				p--
			} else {
				return fail("the port is not a number")
			}
		case stFile:
			u.Scheme = "file"
			u.Host, u.HasHost = "", true
			if c == '/' || c == '\\' {
				st = stFileSlash
			} else if base != nil && base.Scheme == "file" {
				u.Host, u.HasHost = base.Host, base.HasHost
				u.Path = append([]string(nil), base.Path...)
				u.Query, u.HasQuery = base.Query, base.HasQuery
				switch c {
				case '?':
					u.Query, u.HasQuery = "", true
					st = stQuery
				case '#':
					u.HasFragment = true
					st = stFragment
				case eof:
				default:
					u.Query, u.HasQuery = "", false
					if !startsWithWindowsDriveLetter(in[p:]) {
						u.shortenPath()
					} else {
						u.Path = nil
					}
					st = stPath
					p--
				}
			} else {
				st = stPath
				p--
			}
		case stFileSlash:
			if c == '/' || c == '\\' {
				st = stFileHost
			} else {
				if base != nil && base.Scheme == "file" {
					u.Host, u.HasHost = base.Host, base.HasHost
					if !startsWithWindowsDriveLetter(in[p:]) && len(base.Path) > 0 && isWindowsDriveLetter(base.Path[0], true) {
						u.Path = append(u.Path, base.Path[0])
					}
				}
				st = stPath
				p--
			}
		case stPathStart:
			if u.IsSpecial() {
				st = stPath
				if c != '/' && c != '\\' {
					p--
				}
			} else if c == '?' {
				u.HasQuery = true
				st = stQuery
			} else if c == '#' {
				u.HasFragment = true
				st = stFragment
			} else if c != eof {
				st = stPath
				if c != '/' {
					p--
				}
			}
		case stPath:
			slash := c == '/' || (u.IsSpecial() && c == '\\')
			if c == eof || slash || c == '?' || c == '#' {
				seg := buf.String()
				switch {
				case isDoubleDot(seg):
					u.shortenPath()
					if !slash {
						u.Path = append(u.Path, "")
					}
				case isSingleDot(seg) && !slash:
					u.Path = append(u.Path, "")
				case !isSingleDot(seg):
					if u.Scheme == "file" && len(u.Path) == 0 && isWindowsDriveLetter(seg, false) {
						seg = seg[:1] + ":"
					}
					u.Path = append(u.Path, seg)
				}
				buf.Reset()
				if c == '?' {
					u.Query, u.HasQuery = "", true
					st = stQuery
				}
				if c == '#' {
					u.HasFragment = true
					st = stFragment
				}
			} else {
				buf.WriteString(percentEncodeRune(c, pathSet))
			}
		case stOpaquePath:
			switch c {
			case '?':
				u.Opaque = buf.String()
				buf.Reset()
				u.HasQuery = true
				st = stQuery
			case '#':
				u.Opaque = buf.String()
				buf.Reset()
				u.HasFragment = true
				st = stFragment
			case eof:
				u.Opaque = buf.String()
				buf.Reset()
			default:
				buf.WriteString(percentEncodeRune(c, c0ControlSet))
			}
		case stQuery:
			if c == '#' || c == eof {
				// Chromium encodes "'" in the query of every URL, not
				// only of special ones (mailto:?subject=it's reads
				// mailto:?subject=it%27s in a.href).
				for _, r := range buf.String() {
					u.Query += percentEncodeRune(r, specialQuerySet)
				}
				buf.Reset()
				if c == '#' {
					u.HasFragment = true
					st = stFragment
				}
			} else {
				buf.WriteRune(c)
			}
		case stFragment:
			if c != eof {
				u.Fragment += percentEncodeRune(c, fragmentSet)
			}
		}
		if c == eof && p >= len(in) {
			break
		}
	}
	if u.OpaquePath {
		u.Opaque = trimOpaqueTrailingSpaces(u)
	}
	return u, nil
}

// trimOpaqueTrailingSpaces: an opaque path followed by neither a query nor
// a fragment cannot end in spaces (the standard strips them). One followed
// by a query or fragment keeps them as they are, as Chromium does
// ("javascript:a ? b" reads "javascript:a ?%20b" in a.href; the standard
// would write the space before "?" as %20).
func trimOpaqueTrailingSpaces(u *URL) string {
	if u.HasQuery || u.HasFragment {
		return u.Opaque
	}
	return strings.TrimRight(u.Opaque, " ")
}

// shortenPath removes the last path segment (keeping a file URL's drive
// letter).
func (u *URL) shortenPath() {
	if u.Scheme == "file" && len(u.Path) == 1 && isWindowsDriveLetter(u.Path[0], true) {
		return
	}
	if len(u.Path) > 0 {
		u.Path = u.Path[:len(u.Path)-1]
	}
}

// prepare removes leading and trailing C0 controls and spaces, and every
// tab and newline.
func prepare(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// isWindowsDriveLetter reports "C:" or "C|" (normalized: "C:" only).
func isWindowsDriveLetter(s string, normalized bool) bool {
	if len(s) != 2 || !isASCIIAlpha(rune(s[0])) {
		return false
	}
	return s[1] == ':' || (!normalized && s[1] == '|')
}

func startsWithWindowsDriveLetter(in []rune) bool {
	if len(in) < 2 || !isASCIIAlpha(in[0]) || (in[1] != ':' && in[1] != '|') {
		return false
	}
	if len(in) == 2 {
		return true
	}
	switch in[2] {
	case '/', '\\', '?', '#':
		return true
	}
	return false
}

func isASCIIAlpha(c rune) bool        { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isASCIIDigit(c rune) bool        { return c >= '0' && c <= '9' }
func isASCIIAlphanumeric(c rune) bool { return isASCIIAlpha(c) || isASCIIDigit(c) }
func toLowerASCII(c rune) rune {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// percent-encode sets, as predicates on ASCII code points (every code
// point above U+007E is encoded by all of them).
type encodeSet func(r rune) bool

func c0ControlSet(r rune) bool { return r < 0x20 || r > 0x7e }
func fragmentSet(r rune) bool {
	return c0ControlSet(r) || r == ' ' || r == '"' || r == '<' || r == '>' || r == '`'
}
func querySet(r rune) bool {
	return c0ControlSet(r) || r == ' ' || r == '"' || r == '#' || r == '<' || r == '>'
}
func specialQuerySet(r rune) bool { return querySet(r) || r == '\'' }
func pathSet(r rune) bool {
	return querySet(r) || r == '?' || r == '^' || r == '`' || r == '{' || r == '}' || r == '|'
}
func userinfoSet(r rune) bool {
	return pathSet(r) || r == '/' || r == ':' || r == ';' || r == '=' || r == '@' || (r >= '[' && r <= ']') || r == '|'
}

// percentEncodeRune returns r, or its UTF-8 bytes percent-encoded when set
// contains it (upper-case hex digits, as browsers write them).
func percentEncodeRune(r rune, set encodeSet) string {
	if !set(r) {
		return string(r)
	}
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	var sb strings.Builder
	for _, x := range b[:n] {
		fmt.Fprintf(&sb, "%%%02X", x)
	}
	return sb.String()
}

// idnaProfile maps and converts international domain names the way the
// URL Standard's "domain to ASCII" does (UTS #46, non-transitional, no
// STD3 rules, no hyphen checks).
var idnaProfile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false),
	idna.CheckHyphens(false), idna.BidiRule(), idna.CheckJoiners(true), idna.VerifyDNSLength(false))

// parseHost is the standard's host parser. opaque is true for the host of
// a non-special URL.
func parseHost(s string, opaque bool) (string, error) {
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return "", errors.New("an IPv6 address without its closing bracket")
		}
		inner := s[1 : len(s)-1]
		if strings.ContainsAny(inner, "%") {
			return "", errors.New("an IPv6 address with a zone")
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return "", errors.New("an invalid IPv6 address")
		}
		return "[" + serializeIPv6(a) + "]", nil
	}
	if opaque {
		for _, r := range s {
			if forbiddenHostCodePoint(r) {
				return "", fmt.Errorf("the host contains %q", r)
			}
		}
		var b strings.Builder
		for _, r := range s {
			b.WriteString(percentEncodeRune(r, c0ControlSet))
		}
		return b.String(), nil
	}
	domain := percentDecode(s)
	if !utf8.ValidString(domain) {
		domain = strings.ToValidUTF8(domain, "\uFFFD")
	}
	ascii, err := domainToASCII(domain)
	if err != nil {
		return "", err
	}
	if endsInANumber(ascii) {
		v4, err := parseIPv4(ascii)
		if err != nil {
			return "", err
		}
		return v4, nil
	}
	return ascii, nil
}

// domainToASCII lower-cases an ASCII domain, or maps an international one
// to punycode; it refuses forbidden domain code points.
func domainToASCII(domain string) (string, error) {
	out := domain
	needIDNA := false
	for i := 0; i < len(domain); i++ {
		if domain[i] >= 0x80 {
			needIDNA = true
			break
		}
	}
	if !needIDNA {
		lower := strings.ToLower(domain)
		if strings.HasPrefix(lower, "xn--") || strings.Contains(lower, ".xn--") {
			needIDNA = true
		} else {
			out = lower
		}
	}
	if needIDNA {
		a, err := idnaProfile.ToASCII(domain)
		if err != nil {
			return "", fmt.Errorf("the host is not a valid domain name: %v", err)
		}
		out = a
	}
	if out == "" {
		return "", errors.New("an empty host")
	}
	escaped := false
	for _, r := range out {
		if r == ' ' || r == '*' {
			escaped = true // Chromium escapes these rather than failing
			continue
		}
		if forbiddenHostCodePoint(r) || r < 0x20 || r == '%' || r == 0x7f {
			return "", fmt.Errorf("the host contains %q", r)
		}
	}
	if escaped {
		out = strings.NewReplacer(" ", "%20", "*", "%2A").Replace(out)
	}
	return out, nil
}

func forbiddenHostCodePoint(r rune) bool {
	switch r {
	case 0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

// percentDecode decodes %XX sequences byte-wise, leaving malformed ones.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// endsInANumber reports whether the last label of a domain is a number,
// in which case the host must be an IPv4 address.
func endsInANumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, err := parseIPv4Number(last)
	return err == nil
}

// parseIPv4 parses the IPv4 forms browsers accept (1.2.3.4, 0x7f.1,
// 2130706433, 0177.0.0.1) and writes the dotted-decimal form.
func parseIPv4(s string) (string, error) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", errors.New("an IPv4 address with more than four parts")
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, err := parseIPv4Number(part)
		if err != nil {
			return "", err
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", errors.New("an IPv4 address part above 255")
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", errors.New("an IPv4 address out of range")
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return fmt.Sprintf("%d.%d.%d.%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v)), nil
}

// parseIPv4Number parses one part in decimal, octal (leading 0) or hex (0x).
func parseIPv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("an empty IPv4 part")
	}
	base := 10
	if len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s, base = s[2:], 16
	} else if len(s) >= 2 && s[0] == '0' {
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, errors.New("an IPv4 part that is not a number")
	}
	return n, nil
}

// serializeIPv6 writes an IPv6 address as the URL Standard does: lower-case
// hex pieces, the first longest run of two or more zero pieces as "::",
// and never a dotted IPv4 tail.
func serializeIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestStart, bestLen := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == bestStart {
			if i == 0 {
				sb.WriteString("::")
			} else {
				sb.WriteByte(':')
			}
			i += bestLen - 1
			continue
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i < 7 {
			sb.WriteByte(':')
		}
	}
	return sb.String()
}

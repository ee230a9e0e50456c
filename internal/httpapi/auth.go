package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// principal is who a request proved to be: the role of its token.
type principal struct {
	role natsutil.Role
	// tokenID is the named token's id (tokens.go); "" for a role file's.
	tokenID string
	// name is a browser session's name (session.go); "" for a token.
	name string
}

// tokenSet holds the digests of the roles' tokens, never the tokens.
type tokenSet struct {
	entries []tokenEntry
}

type tokenEntry struct {
	role natsutil.Role
	sum  [sha256.Size]byte
}

func newTokenSet(tokens map[natsutil.Role]string) (*tokenSet, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("httpapi: Config.Tokens is empty: no one could use the API")
	}
	t := &tokenSet{}
	seen := map[[sha256.Size]byte]natsutil.Role{}
	for _, r := range natsutil.TokenRoles {
		tok, ok := tokens[r]
		if !ok {
			continue
		}
		if !natsutil.ValidToken(tok) {
			return nil, fmt.Errorf("httpapi: the %s token is not a Vigil token (natsutil.NewToken makes them)", r)
		}
		sum := sha256.Sum256([]byte(tok))
		if other, dup := seen[sum]; dup {
			return nil, fmt.Errorf("httpapi: roles %s and %s have the same token; each role needs its own", other, r)
		}
		seen[sum] = r
		t.entries = append(t.entries, tokenEntry{role: r, sum: sum})
	}
	for r := range tokens {
		if !slices.Contains(natsutil.TokenRoles, r) {
			return nil, fmt.Errorf("httpapi: role %q has no HTTP rights; tokens are for %v", r, natsutil.TokenRoles)
		}
	}
	return t, nil
}

// lookup returns the role whose token tok is. It compares digests in
// constant time against every role, whichever matches, so the time taken
// says nothing about the token.
func (t *tokenSet) lookup(tok string) (natsutil.Role, bool) {
	sum := sha256.Sum256([]byte(tok))
	var role natsutil.Role
	found := 0
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			role = e.role
			found = 1
		}
	}
	return role, found == 1
}

// authenticate finds the request's role and checks it may use a route of
// roles.
func (s *Server) authenticate(r *http.Request, roles []natsutil.Role) (principal, *apiError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if p, e, ok := s.sessionAuth(r, roles); ok {
			return p, e
		}
		return principal{}, &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: roles,
			Message: "no token: send Authorization: Bearer <token> (DATA/creds/<role>.token, written by vigil serve)"}
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return principal{}, &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: roles,
			Message: "the Authorization header must be: Bearer <token>"}
	}
	who, e := s.lookupToken(strings.TrimSpace(tok), roles)
	if e != nil {
		return principal{}, e
	}
	role := who.role
	if !slices.Contains(roles, role) {
		return principal{}, &apiError{Status: http.StatusForbidden, reason: "forbidden", Needs: roles,
			Message: fmt.Sprintf("%s needs the %s role; this token is %s", r.Pattern, roleList(roles), role)}
	}
	return who, nil
}

func roleList(roles []natsutil.Role) string {
	s := make([]string, len(roles))
	for i, r := range roles {
		s[i] = string(r)
	}
	return strings.Join(s, " or ")
}

// maxNameLen bounds an approver's name.
const maxNameLen = 64

// HeaderApprover names the person behind an approver or admin token (the
// body's "approver" field, when given, wins). The name is a claim of the
// token holder; what the log records is that the verdict came over HTTP
// with that role's token.
const HeaderApprover = "Vigil-Approver"

// approverName returns who decides, as recorded: "http:<name>", or
// "http:<role>" when the request names no one. A browser session's name
// (given at login, or by the admin who paired the device) is who decides:
// a session cannot claim another name.
func approverName(r *http.Request, body string, who principal) (string, *apiError) {
	if who.name != "" {
		return "http:" + who.name, nil
	}
	name := body
	field := "approver"
	if name == "" {
		name, field = r.Header.Get(HeaderApprover), HeaderApprover
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return "http:" + string(who.role), nil
	}
	if !validName(name) {
		return "", &apiError{Status: http.StatusBadRequest, Field: field, reason: "bad_request",
			Message: fmt.Sprintf("%s: a name is 1-%d printable characters", field, maxNameLen)}
	}
	return "http:" + name, nil
}

func validName(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > maxNameLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

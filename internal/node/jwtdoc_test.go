package node

import (
	"os"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/notify"
)

// The block of docs/fleet.md that natsutil.JWTPermissionsDoc writes.
const (
	jwtDocBegin = "<!-- BEGIN generated: natsutil.JWTPermissionsDoc (go test ./internal/node -run TestJWTPermissionsDoc with VIGIL_UPDATE_JWT_DOC=1) -->\n"
	jwtDocEnd   = "<!-- END generated -->"
)

// TestJWTPermissionsDoc: the permissions docs/fleet.md gives each role
// on a NATS Vigil does not run are the embedded server's table
// (natsutil.Permissions), so the two cannot drift. VIGIL_UPDATE_JWT_DOC=1
// rewrites the block.
func TestJWTPermissionsDoc(t *testing.T) {
	const path = "../../docs/fleet.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	before, rest, ok := strings.Cut(doc, jwtDocBegin)
	if !ok {
		t.Fatalf("%s has no %q", path, strings.TrimSpace(jwtDocBegin))
	}
	got, after, ok := strings.Cut(rest, jwtDocEnd)
	if !ok {
		t.Fatalf("%s has no %q", path, jwtDocEnd)
	}
	want := natsutil.JWTPermissionsDoc("VIGIL", "vigil-a", "vigil-b", "vigil-c", notify.DefaultDurable)
	if got == want {
		return
	}
	if os.Getenv("VIGIL_UPDATE_JWT_DOC") != "" {
		if err := os.WriteFile(path, []byte(before+jwtDocBegin+want+jwtDocEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/fleet.md's role permissions differ from natsutil.Permissions; run with VIGIL_UPDATE_JWT_DOC=1 and review the diff.\ndoc:\n%s\nwant:\n%s", got, want)
}

package auditkey

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/internal/datadir"
)

func TestLoadOrCreate(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load(dir); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Load on an empty directory: %v, want ErrNoKey", err)
	}
	s, vkey, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Name(), "vigil-audit-") || !strings.HasPrefix(vkey, s.Name()+"+") {
		t.Fatalf("name %q, vkey %q", s.Name(), vkey)
	}
	for path, mode := range map[string]os.FileMode{datadir.New(dir).Audit(): 0o700, datadir.New(dir).Signer(): 0o600, datadir.New(dir).Verifier(): 0o644} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != mode {
			t.Fatalf("%s: %v mode %v, want %v", path, err, fi.Mode().Perm(), mode)
		}
	}
	// The same key comes back, and it signs what the verifier key checks.
	s2, vkey2, err := LoadOrCreate(dir)
	if err != nil || vkey2 != vkey || s2.KeyHash() != s.KeyHash() {
		t.Fatalf("second load: %v %q", err, vkey2)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: "hello\n"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Fatal(err)
	}
	if got, err := VerifierKey(dir); err != nil || got != vkey {
		t.Fatalf("VerifierKey = %q, %v", got, err)
	}
	// A lost verifier.key is rewritten from the signer key.
	os.Remove(datadir.New(dir).Verifier())
	if _, _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := VerifierKey(dir); got != vkey {
		t.Fatalf("rewritten verifier key %q", got)
	}
	// A signer key readable by others is refused.
	if err := os.Chmod(datadir.New(dir).Signer(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Load of a 0644 key: %v", err)
	}
}

func TestVerifierKeyOf(t *testing.T) {
	// Keys whose base64 holds '+' must parse too: try a few.
	for i := range 50 {
		skey, vkey, err := note.GenerateKey(nil, "k"+strings.Repeat("x", i%5))
		if err != nil {
			t.Fatal(err)
		}
		got, err := VerifierKeyOf(skey)
		if err != nil || got != vkey {
			t.Fatalf("VerifierKeyOf(%s) = %q, %v; want %q", skey, got, err, vkey)
		}
	}
	for _, bad := range []string{"", "PRIVATE+KEY+x", "PRIVATE+KEY+x+00000000+AAAA", "PUBLIC+KEY+x+00000000+AQ=="} {
		if _, err := VerifierKeyOf(bad); err == nil {
			t.Errorf("VerifierKeyOf(%q) accepted", bad)
		}
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	vkey, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, got, err := Load(dir)
	if err != nil || got != vkey {
		t.Fatalf("Load after Create: %q, %v; want %q", got, err, vkey)
	}
	if id := KeyID(vkey); id != SignerKeyID(s) || !strings.HasPrefix(id, "vigil-audit-") {
		t.Fatalf("KeyID %q, SignerKeyID %q", id, SignerKeyID(s))
	}
	before, _ := os.ReadFile(datadir.New(dir).Signer())
	if _, err := Create(dir); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second Create: %v, want ErrKeyExists", err)
	}
	after, _ := os.ReadFile(datadir.New(dir).Signer())
	if string(after) != string(before) {
		t.Fatal("Create replaced an existing key")
	}
	// --out: a file anywhere, never overwritten either.
	out := dir + "/fleet.key"
	v2, err := CreateFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if v2 == vkey {
		t.Fatal("two keys alike")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", out, err, fi.Mode().Perm())
	}
	if _, err := CreateFile(out); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("CreateFile on an existing file: %v", err)
	}
	// The file works as a node's key once installed.
	d2 := t.TempDir()
	if err := os.MkdirAll(datadir.New(d2).Audit(), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if err := os.WriteFile(datadir.New(d2).Signer(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, got, err := Load(d2); err != nil || got != v2 {
		t.Fatalf("installed key: %q, %v; want %q", got, err, v2)
	}
}

func TestNoteSigners(t *testing.T) {
	dir := t.TempDir()
	s, vkey, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: "vigil\n1\nAAAA\n"}, s)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := NoteSigners(string(msg))
	if err != nil || len(ids) != 1 || ids[0] != KeyID(vkey) {
		t.Fatalf("NoteSigners = %q, %v; want [%s]", ids, err, KeyID(vkey))
	}
	for _, bad := range []string{"", "text\n", "vigil\n1\n\nno signature line\n"} {
		if _, err := NoteSigners(bad); err == nil {
			t.Errorf("NoteSigners(%q) = nil error", bad)
		}
	}
}

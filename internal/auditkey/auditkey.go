// Package auditkey keeps the audit processor's Ed25519 signing key in the
// data directory. It is the only code that reads or writes the key, so the
// audit processor itself stays free of I/O.
//
// Layout, in DIR/audit (mode 0700):
//
//	signer.key    the private key, golang.org/x/mod/sumdb/note signer-key
//	              text ("PRIVATE+KEY+<name>+<hash>+<base64>"), mode 0600
//	verifier.key  the public verifier key ("<name>+<hash>+<base64>"), 0644:
//	              what `vigil audit verify` trusts by default and what
//	              `vigil audit key` prints, to hand to auditors
//
// A fleet shares one key: copy DIR/audit/signer.key to every node before
// its first start, so every node signs the same checkpoints and JetStream
// deduplicates them by id (see docs/audit.md).
package auditkey

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// File names inside the data directory.
const (
	DirName      = "audit"
	SignerFile   = "signer.key"
	VerifierFile = "verifier.key"
)

// ErrNoKey means the data directory has no audit key yet.
var ErrNoKey = errors.New("auditkey: no audit key")

// Dir is DIR/audit.
func Dir(dataDir string) string { return filepath.Join(dataDir, DirName) }

// SignerPath is the private key's file.
func SignerPath(dataDir string) string { return filepath.Join(Dir(dataDir), SignerFile) }

// VerifierPath is the public key's file.
func VerifierPath(dataDir string) string { return filepath.Join(Dir(dataDir), VerifierFile) }

// LoadOrCreate returns the data directory's audit signer and its verifier
// key, generating a new key (named "vigil-audit-<8 hex digits>") on first
// use. `vigil serve` calls it before building the audit processor.
func LoadOrCreate(dataDir string) (note.Signer, string, error) {
	s, vkey, err := Load(dataDir)
	if !errors.Is(err, ErrNoKey) {
		return s, vkey, err
	}
	dir := Dir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("auditkey: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("auditkey: chmod %s: %w", dir, err)
	}
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, "", err
	}
	skey, _, err := note.GenerateKey(rand.Reader, "vigil-audit-"+hex.EncodeToString(id[:]))
	if err != nil {
		return nil, "", fmt.Errorf("auditkey: generate: %w", err)
	}
	if err := natsutil.WriteFileAtomic(SignerPath(dataDir), []byte(skey+"\n"), 0o600); err != nil {
		return nil, "", fmt.Errorf("auditkey: write %s: %w", SignerPath(dataDir), err)
	}
	return Load(dataDir)
}

// Load returns the audit signer and verifier key without creating one
// (replay and tools). It refuses a signer key readable by others, and
// rewrites verifier.key when it is missing or does not match.
func Load(dataDir string) (note.Signer, string, error) {
	path := SignerPath(dataDir)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%w in %s (vigil serve creates one)", ErrNoKey, Dir(dataDir))
	}
	if err != nil {
		return nil, "", fmt.Errorf("auditkey: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, "", fmt.Errorf("auditkey: %s has mode %04o, readable by others: run chmod 600 %s (and consider the key exposed)", path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("auditkey: %w", err)
	}
	skey := string(bytes.TrimSpace(b))
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", fmt.Errorf("auditkey: %s is not a note signer key: %w", path, err)
	}
	vkey, err := VerifierKeyOf(skey)
	if err != nil {
		return nil, "", fmt.Errorf("auditkey: %s: %w", path, err)
	}
	vpath := VerifierPath(dataDir)
	if cur, err := os.ReadFile(vpath); err != nil || strings.TrimSpace(string(cur)) != vkey {
		if err := natsutil.WriteFileAtomic(vpath, []byte(vkey+"\n"), 0o644); err != nil {
			return nil, "", fmt.Errorf("auditkey: write %s: %w", vpath, err)
		}
	}
	return s, vkey, nil
}

// VerifierKey reads DIR/audit/verifier.key (public; no server needed).
func VerifierKey(dataDir string) (string, error) {
	b, err := os.ReadFile(VerifierPath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no %s (pass --pubkey, or --data of the server's data directory)", ErrNoKey, VerifierPath(dataDir))
	}
	if err != nil {
		return "", fmt.Errorf("auditkey: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// VerifierKeyOf derives the verifier key of a note signer key.
func VerifierKeyOf(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("not a PRIVATE+KEY+name+hash+key signer key")
	}
	name := parts[2]
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("not an Ed25519 signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(name, pub)
	if err != nil {
		return "", err
	}
	if h := strings.SplitN(vkey, "+", 3)[1]; h != parts[3] {
		return "", fmt.Errorf("key hash %s does not match the key (%s)", parts[3], strconv.Quote(h))
	}
	return vkey, nil
}

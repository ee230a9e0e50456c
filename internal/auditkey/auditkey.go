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
// A fleet shares one key: make it once (`vigil audit key create`, Create
// or CreateFile) and copy it to DIR/audit/signer.key of every node before
// its first start, so every node signs the same checkpoints and JetStream
// deduplicates them by id; a fleet node refuses to start with another key
// than the fleet's (internal/node, docs/fleet.md). KeyID and NoteSigners
// name keys for that comparison.
//
// On the data path: assembly: the key the audit fold (out of the log)
// signs its checkpoints with.
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

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// ErrNoKey means the data directory has no audit key yet.
var ErrNoKey = errors.New("auditkey: no audit key")

// ErrKeyExists means Create found a key where it would write one: an
// audit key is never overwritten (checkpoints signed with it would no
// longer verify with the key the node holds).
var ErrKeyExists = errors.New("auditkey: an audit key exists already")

// LoadOrCreate returns the data directory's audit signer and its verifier
// key, generating a new key (named "vigil-audit-<8 hex digits>") on first
// use. `vigil serve` calls it before building the audit processor.
func LoadOrCreate(dataDir string) (note.Signer, string, error) {
	s, vkey, err := Load(dataDir)
	if !errors.Is(err, ErrNoKey) {
		return s, vkey, err
	}
	dir := datadir.New(dataDir).Audit()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("auditkey: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("auditkey: chmod %s: %w", dir, err)
	}
	skey, err := generate()
	if err != nil {
		return nil, "", err
	}
	if err := natsutil.WriteFileAtomic(datadir.New(dataDir).Signer(), []byte(skey+"\n"), 0o600); err != nil {
		return nil, "", fmt.Errorf("auditkey: write %s: %w", datadir.New(dataDir).Signer(), err)
	}
	return Load(dataDir)
}

// generate makes a new signer key named "vigil-audit-<8 hex digits>".
func generate() (string, error) {
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	skey, _, err := note.GenerateKey(rand.Reader, "vigil-audit-"+hex.EncodeToString(id[:]))
	if err != nil {
		return "", fmt.Errorf("auditkey: generate: %w", err)
	}
	return skey, nil
}

// Create writes a new audit key into the data directory, where `vigil
// serve` looks for it (DIR/audit/signer.key and verifier.key), and
// returns its verifier key. It never overwrites: a key already there
// fails with ErrKeyExists. `vigil audit key create` calls it.
func Create(dataDir string) (string, error) {
	dir := datadir.New(dataDir).Audit()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("auditkey: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("auditkey: chmod %s: %w", dir, err)
	}
	vkey, err := CreateFile(datadir.New(dataDir).Signer())
	if err != nil {
		return "", err
	}
	if _, _, err := Load(dataDir); err != nil { // writes verifier.key
		return "", err
	}
	return vkey, nil
}

// CreateFile writes a new signer key to path (mode 0600; the directory
// must exist) and returns its verifier key. An existing file fails with
// ErrKeyExists. A node uses the file once it is installed as
// DIR/audit/signer.key.
func CreateFile(path string) (string, error) {
	skey, err := generate()
	if err != nil {
		return "", err
	}
	vkey, err := VerifierKeyOf(skey)
	if err != nil {
		return "", err
	}
	if err := writeNew(path, []byte(skey+"\n"), 0o600); err != nil {
		return "", err
	}
	return vkey, nil
}

// writeNew writes data to path through a synced temporary file linked
// into place, so it fails (ErrKeyExists) rather than replace a file,
// even one created meanwhile.
func writeNew(path string, data []byte, mode os.FileMode) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%w: %s (move it away first if you mean to replace it; checkpoints signed with it then verify only with its verifier key)", ErrKeyExists, path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-key-*")
	if err != nil {
		return fmt.Errorf("auditkey: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("auditkey: write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("auditkey: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("auditkey: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auditkey: write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrKeyExists, path)
		}
		return fmt.Errorf("auditkey: write %s: %w", path, err)
	}
	return nil
}

// KeyID is the identity of a verifier key: "<name>+<hash>" (the key
// name and the 8 hex digits of its key hash), what a signed note's
// signature line names. Anything else is returned as it is.
func KeyID(vkey string) string {
	name, rest, ok := strings.Cut(vkey, "+")
	if !ok {
		return vkey
	}
	hash, _, _ := strings.Cut(rest, "+")
	return name + "+" + hash
}

// SignerKeyID is KeyID of a signer's verifier key.
func SignerKeyID(s note.Signer) string { return fmt.Sprintf("%s+%08x", s.Name(), s.KeyHash()) }

// NoteSigners returns the key ids (see KeyID) of the signatures on a
// signed note, without verifying them: what a node compares its own key
// with before it signs alongside the others.
func NoteSigners(msg string) ([]string, error) {
	_, err := note.Open([]byte(msg), note.VerifierList())
	var unv *note.UnverifiedNoteError
	if !errors.As(err, &unv) {
		if err == nil {
			err = errors.New("no signature")
		}
		return nil, fmt.Errorf("auditkey: not a signed note: %w", err)
	}
	ids := make([]string, 0, len(unv.Note.UnverifiedSigs))
	for _, sig := range unv.Note.UnverifiedSigs {
		ids = append(ids, fmt.Sprintf("%s+%08x", sig.Name, sig.Hash))
	}
	return ids, nil
}

// Load returns the audit signer and verifier key without creating one
// (replay and tools). It refuses a signer key readable by others, and
// rewrites verifier.key when it is missing or does not match.
func Load(dataDir string) (note.Signer, string, error) {
	path := datadir.New(dataDir).Signer()
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%w in %s (vigil serve or vigil audit key create makes one)", ErrNoKey, datadir.New(dataDir).Audit())
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
	vpath := datadir.New(dataDir).Verifier()
	if cur, err := os.ReadFile(vpath); err != nil || strings.TrimSpace(string(cur)) != vkey {
		if err := natsutil.WriteFileAtomic(vpath, []byte(vkey+"\n"), 0o644); err != nil {
			return nil, "", fmt.Errorf("auditkey: write %s: %w", vpath, err)
		}
	}
	return s, vkey, nil
}

// VerifierKey reads DIR/audit/verifier.key (public; no server needed).
func VerifierKey(dataDir string) (string, error) {
	b, err := os.ReadFile(datadir.New(dataDir).Verifier())
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no %s (pass --pubkey, or --data of the server's data directory)", ErrNoKey, datadir.New(dataDir).Verifier())
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

package natsutil

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-dev/vigil/internal/datadir"
)

// HTTP API tokens. Each role that people and agents use over HTTP has one
// bearer token, generated beside the role's nkey seed (mode 0600) and kept
// across restarts; a fleet shares them with the creds directory. The HTTP
// API gives a token exactly the rights of its role's NATS credential.

// TokenRoles are the roles that have an HTTP token (the service role is the
// node itself and has none).
var TokenRoles = []Role{RoleAgent, RoleRuntime, RoleApprover, RoleAdmin}

// TokenPrefix starts every token, so a leaked one is recognisable (and
// secret scanners can find it).
const TokenPrefix = "vigil_"

// tokenBytes is the entropy of a token: 256 bits.
const tokenBytes = 32

// NewToken returns a fresh random token.
func NewToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("natsutil: token: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidToken reports whether s has the form of a token NewToken makes.
func ValidToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// EnsureTokens creates a token for every role of TokenRoles in dir (mode
// 0600, directory 0700) if missing, and returns each role's token.
// Existing tokens are kept; a file that does not hold a token is an error
// (delete it to get a new one).
func EnsureTokens(dir string) (map[Role]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsutil: create %s: %w", dir, err)
	}
	out := make(map[Role]string, len(TokenRoles))
	for _, r := range TokenRoles {
		path := datadir.CredsAt(dir).Token(r)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			tok, terr := NewToken()
			if terr != nil {
				return nil, terr
			}
			created, cerr := createFile(path, []byte(tok+"\n"), 0o600)
			if cerr != nil {
				return nil, cerr
			}
			if created {
				out[r] = tok
				continue
			}
			// Another node of a fleet sharing dir made it first: use its.
			b, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("natsutil: read %s: %w", path, err)
		}
		tok := string(bytes.TrimSpace(b))
		if !ValidToken(tok) {
			return nil, fmt.Errorf("natsutil: %s does not hold a Vigil token (delete it to generate a new one)", path)
		}
		out[r] = tok
	}
	return out, nil
}

// ReadToken reads a role's token from a credentials directory.
func ReadToken(credsDir string, r Role) (string, error) {
	path := datadir.CredsAt(credsDir).Token(r)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token %s: %w (vigil serve creates it)", path, err)
	}
	tok := string(bytes.TrimSpace(b))
	if !ValidToken(tok) {
		return "", fmt.Errorf("%s does not hold a Vigil token", path)
	}
	return tok, nil
}

// createFile writes data to path, complete and synced, only if path does
// not exist: it reports false, writing nothing, when it does (nodes of a
// fleet starting together on one creds directory agree on one file).
func createFile(path string, data []byte, mode os.FileMode) (bool, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return false, fmt.Errorf("natsutil: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	// A hard link, unlike a rename, never replaces an existing file.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("natsutil: write %s: %w", path, err)
	}
	return true, nil
}

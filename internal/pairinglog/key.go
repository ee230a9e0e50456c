// Package pairinglog runs device pairing against a live log: the pairing
// key that keys the hashes in pairing events, the codes and secrets a
// browser gets, a Reader that folds the pairing events of VIGIL_LOG with
// processors/pairing (the same fold the node's pipeline runs, so the
// HTTP API and `vigil pairing` see what the processor sees), and the
// Timer that appends the time-based outcomes: a code's expiry after
// pairing.CodeTTL and the end of a lockout after pairing.LockoutFor.
//
// On the data path: a use case shared by the CLI and the HTTP API (into
// the log and out of it), and a timer that speaks to the pairing fold
// through the log.
package pairinglog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// ErrNoKey means a credentials directory holds no pairing key.
var ErrNoKey = errors.New("pairinglog: no pairing key")

// LoadKey reads the pairing key of credsDir (hex, mode 0600).
func LoadKey(credsDir string) ([]byte, error) {
	key, err := LoadKeyFile(datadir.CredsAt(credsDir).PairingKey())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s (vigil serve with --http-listen creates it; approve on the node's host with --data DIR)", ErrNoKey, credsDir)
	}
	return key, err
}

// LoadKeyFile reads a pairing key file (hex); a missing file's error
// wraps fs.ErrNotExist.
func LoadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pairinglog: read the pairing key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != pairing.KeyLen {
		return nil, fmt.Errorf("pairinglog: %s is not a pairing key (%d hex bytes)", path, pairing.KeyLen)
	}
	return key, nil
}

// LoadOrCreateKey returns the pairing key of credsDir, creating a random
// one (mode 0600) on first use.
func LoadOrCreateKey(credsDir string) ([]byte, error) {
	key, err := LoadKey(credsDir)
	if !errors.Is(err, ErrNoKey) {
		return key, err
	}
	if err := os.MkdirAll(credsDir, 0o700); err != nil {
		return nil, fmt.Errorf("pairinglog: %w", err)
	}
	key = make([]byte, pairing.KeyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("pairinglog: %w", err)
	}
	// Write the key in full under a temporary name, then link it into
	// place: the link fails when another process got there first, so a
	// reader never sees a half-written key and two processes never hold
	// different keys.
	path := datadir.CredsAt(credsDir).PairingKey()
	tmp, err := os.CreateTemp(credsDir, ".pairing-key-*")
	if err != nil {
		return nil, fmt.Errorf("pairinglog: create the pairing key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("pairinglog: create the pairing key: %w", err)
	}
	if _, err := tmp.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("pairinglog: write the pairing key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("pairinglog: write the pairing key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("pairinglog: write the pairing key: %w", err)
	}
	err = os.Link(tmp.Name(), path)
	if errors.Is(err, fs.ErrExist) {
		// Another process made it first: use theirs.
		return LoadKey(credsDir)
	}
	if err != nil {
		return nil, fmt.Errorf("pairinglog: create the pairing key: %w", err)
	}
	return key, nil
}

// NewCode returns a random code: pairing.CodeLen characters of
// pairing.Alphabet from crypto/rand (40 bits; 32 divides 256, so every
// character is uniform).
func NewCode() (string, error) {
	b := make([]byte, pairing.CodeLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pairinglog: %w", err)
	}
	for i := range b {
		b[i] = pairing.Alphabet[int(b[i])%len(pairing.Alphabet)]
	}
	return string(b), nil
}

// NewSecret returns a browser's claim secret: 256 random bits, hex.
func NewSecret() (string, error) { return randomHex(32) }

// NewRequestID returns a request id: "web-" and 64 random bits, hex.
func NewRequestID() (string, error) {
	h, err := randomHex(8)
	if err != nil {
		return "", err
	}
	return pairing.PlatformWeb + "-" + h, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pairinglog: %w", err)
	}
	return hex.EncodeToString(b), nil
}

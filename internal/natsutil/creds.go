package natsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
)

// Role is a NATS identity with a fixed set of permissions (events.Role:
// the public API names roles without importing this package).
type Role = events.Role

// Roles: see events.Role.
const (
	RoleAgent    = events.RoleAgent
	RoleRuntime  = events.RoleRuntime
	RoleApprover = events.RoleApprover
	RoleAdmin    = events.RoleAdmin
	RoleService  = events.RoleService
)

// Roles lists every role, in the order credentials are generated.
var Roles = []Role{RoleAgent, RoleRuntime, RoleApprover, RoleAdmin, RoleService}

// EnsureCreds creates an nkey user seed for every role in dir (mode 0600,
// directory 0700) if missing, and returns each role's public key. Existing
// seeds are kept, so credentials survive restarts; a fleet shares one dir's
// seeds across nodes.
func EnsureCreds(dir string) (map[Role]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsutil: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsutil: chmod %s: %w", dir, err)
	}
	pubs := make(map[Role]string, len(Roles))
	for _, r := range Roles {
		path := datadir.CredsAt(dir).Seed(r)
		seed, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			kp, err := nkeys.CreateUser()
			if err != nil {
				return nil, fmt.Errorf("natsutil: create %s key: %w", r, err)
			}
			seed, err = kp.Seed()
			if err != nil {
				return nil, err
			}
			if err := writeFileAtomic(path, append(seed, '\n'), 0o600); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, fmt.Errorf("natsutil: read %s: %w", path, err)
		}
		kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
		if err != nil {
			return nil, fmt.Errorf("natsutil: %s is not an nkey seed (delete it to generate a new one): %w", path, err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, err
		}
		pubs[r] = pub
	}
	return pubs, nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("natsutil: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteFileAtomic writes data to path through a synced temporary file.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return writeFileAtomic(path, data, mode)
}

// CredsOption returns the nats.Option that authenticates with a credentials
// file (transport.CredsOption).
func CredsOption(path string) (nats.Option, error) { return transport.CredsOption(path) }

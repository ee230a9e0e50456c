package audit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a tree head in the C2SP tlog-checkpoint shape
// (https://c2sp.org/tlog-checkpoint), carried in a signed note
// (golang.org/x/mod/sumdb/note, the format of Go's checksum database):
//
//	<origin>
//	<tree size, decimal>
//	<root hash, standard base64>
//
//	— <key name> <base64 signature>
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   Hash
	// Note is the whole signed note.
	Note string
}

// CheckpointText is the text a checkpoint signs.
func CheckpointText(origin string, size uint64, root Hash) string {
	return origin + "\n" + strconv.FormatUint(size, 10) + "\n" + root.String() + "\n"
}

// SignCheckpoint returns the signed note of a tree head. Ed25519 signatures
// are deterministic (RFC 8032), so the same head and key always give the
// same note: replay reproduces checkpoints byte for byte.
func SignCheckpoint(s note.Signer, origin string, size uint64, root Hash) (string, error) {
	b, err := note.Sign(&note.Note{Text: CheckpointText(origin, size, root)}, s)
	if err != nil {
		return "", fmt.Errorf("audit: sign checkpoint %d: %w", size, err)
	}
	return string(b), nil
}

// ErrUnknownKey means a checkpoint is not signed by any trusted key.
var ErrUnknownKey = errors.New("audit: checkpoint not signed by a trusted key")

// OpenCheckpoint checks msg's signature with verifiers and parses its text.
// An error wrapping ErrUnknownKey means no trusted key signed it; it then
// names the keys that did.
func OpenCheckpoint(msg string, verifiers note.Verifiers) (Checkpoint, error) {
	n, err := note.Open([]byte(msg), verifiers)
	if err != nil {
		var unv *note.UnverifiedNoteError
		if errors.As(err, &unv) {
			var names []string
			for _, s := range unv.Note.UnverifiedSigs {
				names = append(names, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
			}
			return Checkpoint{}, fmt.Errorf("%w (signed by %s)", ErrUnknownKey, strings.Join(names, ", "))
		}
		return Checkpoint{}, fmt.Errorf("audit: checkpoint signature: %w", err)
	}
	c, err := ParseCheckpointText(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	c.Note = msg
	return c, nil
}

// ParseCheckpointText parses the signed text of a checkpoint. Extension
// lines after the root are allowed and ignored.
func ParseCheckpointText(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, errors.New("audit: checkpoint text needs an origin, a size and a root hash line")
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || (len(lines[1]) > 1 && lines[1][0] == '0') {
		return Checkpoint{}, fmt.Errorf("audit: checkpoint size %q is not a decimal number", clip(lines[1], 30))
	}
	root, err := ParseHash(lines[2])
	if err != nil {
		return Checkpoint{}, fmt.Errorf("audit: checkpoint root: %w", err)
	}
	return Checkpoint{Origin: lines[0], Size: size, Root: root}, nil
}

// NewVerifiers returns the verifiers of the given verifier keys (the
// "name+hash+base64" strings of golang.org/x/mod/sumdb/note).
func NewVerifiers(vkeys ...string) (note.Verifiers, error) {
	if len(vkeys) == 0 {
		return nil, errors.New("audit: no verifier key")
	}
	vs := make([]note.Verifier, 0, len(vkeys))
	for _, k := range vkeys {
		v, err := note.NewVerifier(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("audit: verifier key %q: %w (want name+hash+base64, as `vigil audit key` prints it)", clip(strings.TrimSpace(k), 80), err)
		}
		vs = append(vs, v)
	}
	return note.VerifierList(vs...), nil
}

// PeekCheckpoint parses a signed note's checkpoint WITHOUT checking its
// signature: for choosing a checkpoint when no key is at hand. Never trust
// its result; OpenCheckpoint is the check.
func PeekCheckpoint(msg string) (Checkpoint, error) {
	text, _, ok := strings.Cut(msg, "\n\n")
	if !ok {
		return Checkpoint{}, errors.New("audit: not a signed note (no blank line before the signatures)")
	}
	c, err := ParseCheckpointText(text + "\n")
	if err != nil {
		return Checkpoint{}, err
	}
	c.Note = msg
	return c, nil
}

package pairing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Alphabet is the 32 characters a code is made of: A-Z and 2-9 without
// the ambiguous 0, O, 1 and I.
const Alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// KeyLen is the length of a pairing key.
const KeyLen = 32

// HashPrefix starts every keyed hash in a pairing event.
const HashPrefix = "hmac-sha256:"

// ErrBadCode is returned by NormalizeCode for text that cannot be a code.
var ErrBadCode = errors.New("pairing: not a pairing code")

// NormalizeCode turns what a person typed into a code: case, spaces and
// dashes do not matter. It fails (ErrBadCode) unless CodeLen characters
// of Alphabet remain.
func NormalizeCode(s string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r < 128 && strings.IndexByte(Alphabet, byte(r)) >= 0:
			b.WriteRune(r)
		default:
			return "", fmt.Errorf("%w: %q is not one of %s (codes have no 0, O, 1 or I)", ErrBadCode, r, Alphabet)
		}
	}
	if b.Len() != CodeLen {
		return "", fmt.Errorf("%w: %d characters of %s, want %d", ErrBadCode, b.Len(), Alphabet, CodeLen)
	}
	return b.String(), nil
}

// keyed is HMAC-SHA256 under key of a domain-separated value.
func keyed(key []byte, domain, v string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("vigil-pairing\x00" + domain + "\x00"))
	m.Write([]byte(v))
	return HashPrefix + hex.EncodeToString(m.Sum(nil))
}

// HashCode is the keyed hash of a code (NormalizeCode's form) that pairing
// events carry instead of the code.
func HashCode(key []byte, code string) string { return keyed(key, "code", code) }

// HashClaim is the keyed hash of the secret a browser keeps to claim its
// approved pairing: only the holder of the secret gets the session.
func HashClaim(key []byte, secret string) string { return keyed(key, "claim", secret) }

// HashClient is the keyed hash of a client's address: the rate limit
// counts per client without the log holding addresses.
func HashClient(key []byte, addr string) string { return keyed(key, "client", addr) }

// FormatCode shows a code in two groups of four ("ABCD-EFGH").
func FormatCode(code string) string {
	if len(code) != CodeLen {
		return code
	}
	return code[:4] + "-" + code[4:]
}

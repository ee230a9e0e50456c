package transport

import (
	"bytes"
	"crypto/sha512"
	"errors"
	"fmt"
	"os"

	"filippo.io/edwards25519"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Ed25519 for a short process. crypto/ed25519 multiplies by the base point
// with a table it computes on first use (256 field inversions), which is
// most of what a client that signs one nonce and exits spends on its key.
// The functions here compute the same RFC 8032 keys and signatures with
// edwards25519's constant-time variable-base multiplication by the
// generator, which builds an 8-entry table per call and inverts nothing.

// ed25519Public is the Ed25519 public key of a 32-byte seed, as
// crypto/ed25519.NewKeyFromSeed(seed).Public() has it.
func ed25519Public(seed []byte) ([]byte, error) {
	s, prefix, err := ed25519Expand(seed)
	if err != nil {
		return nil, err
	}
	clear(prefix)
	return new(edwards25519.Point).ScalarMult(s, edwards25519.NewGeneratorPoint()).Bytes(), nil
}

// ed25519Sign is the Ed25519 signature of msg by the key of a 32-byte seed
// whose public key is pub (ed25519Public(seed)), as
// crypto/ed25519.Sign(crypto/ed25519.NewKeyFromSeed(seed), msg) has it. A
// pub of another seed makes a signature that verifies under neither key.
func ed25519Sign(seed, pub, msg []byte) ([]byte, error) {
	s, prefix, err := ed25519Expand(seed)
	if err != nil {
		return nil, err
	}
	defer clear(prefix)
	h := sha512.New()
	h.Write(prefix)
	h.Write(msg)
	r, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	sig := new(edwards25519.Point).ScalarMult(r, edwards25519.NewGeneratorPoint()).Bytes()
	h.Reset()
	h.Write(sig)
	h.Write(pub)
	h.Write(msg)
	k, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return append(sig, edwards25519.NewScalar().MultiplyAdd(k, s, r).Bytes()...), nil
}

// ed25519Expand is RFC 8032's secret scalar and nonce prefix of a seed.
func ed25519Expand(seed []byte) (*edwards25519.Scalar, []byte, error) {
	if len(seed) != 32 {
		return nil, nil, fmt.Errorf("ed25519: seed of %d bytes, not 32", len(seed))
	}
	h := sha512.Sum512(seed)
	defer clear(h[:32])
	s, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		return nil, nil, err
	}
	return s, h[32:], nil
}

// errNotUserSeed is a seed file whose seed is not a user's.
var errNotUserSeed = errors.New("nats: Not a valid nkey user seed")

// nkeyUserSeed reads the raw Ed25519 seed of the nkey user seed in file
// path, as nats.go's NkeyOptionFromSeed parses it (nkeys'
// ParseDecoratedNKey), and wipes the file's bytes. With b non-nil, b is
// the file's content, already read (and wiped here too).
func nkeyUserSeed(path string, b []byte) ([]byte, error) {
	prefix, raw, err := nkeySeed(path, b)
	if err != nil {
		return nil, err
	}
	if prefix != nkeys.PrefixByteUser {
		clear(raw)
		return nil, errNotUserSeed
	}
	return raw, nil
}

// nkeySeed reads the prefix and raw Ed25519 seed of the nkey seed (an
// operator's, an account's or a user's) in file path, a bare seed or a
// .creds file, as nats.go reads it to sign (nkeys' ParseDecoratedNKey),
// and wipes the file's bytes. With b non-nil, b is the file's content,
// already read (and wiped here too).
func nkeySeed(path string, b []byte) (nkeys.PrefixByte, []byte, error) {
	if b == nil {
		var err error
		if b, err = os.ReadFile(path); err != nil {
			return 0, nil, fmt.Errorf("nats: %w", err)
		}
	}
	defer clear(b)
	return decodeSeedFile(b)
}

// decodeSeedFile is nkeys.DecodeSeed of the seed nkeys.ParseDecoratedNKey
// finds in a seed file's content b: the same prefix, seed and errors.
// ParseDecoratedNKey first looks for decorated blocks (a .creds file)
// with a pattern that needs "---", and otherwise takes the first line
// that starts, blanks trimmed, with a seed's prefix; a bare seed file, as
// `vigil serve` writes them, is read here that second way without the
// pattern (matching it costs a process that signs once about as much as
// reading the file).
func decodeSeedFile(b []byte) (nkeys.PrefixByte, []byte, error) {
	if bytes.Contains(b, []byte("---")) {
		kp, err := nkeys.ParseDecoratedNKey(b)
		if err != nil {
			return 0, nil, err
		}
		defer kp.Wipe()
		enc, err := kp.Seed()
		if err != nil {
			return 0, nil, err
		}
		return nkeys.DecodeSeed(enc)
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if !seedPrefixed(bytes.TrimSpace(line)) {
			continue
		}
		if !seedPrefixed(line) {
			return 0, nil, nkeys.ErrInvalidNkeySeed
		}
		return nkeys.DecodeSeed(line)
	}
	return 0, nil, nkeys.ErrNoSeedFound
}

// seedPrefixed reports whether b starts as an operator's, an account's or
// a user's seed does.
func seedPrefixed(b []byte) bool {
	return bytes.HasPrefix(b, []byte("SO")) || bytes.HasPrefix(b, []byte("SA")) || bytes.HasPrefix(b, []byte("SU"))
}

// nkeySeedOption is nats.NkeyOptionFromSeed(path), signing with
// ed25519Sign: the user's public key from the seed file (b, its content
// already read and wiped here, or nil to read it), and a signature
// callback that reads the seed again for each nonce and keeps it no longer
// than it signs. The signature is made for the public key announced: a
// seed file replaced in between signs a nonce that the server refuses, as
// it refuses nats.go's signature by the new key for the old key.
func nkeySeedOption(path string, b []byte) (nats.Option, error) {
	raw, err := nkeyUserSeed(path, b)
	if err != nil {
		return nil, err
	}
	pub, err := ed25519Public(raw)
	clear(raw)
	if err != nil {
		return nil, err
	}
	enc, err := nkeys.Encode(nkeys.PrefixByteUser, pub)
	if err != nil {
		return nil, err
	}
	return nats.Nkey(string(enc), func(nonce []byte) ([]byte, error) {
		raw, err := nkeyUserSeed(path, nil)
		if err != nil {
			return nil, fmt.Errorf("unable to extract key pair from file %q: %w", path, err)
		}
		defer clear(raw)
		return ed25519Sign(raw, pub, nonce)
	}), nil
}

// credsFileOption is nats.UserCredentials(path) (the JWT read from the
// .creds file as nats.go reads it), signing the nonce with ed25519Sign by
// the seed in the same file, read again for each nonce.
func credsFileOption(path string) nats.Option {
	creds := nats.UserCredentials(path)
	return func(o *nats.Options) error {
		if err := creds(o); err != nil {
			return err
		}
		o.SignatureCB = func(nonce []byte) ([]byte, error) {
			_, raw, err := nkeySeed(path, nil)
			if err != nil {
				return nil, fmt.Errorf("unable to extract key pair from file %q: %w", path, err)
			}
			defer clear(raw)
			pub, err := ed25519Public(raw)
			if err != nil {
				return nil, err
			}
			return ed25519Sign(raw, pub, nonce)
		}
		return nil
	}
}

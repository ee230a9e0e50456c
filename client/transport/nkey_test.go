package transport

import (
	"bytes"
	"crypto/ed25519"
	"crypto/fips140"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// checkEd25519 fails t unless ed25519Public and ed25519Sign give what
// crypto/ed25519 gives for seed and msg.
func checkEd25519(t *testing.T, seed, msg []byte) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(seed)
	pub, err := ed25519Public(seed)
	if err != nil {
		t.Fatal(err)
	}
	if want := priv.Public().(ed25519.PublicKey); !bytes.Equal(pub, want) {
		t.Fatalf("seed %x: public key %x, crypto/ed25519 %x", seed, pub, want)
	}
	sig, err := ed25519Sign(seed, pub, msg)
	if err != nil {
		t.Fatal(err)
	}
	if want := ed25519.Sign(priv, msg); !bytes.Equal(sig, want) {
		t.Fatalf("seed %x, message %x: signature %x, crypto/ed25519 %x", seed, msg, sig, want)
	}
}

func TestEd25519MatchesStdlib(t *testing.T) {
	for i := range 200 {
		seed := make([]byte, ed25519.SeedSize)
		msg := make([]byte, i*7%300)
		rand.Read(seed)
		rand.Read(msg)
		checkEd25519(t, seed, msg)
	}
	// RFC 8032, 7.1, TEST 2.
	seed := []byte{0x4c, 0xcd, 0x08, 0x9b, 0x28, 0xff, 0x96, 0xda, 0x9d, 0xb6, 0xc3, 0x46, 0xec, 0x11, 0x4e, 0x0f,
		0x5b, 0x8a, 0x31, 0x9f, 0x35, 0xab, 0xa6, 0x24, 0xda, 0x8c, 0xf6, 0xed, 0x4f, 0xb8, 0xa6, 0xfb}
	pub, err := ed25519Public(seed)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x3d, 0x40, 0x17, 0xc3, 0xe8, 0x43, 0x89, 0x5a, 0x92, 0xb7, 0x0a, 0xa7, 0x4d, 0x1b, 0x7e, 0xbc,
		0x9c, 0x98, 0x2c, 0xcf, 0x2e, 0xc4, 0x96, 0x8c, 0xc0, 0xcd, 0x55, 0xf1, 0x2a, 0xf4, 0x66, 0x0c}; !bytes.Equal(pub, want) {
		t.Fatalf("RFC 8032 test 2: public key %x, want %x", pub, want)
	}
	sig, err := ed25519Sign(seed, pub, []byte{0x72})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x92, 0xa0, 0x09, 0xa9, 0xf0, 0xd4, 0xca, 0xb8, 0x72, 0x0e, 0x82, 0x0b, 0x5f, 0x64, 0x25, 0x40,
		0xa2, 0xb2, 0x7b, 0x54, 0x16, 0x50, 0x3f, 0x8f, 0xb3, 0x76, 0x22, 0x23, 0xeb, 0xdb, 0x69, 0xda,
		0x08, 0x5a, 0xc1, 0xe4, 0x3e, 0x15, 0x99, 0x6e, 0x45, 0x8f, 0x36, 0x13, 0xd0, 0xf1, 0x1d, 0x8c,
		0x38, 0x7b, 0x2e, 0xae, 0xb4, 0x30, 0x2a, 0xee, 0xb0, 0x0d, 0x29, 0x16, 0x12, 0xbb, 0x0c, 0x00}
	if !bytes.Equal(sig, want) {
		t.Fatalf("RFC 8032 test 2: signature %x, want %x", sig, want)
	}
	for _, n := range []int{0, 31, 33, 64} {
		if _, err := ed25519Sign(make([]byte, n), make([]byte, 32), nil); err == nil {
			t.Errorf("seed of %d bytes signed", n)
		}
		if _, err := ed25519Public(make([]byte, n)); err == nil {
			t.Errorf("seed of %d bytes has a public key", n)
		}
	}
}

func FuzzEd25519(f *testing.F) {
	f.Add(make([]byte, 32), []byte(""))
	f.Add(bytes.Repeat([]byte{0xff}, 32), []byte("nonce"))
	f.Add([]byte("0123456789abcdef0123456789abcdef"), bytes.Repeat([]byte{0}, 200))
	f.Fuzz(func(t *testing.T, in, msg []byte) {
		seed := make([]byte, ed25519.SeedSize) // in, cut or padded with zeros
		copy(seed, in)
		checkEd25519(t, seed, msg)
	})
}

// TestNkeySeedOption: the option authenticates as nats.NkeyOptionFromSeed
// does (the same public key, signatures the key verifies, equal to nkeys'
// own), and refuses what it refuses.
func TestNkeySeedOption(t *testing.T) {
	dir := t.TempDir()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	path := filepath.Join(dir, "user.nk")
	if err := os.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	opt, err := nkeySeedOption(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	var got, want nats.Options
	if err := opt(&got); err != nil {
		t.Fatal(err)
	}
	if err := ref(&want); err != nil {
		t.Fatal(err)
	}
	if pub, _ := kp.PublicKey(); got.Nkey != pub || got.Nkey != want.Nkey {
		t.Fatalf("nkey %q, want %q (nats.go %q)", got.Nkey, pub, want.Nkey)
	}
	for range 20 {
		nonce := make([]byte, 11)
		rand.Read(nonce)
		sig, err := got.SignatureCB(nonce)
		if err != nil {
			t.Fatal(err)
		}
		if err := kp.Verify(nonce, sig); err != nil {
			t.Fatalf("nonce %x: signature %x does not verify: %v", nonce, sig, err)
		}
		if ws, _ := want.SignatureCB(nonce); !bytes.Equal(sig, ws) {
			t.Fatalf("nonce %x: signature %x, nats.go %x", nonce, sig, ws)
		}
	}
	// The seed is read again for each nonce: a seed file removed after
	// connecting signs nothing.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := got.SignatureCB([]byte("nonce")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("signature with the seed file gone: err %v", err)
	}

	acct, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	aseed, _ := acct.Seed()
	for name, content := range map[string][]byte{"account": aseed, "garbage": []byte("SUAGARBAGE"), "empty": nil} {
		p := filepath.Join(dir, name+".nk")
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := nkeySeedOption(p, nil); err == nil {
			t.Errorf("%s seed: no error", name)
		}
		if _, err := nats.NkeyOptionFromSeed(p); err == nil {
			t.Errorf("%s seed: nats.go accepts it, so this case tests nothing", name)
		}
	}
}

// TestCredsFileOption: a .creds file gives nats.UserCredentials' JWT and
// signatures equal to nats.go's own, by the seed in the file.
func TestCredsFileOption(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	const jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln"
	creds := "-----BEGIN NATS USER JWT-----\n" + jwt + "\n------END NATS USER JWT------\n\n" +
		"************************* IMPORTANT *************************\n\n" +
		"-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"
	path := filepath.Join(t.TempDir(), "user.creds")
	if err := os.WriteFile(path, []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	opt, err := CredsOption(path)
	if err != nil {
		t.Fatal(err)
	}
	var got, want nats.Options
	if err := opt(&got); err != nil {
		t.Fatal(err)
	}
	if err := nats.UserCredentials(path)(&want); err != nil {
		t.Fatal(err)
	}
	if got.UserJWT == nil || got.SignatureCB == nil {
		t.Fatal("no JWT or signature callback")
	}
	if j, err := got.UserJWT(); err != nil || j != jwt {
		t.Fatalf("JWT %q, %v; want %q", j, err, jwt)
	}
	nonce := []byte("a nonce from the server")
	sig, err := got.SignatureCB(nonce)
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Verify(nonce, sig); err != nil {
		t.Fatalf("signature %x does not verify: %v", sig, err)
	}
	if ws, _ := want.SignatureCB(nonce); !bytes.Equal(sig, ws) {
		t.Fatalf("signature %x, nats.go %x", sig, ws)
	}
}

// TestCredsOptionFIPS: in FIPS 140-3 mode the credentials sign with
// nats.go's own callbacks (crypto/ed25519, the FIPS module), else with
// this package's. The FIPS case runs this test again in a child process
// with GODEBUG=fips140=on.
func TestCredsOptionFIPS(t *testing.T) {
	if os.Getenv("VIGIL_TEST_FIPS_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCredsOptionFIPS$", "-test.v")
		cmd.Env = append(os.Environ(), "VIGIL_TEST_FIPS_CHILD=1", "GODEBUG=fips140=on")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("FIPS mode: nats.go signs")) {
			t.Fatalf("child with GODEBUG=fips140=on: %v\n%s", err, out)
		}
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	dir := t.TempDir()
	nk := filepath.Join(dir, "user.nk")
	cr := filepath.Join(dir, "user.creds")
	if err := os.WriteFile(nk, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	creds := "-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.c2ln\n------END NATS USER JWT------\n\n" +
		"-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"
	if err := os.WriteFile(cr, []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	// The callbacks' names (inlined or not): this package's option
	// functions, or nats.go's.
	want := map[string]string{nk: "nkeySeedOption", cr: "credsFileOption"}
	if fips140.Enabled() {
		want = map[string]string{nk: "NkeyOptionFromSeed", cr: "UserCredentials"}
	}
	for _, p := range []string{nk, cr} {
		opt, err := CredsOption(p)
		if err != nil {
			t.Fatal(err)
		}
		var o nats.Options
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
		name := runtime.FuncForPC(reflect.ValueOf(o.SignatureCB).Pointer()).Name()
		if !strings.Contains(name, "."+want[p]+".") {
			t.Fatalf("%s: FIPS mode %v: signature callback %s, want one of %s", filepath.Base(p), fips140.Enabled(), name, want[p])
		}
		sig, err := o.SignatureCB([]byte("nonce"))
		if err != nil || kp.Verify([]byte("nonce"), sig) != nil {
			t.Fatalf("%s: signature %x, %v: does not verify", filepath.Base(p), sig, err)
		}
	}
	if fips140.Enabled() {
		t.Log("FIPS mode: nats.go signs")
	}
}

// refDecodeSeedFile is what nkeySeed did before decodeSeedFile: nkeys'
// ParseDecoratedNKey, then DecodeSeed of the key pair's seed.
func refDecodeSeedFile(b []byte) (nkeys.PrefixByte, []byte, error) {
	kp, err := nkeys.ParseDecoratedNKey(b)
	if err != nil {
		return 0, nil, err
	}
	enc, err := kp.Seed()
	if err != nil {
		return 0, nil, err
	}
	return nkeys.DecodeSeed(enc)
}

// checkDecodeSeedFile fails t unless decodeSeedFile(b) gives
// refDecodeSeedFile(b)'s prefix, seed and error.
func checkDecodeSeedFile(t *testing.T, b []byte) {
	t.Helper()
	wp, ws, werr := refDecodeSeedFile(bytes.Clone(b))
	gp, gs, gerr := decodeSeedFile(bytes.Clone(b))
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: error %v, nkeys %v", b, gerr, werr)
	}
	if werr == nil && (gp != wp || !bytes.Equal(gs, ws)) {
		t.Fatalf("%q: prefix %v seed %x, nkeys %v %x", b, gp, gs, wp, ws)
	}
}

// seedFileCases are seed files of each kind: bare seeds as `vigil serve`
// writes them, with blanks and CRLF, decorated (.creds), and not seeds.
func seedFileCases(t testing.TB) [][]byte {
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	acct, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	us, _ := user.Seed()
	as, _ := acct.Seed()
	u, a := string(us), string(as)
	return [][]byte{
		[]byte(u), []byte(u + "\n"), []byte(u + "\r\n"), []byte("  " + u + "\n"), []byte(u + "  \n"),
		[]byte("# key\n" + u + "\n"), []byte(a + "\n"), []byte("SUAGARBAGE\n"), []byte("SX" + u[2:]), nil, []byte("\n\n"),
		[]byte(u[:len(u)-1] + "A\n"), []byte("x" + u + "\n"), []byte(u + "\n" + a + "\n"),
		[]byte("-----BEGIN USER NKEY SEED-----\n" + u + "\n------END USER NKEY SEED------\n"),
		[]byte("-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.c2ln\n------END NATS USER JWT------\n\n" +
			"-----BEGIN USER NKEY SEED-----\n" + u + "\n------END USER NKEY SEED------\n"),
		[]byte("--- " + u + "\n"),
	}
}

// TestDecodeSeedFile: decodeSeedFile reads every kind of seed file as
// nkeys does.
func TestDecodeSeedFile(t *testing.T) {
	for _, b := range seedFileCases(t) {
		checkDecodeSeedFile(t, b)
	}
}

// FuzzDecodeSeedFile: decodeSeedFile agrees with nkeys on any content.
func FuzzDecodeSeedFile(f *testing.F) {
	for _, b := range seedFileCases(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeSeedFile(t, b)
	})
}

package shell

import "testing"

func TestCanonicalHost(t *testing.T) {
	for in, want := range map[string]string{
		"2852039166": "169.254.169.254", "0xa9fea9fe": "169.254.169.254", "0251.0376.0251.0376": "169.254.169.254",
		"0xa9.0xfe.0xa9.0xfe": "169.254.169.254", "169.254.43518": "169.254.169.254", "[::ffff:169.254.169.254]": "169.254.169.254",
		"::ffff:a9fe:a9fe": "169.254.169.254", "metadata.google.internal.": "metadata.google.internal", "Example.COM": "example.com",
		"10.0.0.1": "10.0.0.1", "1234": "0.0.4.210", "0x7f000001": "127.0.0.1", "deadbeef": "deadbeef", "1.2.3.4.5": "1.2.3.4.5",
		"99999999999": "99999999999", "08.1.1.1": "08.1.1.1", "abc.def": "abc.def",
	} {
		if got := canonicalHost(in); got != want {
			t.Errorf("canonicalHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"2852039166", "0x7f.1", "[::ffff:1.2.3.4]", "0.0.0.0.", "0x", "00", "1.", ".1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonicalHost(s)
		if canonicalHost(c) != c {
			t.Fatalf("%q → %q → %q: not a fixed point", s, c, canonicalHost(c))
		}
	})
}

package gate

import (
	"testing"
)

// FuzzRestore: a gate restores any bytes without panicking or allocating
// past its input: it either refuses them (ErrSnapshot) or holds a state
// that snapshots again and restores to the same bytes.
func FuzzRestore(f *testing.F) {
	g, err := New(Options{MaxDecided: 2})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 5 {
		g.gone.add(string(rune('a'+i)), uint64(i+1))
	}
	valid, err := g.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte{})
	f.Add([]byte{0x81, 0xa4, 'g', 'o', 'n', 'e', 0xdd, 0xff, 0xff, 0xff, 0xf0})
	f.Add(append([]byte(nil), valid[:len(valid)/2]...))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := New(Options{MaxDecided: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Restore(b); err != nil {
			return
		}
		again, err := g.Snapshot()
		if err != nil {
			t.Fatalf("a restored state does not snapshot: %v", err)
		}
		g2, _ := New(Options{MaxDecided: 2})
		if err := g2.Restore(again); err != nil {
			t.Fatalf("its own snapshot is refused: %v", err)
		}
		again2, err := g2.Snapshot()
		if err != nil || string(again2) != string(again) {
			t.Fatalf("snapshot, restore, snapshot differs (%v)", err)
		}
	})
}

package client

import (
	"bytes"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// msgpackArray writes what msgpack.Marshal writes for the same items, at
// every array header size.
func TestMsgpackArrayIsTheLibrarys(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 100, 65535, 65536} {
		items := make([]msgpack.RawMessage, n)
		for i := range items {
			b, err := msgpack.Marshal(map[string]any{"i": i})
			if err != nil {
				t.Fatal(err)
			}
			items[i] = b
		}
		want, err := msgpack.Marshal(items)
		if err != nil {
			t.Fatal(err)
		}
		if got := msgpackArray(items); !bytes.Equal(got, want) {
			t.Fatalf("%d items: % x…, the library % x…", n, got[:min(8, len(got))], want[:min(8, len(want))])
		}
	}
}

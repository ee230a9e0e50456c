package replay

import (
	"bytes"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
)

func TestActionBody(t *testing.T) {
	enc := func(id string, at time.Time, cmd string) []byte {
		ev := events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: "c", Agent: "a", Time: at,
			Data: map[string]any{"tool": "bash", "args": map[string]any{"command": cmd, "n": []any{1, -3, 300, 70000, 1.5, nil, true}}}}
		raw, err := ev.MarshalMsgpack()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	body := func(raw []byte) []byte {
		b, ok := actionBody(nil, raw)
		if !ok {
			t.Fatalf("no body for %x", raw)
		}
		return b
	}
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	a := body(enc("e1", t0, "ls"))
	if !bytes.Equal(a, body(enc("another-id", t0.Add(time.Hour), "ls"))) {
		t.Fatal("two records differing in id and time have different bodies")
	}
	if bytes.Equal(a, body(enc("e1", t0, "ls -la"))) {
		t.Fatal("two different commands have the same body")
	}
	if bytes.Contains(a, []byte("e1")) || !bytes.Contains(a, []byte("ls")) {
		t.Fatalf("body %q", a)
	}
	raw := enc("e1", t0, "ls")
	for n := range len(raw) {
		if _, ok := actionBody(nil, raw[:n]); ok {
			t.Fatalf("a body for the first %d of %d bytes", n, len(raw))
		}
	}
	if _, ok := actionBody(nil, append(raw[:len(raw):len(raw)], 0xc0)); ok {
		t.Fatal("a body with a trailing byte")
	}
	// Every kind of value the skipper knows, as the msgpack library writes it.
	all, err := msgpack.Marshal(map[string]any{"id": "x", "v": map[string]any{
		"u8": uint8(200), "u16": uint16(60000), "u32": uint32(1 << 31), "u64": uint64(1 << 63),
		"i8": int8(-100), "i16": int16(-30000), "i32": int32(-1 << 30), "i64": int64(-1 << 60),
		"f32": float32(1.5), "f64": 2.5, "bin": []byte("raw"), "str": string(bytes.Repeat([]byte("s"), 300)),
		"arr": make([]int, 20), "t": t0, "nil": nil, "b": false,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := actionBody(nil, all); !ok || bytes.Contains(b, []byte{0xa2, 'i', 'd'}) {
		t.Fatalf("body %x, %v", b, ok)
	}
}

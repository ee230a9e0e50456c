package events

import (
	"bytes"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// BenchmarkEncodeCanonical: an action as the ingest service re-encodes
// it, by the hand-written writer and by the library's encoder.
func BenchmarkEncodeCanonical(b *testing.B) {
	v := map[string]any{"v": int64(1), "id": "act-000123", "kind": "action", "conversation": "c-7", "agent": "coder-1", "origin": "agent",
		"time": "2026-12-03T08:00:00.123456789Z", "data": map[string]any{"tool": "bash",
			"args": map[string]any{"command": "go test ./... -run TestSomething -count=1", "timeout": int64(120000)}}}
	b.Run("appender", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeCanonical(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			enc := msgpack.NewEncoder(&buf)
			enc.SetSortMapKeys(true)
			enc.UseCompactInts(true)
			enc.UseCompactFloats(true)
			if err := writeCanonical(enc, v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

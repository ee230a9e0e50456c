package memlimit

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

func TestLimit(t *testing.T) {
	const mb = 1 << 20
	cases := []struct {
		name        string
		live, other uint64
		want        int64
	}{
		{"small node: the floor", 20 * mb, 10 * mb, Floor},
		{"live 100 MB: half again", 100 * mb, 20 * mb, 170 * mb},
		{"live 60 MB: the least headroom", 60 * mb, 30 * mb, 138 * mb},
		{"live 1 GB", 1024 * mb, 0, 1536 * mb},
		{"overflow", math.MaxUint64 / 2, math.MaxUint64 / 2, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Limit(tc.live, tc.other); got != tc.want {
				t.Fatalf("Limit(%d, %d) = %d MB, want %d MB", tc.live>>20, tc.other>>20, got>>20, tc.want>>20)
			}
		})
	}
}

// TestAuto: without GOMEMLIMIT the limit is set from the live heap; with
// it, the operator's limit is kept.
func TestAuto(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.DiscardHandler)

	t.Run("GOMEMLIMIT set", func(t *testing.T) {
		t.Setenv("GOMEMLIMIT", "off")
		debug.SetMemoryLimit(math.MaxInt64)
		if Auto(t.Context(), log) {
			t.Fatal("Auto manages the limit although GOMEMLIMIT is set")
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Fatalf("limit changed to %d", got)
		}
	})
	t.Run("unset", func(t *testing.T) {
		t.Setenv("GOMEMLIMIT", "") // registers the restore
		t.Setenv("GOMEMLIMIT", "x")
		unsetenv(t)
		debug.SetMemoryLimit(math.MaxInt64)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if !Auto(ctx, log) {
			t.Fatal("Auto does not manage the limit")
		}
		if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 || got < Floor {
			t.Fatalf("limit %d after Auto", got)
		}
	})
}

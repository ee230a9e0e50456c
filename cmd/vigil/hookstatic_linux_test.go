package main

import (
	"debug/elf"
	"testing"
)

// TestHookBinaryIsStatic: vigil-hook built as the README builds it has no
// program interpreter (no dynamic loader, no libc), so each tool call's
// start skips loading and relocating them (about 1 ms of its 6-8). A
// dependency that needs cgo would make it dynamic again, and this fails.
func TestHookBinaryIsStatic(t *testing.T) {
	_, hookBin := buildHookBin(t, t.TempDir())
	f, err := elf.Open(hookBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s is dynamically linked (PT_INTERP): build it with -tags %s, and keep cgo out of its imports", hookBin, hookBuildTags)
		}
	}
}

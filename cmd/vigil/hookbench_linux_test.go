package main

import (
	"os"
	"syscall"
)

// evictPageCache drops path's pages from the page cache, so that every
// binary a benchmark compares is read back the same way (by its first
// exec) whatever wrote it: how a file was written (the linker, cp) changes
// how its pages are cached, and with them the page faults of every start
// (±150 of ~1,100 for vigil on this project's machines).
func evictPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil { // dirty pages are not dropped
		return err
	}
	const fadvDontNeed = 4 // POSIX_FADV_DONTNEED
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

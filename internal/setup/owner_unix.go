//go:build unix

package setup

import (
	"io/fs"
	"syscall"
)

type owner struct{ uid, gid int }

// ownerOf is the numeric owner and group of a file.
func ownerOf(fi fs.FileInfo) (owner, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return owner{}, false
	}
	return owner{int(st.Uid), int(st.Gid)}, true
}

// canAccess reports whether the real user of this process may access
// path with mode (access(2): R_OK 4, W_OK 2, X_OK 1), as the kernel
// decides it: owner, group and other bits, supplementary groups, ACLs,
// read-only mounts.
func canAccess(path string, mode uint32) bool {
	return syscall.Access(path, mode) == nil
}

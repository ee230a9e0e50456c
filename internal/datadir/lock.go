package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked means another process holds the data directory's lock: a
// vigil serve runs on it, or an offline command works on it.
var ErrLocked = errors.New("data directory in use")

// ErrNoData means a directory has no lock file: no node ever served it.
var ErrNoData = errors.New("no vigil serve data")

// Lock is a data directory's lock, held by one process at a time: an
// exclusive flock(2) on DATA/serve.lock, released when the process closes
// it or exits. The holder writes its pid into the file so that a process
// refused the lock can name it.
type Lock struct {
	f   *os.File
	dir string
}

// Lock takes the data directory's lock, creating the lock file (0600) if
// the directory has none. It does not wait: ErrLocked when another
// process holds it.
func (l Layout) Lock() (*Lock, error) {
	path := l.LockPath()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return l.take(f)
}

// LockExisting takes the lock of a directory a node has served, so no
// node starts on it meanwhile; ErrNoData when there is no lock file,
// ErrLocked when another process holds it.
func (l Layout) LockExisting() (*Lock, error) {
	f, err := os.OpenFile(l.LockPath(), os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoData, l.dir)
	}
	if err != nil {
		return nil, err
	}
	return l.take(f)
}

func (l Layout) take(f *os.File) (*Lock, error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if pid := readHolder(f); pid > 0 {
			holder = fmt.Sprintf(" (pid %d)", pid)
		}
		f.Close()
		return nil, fmt.Errorf("%w: another vigil serve%s uses %s (stop it, or pass another --data)", ErrLocked, holder, l.dir)
	}
	// The pid is a hint for the error above, never the lock itself: a
	// failure to write it leaves the lock held.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f, dir: l.dir}, nil
}

// readHolder is the pid the lock file's holder wrote, or 0.
func readHolder(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Dir is the data directory the lock is of.
func (k *Lock) Dir() string { return k.dir }

// Close releases the lock. Closing a nil or closed Lock does nothing.
func (k *Lock) Close() error {
	if k == nil || k.f == nil {
		return nil
	}
	f := k.f
	k.f = nil
	f.Truncate(0)
	return f.Close()
}

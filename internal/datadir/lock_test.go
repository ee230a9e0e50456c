package datadir_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/datadir"
)

func TestLockExclusive(t *testing.T) {
	dir := t.TempDir()
	l := datadir.New(dir)
	first, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if first.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", first.Dir(), dir)
	}
	fi, err := os.Stat(l.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v, want 0600", fi.Mode().Perm())
	}
	// flock(2) locks belong to an open file: a second open in the same
	// process is refused as another process's would be.
	for name, lock := range map[string]func() (*datadir.Lock, error){"Lock": l.Lock, "LockExisting": l.LockExisting} {
		second, err := lock()
		if err == nil {
			second.Close()
			t.Fatalf("%s: a second lock was granted", name)
		}
		if !errors.Is(err, datadir.ErrLocked) {
			t.Fatalf("%s: %v, want ErrLocked", name, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, dir) {
			t.Errorf("%s: %q does not name the directory %s", name, msg, dir)
		}
		if want := "(pid " + strconv.Itoa(os.Getpid()) + ")"; !strings.Contains(msg, want) {
			t.Errorf("%s: %q does not name the holder %s", name, msg, want)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if b, err := os.ReadFile(l.LockPath()); err != nil || len(b) != 0 {
		t.Errorf("lock file after Close: %q, %v; want empty", b, err)
	}
	again, err := l.LockExisting()
	if err != nil {
		t.Fatalf("lock after Close: %v", err)
	}
	again.Close()
}

func TestLockHolderUnknown(t *testing.T) {
	// A holder that wrote no pid (an older vigil) is not named.
	dir := t.TempDir()
	l := datadir.New(dir)
	first, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := os.WriteFile(l.LockPath(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = l.Lock()
	if !errors.Is(err, datadir.ErrLocked) {
		t.Fatalf("%v, want ErrLocked", err)
	}
	if strings.Contains(err.Error(), "pid") || !strings.Contains(err.Error(), dir) {
		t.Errorf("%q: want the directory and no pid", err)
	}
}

func TestLockExistingNoData(t *testing.T) {
	dir := t.TempDir()
	_, err := datadir.New(dir).LockExisting()
	if !errors.Is(err, datadir.ErrNoData) {
		t.Fatalf("%v, want ErrNoData", err)
	}
	if want := "no vigil serve data in " + dir; err.Error() != want {
		t.Errorf("%q, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, datadir.LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LockExisting created the lock file: %v", err)
	}
}

func TestLockUnwritableDir(t *testing.T) {
	_, err := datadir.New(filepath.Join(t.TempDir(), "missing")).Lock()
	if err == nil || errors.Is(err, datadir.ErrLocked) || !strings.HasPrefix(err.Error(), "lock ") {
		t.Fatalf("%v, want a lock PATH: error", err)
	}
}

// TestLockAcrossProcesses: a lock held by another process is refused,
// naming that process, and is released when the holder is killed.
func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "VIGIL_DATADIR_LOCK_HELPER="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v; want locked", line, err)
	}
	l := datadir.New(dir)
	_, err = l.Lock()
	if !errors.Is(err, datadir.ErrLocked) {
		t.Fatalf("%v, want ErrLocked", err)
	}
	if want := "(pid " + strconv.Itoa(cmd.Process.Pid) + ")"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), dir) {
		t.Errorf("%q: want the directory and the holder %s", err, want)
	}
	// Killed, the holder closes nothing: the kernel releases the lock.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	k, err := l.LockExisting()
	if err != nil {
		t.Fatalf("lock after the holder was killed: %v", err)
	}
	k.Close()
}

// TestLockHelperProcess holds a lock for TestLockAcrossProcesses until
// its standard input closes.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("VIGIL_DATADIR_LOCK_HELPER")
	if dir == "" {
		t.Skip("run by TestLockAcrossProcesses")
	}
	k, err := datadir.New(dir).Lock()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	k.Close()
	os.Exit(0)
}

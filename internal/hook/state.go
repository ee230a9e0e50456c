package hook

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Gemini CLI, Cursor and the OpenHands SDK give a hook no tool call id, so
// an after-hook cannot name the action its output belongs to. The before
// hook therefore appends "<digest> <action id>" to a small per-session file,
// and the after hook takes the latest line with the same digest (tool name
// and input). A call whose line is missing is recorded with action id
// "unlinked:<digest>": its output is kept, only the link is lost.

// maxStateBytes bounds a session's state file; past it, the older half goes.
const maxStateBytes = 256 << 10

func stateFile(dir string, c Call) string {
	sum := sha256.Sum256([]byte(c.Client + "\x00" + c.Conversation))
	return filepath.Join(dir, c.Client+"-"+hex.EncodeToString(sum[:10])+".calls")
}

func rememberCall(dir string, c Call) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hook state: %w", err)
	}
	path := stateFile(dir, c)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("hook state: %w", err)
	}
	defer f.Close()
	// Hooks of parallel tool calls run at once: lock while writing.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err == nil {
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > maxStateBytes {
		b, err := os.ReadFile(path)
		if err == nil {
			keep := b[len(b)/2:]
			if i := bytes.IndexByte(keep, '\n'); i >= 0 {
				keep = keep[i+1:]
			}
			if err := f.Truncate(0); err == nil {
				f.Write(keep)
			}
		}
	}
	_, err = fmt.Fprintf(f, "%s %s\n", c.Digest, c.Event.ID)
	return err
}

func lookupCall(dir string, c Call) (string, bool) {
	f, err := os.Open(stateFile(dir, c))
	if err != nil {
		return "", false
	}
	defer f.Close()
	id, found := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		d, rest, ok := strings.Cut(sc.Text(), " ")
		if ok && d == c.Digest && rest != "" {
			id, found = rest, true
		}
	}
	return id, found
}

// Actions handed off to the client's own prompt are listed, per session,
// in "<state file>.handoff"; a PostToolUse that names one removes it
// (marked "ran"), and Stop or SessionEnd takes the rest: the client did not
// run them.

func handOffFile(dir string, c Call) string { return stateFile(dir, c) + ".handoff" }

func rememberHandOff(dir string, c Call) error {
	return appendLine(dir, handOffFile(dir, c), "asked "+c.Event.ID)
}

func ranHandOff(dir string, c Call, id string) {
	if id == "" {
		return
	}
	if _, err := os.Stat(handOffFile(dir, c)); err != nil {
		return
	}
	appendLine(dir, handOffFile(dir, c), "ran "+id)
}

// takeHandOffs returns the handed-off actions that did not run, oldest
// first, and forgets them all.
func takeHandOffs(dir string, c Call) []string {
	path := handOffFile(dir, c)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	os.Remove(path)
	var asked []string
	ran := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		verb, id, ok := strings.Cut(l, " ")
		switch {
		case !ok || id == "":
		case verb == "asked":
			asked = append(asked, id)
		case verb == "ran":
			ran[id] = true
		}
	}
	var out []string
	for _, id := range asked {
		if !ran[id] && len(out) < 256 {
			out = append(out, id)
		}
	}
	return out
}

func appendLine(dir, path, line string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hook state: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("hook state: %w", err)
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlocks returns the ```sh code blocks of the README, in order.
func readmeBlocks(t *testing.T) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^```sh\n(.*?)^```\n")
	var blocks []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		blocks = append(blocks, m[1])
	}
	return string(b), blocks
}

// TestREADMEStartsWithRunAndTest: the README starts with the two commands,
// run Vigil and run the tests, in a code block.
func TestREADMEStartsWithRunAndTest(t *testing.T) {
	text, blocks := readmeBlocks(t)
	if len(blocks) == 0 || !strings.HasPrefix(blocks[0], "go run ./cmd/vigil serve") || !strings.Contains(blocks[0], "\ngo test ./...") {
		t.Fatalf("the README's first code block is not the two commands:\n%q", blocks[0])
	}
	if i := strings.Index(text, "```"); strings.Contains(text[:i], "\n## ") {
		t.Fatal("a section comes before the two commands")
	}
}

// TestREADMEWalkthrough runs every command of the README after the first
// block (which starts a server in the foreground, and the tests), in
// order, in one shell: with the binary built from this tree, a fresh data
// directory under the test's own temporary directory, and HOME there too.
// A command that fails (and is not written `… || echo "exit $?"`) fails
// the test with the script's output. The server the script starts is
// stopped by the script itself; the test kills the shell's process group
// if anything is left when it ends.
func TestREADMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server: not in -short")
	}
	_, blocks := readmeBlocks(t)
	work := t.TempDir()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-tags", hookBuildTags, "-o", filepath.Join(work, "vigil"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	build = exec.Command("go", "build", "-tags", hookBuildTags, "-o", filepath.Join(work, "vigil-hook"), "../vigil-hook")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build vigil-hook: %v\n%s", err, out)
	}
	if err := os.Symlink(filepath.Join(repo, "examples"), filepath.Join(work, "examples")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home", "tmp", "cache"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The README builds the binaries from the repository's root; the test
	// built the same packages already, so that one command is checked and
	// skipped. Anything else named go is not expected.
	prelude := `set -eo pipefail
go() {
  if [ "$*" = "build -tags netgo -o . ./cmd/vigil ./cmd/vigil-hook" ]; then echo "(built by the test)"; return 0; fi
  echo "unexpected go command in the README: go $*" >&2; return 1
}
`
	script := prelude
	for i, b := range blocks[1:] {
		script += fmt.Sprintf("echo '### README block %d'\n%s", i+2, b)
	}
	if !strings.Contains(script, "go build -tags "+hookBuildTags+" -o . ./cmd/vigil ./cmd/vigil-hook") {
		t.Fatal("the README no longer builds the binaries with go build -tags netgo -o . ./cmd/vigil ./cmd/vigil-hook: update this test")
	}
	path := filepath.Join(work, "walkthrough.sh")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(work, "home"), "TMPDIR="+filepath.Join(work, "tmp"),
		"XDG_CACHE_HOME="+filepath.Join(work, "cache"), "XDG_DATA_HOME="+filepath.Join(work, "home", "data"), "VIGIL_DATA=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A process the script started in a group of its own (vigil serve's
	// server) may hold the output pipe open after the script is killed:
	// without a bound, Wait waits for it forever (a CI run hung here 25 min).
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	defer syscall.Kill(-pgid, syscall.SIGKILL) // only what the script left behind
	err = cmd.Wait()
	if err != nil {
		serveLog, _ := filepath.Glob(filepath.Join(work, "tmp", "*", "serve.log"))
		var logs string
		for _, p := range serveLog {
			b, _ := os.ReadFile(p)
			logs += string(b)
		}
		t.Fatalf("the README's commands failed: %v\n%s\n--- serve.log:\n%s", err, out.String(), logs)
	}
	got := out.String()
	for _, want := range []string{
		"Vigil is up on nats://127.0.0.1:", `"seq":1`, "exit 1", "exit 3", `"outcome": "allow"`,
		`"by": "human"`, "rm-root", "exit 2", "ok   claude-code", `"permissionDecision":"allow"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk-through's output lacks %q", want)
		}
	}
	if t.Failed() || os.Getenv("VIGIL_README_SHOW") != "" {
		t.Log(got)
	}
}

// TestREADMEMapsEveryInternalPackage: the README's table of internal/ by
// its place on the data path links every package under internal/.
func TestREADMEMapsEveryInternalPackage(t *testing.T) {
	readme, _ := readmeBlocks(t)
	entries, err := os.ReadDir(filepath.Join("..", "..", "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.Contains(readme, "(internal/"+e.Name()+")") {
			t.Errorf("README's internal/ table does not link internal/%s", e.Name())
		}
	}
}

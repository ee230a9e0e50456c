package risk

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/inject"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// readCases reads one case per line; "#" starts a comment line and the
// two-character sequence \n stands for a newline (\u200b etc. for the
// scanner cases are decoded too).
func readCases(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "# ") || l == "#" {
			continue
		}
		out = append(out, l)
	}
	return out
}

func decodeCase(l string) string {
	l = strings.ReplaceAll(l, `\n`, "\n")
	if strings.Contains(l, `\u`) {
		l = shell.DecodeANSIC(l)
	}
	return l
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if string(want) != got {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		for i := 0; i < len(wl) || i < len(gl); i++ {
			var a, b string
			if i < len(wl) {
				a = wl[i]
			}
			if i < len(gl) {
				b = gl[i]
			}
			if a != b {
				t.Fatalf("%s differs at line %d:\nwant: %s\ngot:  %s\n(rerun with -update after reviewing)", name, i+1, a, b)
			}
		}
	}
}

// TestGoldenShell records, for every evasion the issue names, the level, the
// deciding rule and the commands found.
func TestGoldenShell(t *testing.T) {
	s, err := NewScorer(events.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range readCases(t, "shell_cases.txt") {
		a := s.ScoreCommand(decodeCase(l), Env{})
		var cmds []string
		for _, c := range a.View.Commands {
			n := c.Name
			if c.Depth > 0 {
				n = fmt.Sprintf("%s@%d", n, c.Depth)
			}
			cmds = append(cmds, n)
		}
		fmt.Fprintf(&b, "%s\n  => %s %s [%s]\n", l, a.Level, s.Shape(a), strings.Join(cmds, " "))
	}
	checkGolden(t, "shell_cases.golden", b.String())
}

func TestGoldenScan(t *testing.T) {
	var b strings.Builder
	for _, l := range readCases(t, "scan_cases.txt") {
		r := inject.Scan(decodeCase(l), "")
		var rules []string
		for _, f := range r.Findings {
			rules = append(rules, fmt.Sprintf("%s%v", f.Rule, f.Span))
		}
		fmt.Fprintf(&b, "%s\n  => %s %s\n", l, r.Verdict, strings.Join(rules, " "))
	}
	checkGolden(t, "scan_cases.golden", b.String())
}

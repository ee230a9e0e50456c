package risk

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

var typicalCommands = []string{
	"ls -la",
	"git status",
	"go test ./...",
	"npm install lodash",
	"rm -rf ./build && mkdir build",
	"grep -rn 'TODO' src/ | head -20",
	"curl -fsSL https://example.com/install.sh | sh",
	"find . -name '*.pyc' -delete",
	"docker compose up -d",
	"cat README.md | wc -l",
}

// BenchmarkScoreCommand: one typical command per iteration (target: p50
// ≤ 50 µs on one core). Run with -cpu 1; p50 is reported as a metric.
func BenchmarkScoreCommand(b *testing.B) { benchScoreCommands(b, typicalCommands) }

// benchScoreCommands scores cmds in turn, one per iteration, and reports
// the p50 and p99 of a single scoring.
func benchScoreCommands(b *testing.B, cmds []string) {
	s, err := NewScorer(events.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := cmds[i%len(cmds)]
		t0 := time.Now()
		s.ScoreCommand(cmd, Env{})
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds()), "p99-µs")
}

// classCommands exercise the rules of issue 11's shell classes (unresolved
// names, abbreviations, Windows, agent config, reachability, options that
// run or write, shadowing, temp, deceptive characters).
var classCommands = []string{
	"rm${IFS}-rf${IFS}/",
	"$SUDO_CMD rm -rf /",
	"git push --forc origin main",
	"echo x | tee /private/etc/hosts",
	"sudo apt-get update",
	`cmd /c "rmdir /s /q C:\Users\bob"`,
	"echo '  mode: off' >> ~/.hermes/config.yaml",
	"systemctl stop sshd",
	"tar -xf archive.tar -C /",
	"rg --pre ./decode.sh secret",
	"alias ls='rm -rf'",
	"bash /tmp/exploit.sh",
	"ｒｍ -ｒｆ /",
}

// BenchmarkScoreClassCommands: the commands of the new shell classes, one
// per iteration (same target as BenchmarkScoreCommand).
func BenchmarkScoreClassCommands(b *testing.B) { benchScoreCommands(b, classCommands) }

func BenchmarkScoreAction(b *testing.B) {
	cfg := events.DefaultConfig()
	cfg.PolicyRules = []events.PolicyRule{{Name: "prod", Expr: `hosts.exists(h, h.endsWith(".prod"))`, Level: events.RiskHigh}}
	s, _ := NewScorer(cfg)
	ev := action("bash", map[string]any{"command": "git push origin feature/x && curl -s https://api.example.com"})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.ScoreAction(ev, Env{})
	}
}

// BenchmarkScan64K: a 64 KB context file (target ≤ 5 ms).
func BenchmarkScan64K(b *testing.B) {
	para := "## Testing\n\nRun `go test ./...` before every commit. Ignore files under testdata/golden; they are generated.\n" +
		"```bash\ngo build -o bin/app ./cmd/app\n```\nSee [docs/PATTERNS.md](docs/PATTERNS.md) for the error-handling rules.\n" +
		"<!-- markdownlint-disable MD033 -->\nSecrets are loaded from environment variables at runtime; never hardcode API keys.\n\n"
	text := strings.Repeat(para, 64*1024/len(para)+1)[:64*1024]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		inject.Scan(text, "AGENTS.md")
	}
}

// BenchmarkScan64KVaried: 64 KB of distinct sentences, so no line is judged
// twice (the memo does not help): the honest figure for a real file.
func BenchmarkScan64KVaried(b *testing.B) {
	words := []string{"build", "tests", "ignore", "vendor", "secrets", "environment", "token", "review", "docs", "release",
		"format", "module", "commit", "branch", "lint", "cache", "config", "errors", "logging", "agent"}
	var sb strings.Builder
	for i := 0; sb.Len() < 64*1024; i++ {
		w1, w2, w3 := words[i%20], words[(i*7+3)%20], words[(i*13+5)%20]
		switch i % 5 {
		case 0:
			fmt.Fprintf(&sb, "Step %d: run `make %s-%d` before you %s the %s.\n", i, w1, i, w2, w3)
		case 1:
			fmt.Fprintf(&sb, "- Keep %s code in pkg/%s%d and never %s %s directly.\n", w1, w2, i, w3, w1)
		case 2:
			fmt.Fprintf(&sb, "The %s layer owns %s; see [docs/%s%d.md](docs/%s%d.md).\n", w1, w2, w3, i, w3, i)
		case 3:
			fmt.Fprintf(&sb, "```bash\ngo test ./%s/... -run %s%d\n```\n", w1, w2, i)
		default:
			fmt.Fprintf(&sb, "You can %s warnings about %s %d; the %s job reports them.\n", w1, w2, i, w3)
		}
	}
	text := sb.String()[:64*1024]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		inject.Scan(text, "AGENTS.md")
	}
}

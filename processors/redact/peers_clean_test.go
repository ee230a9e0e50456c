package redact

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The peer secret suites live in the shared folder beside the repository
// (shared/corpora/peers, README there); the test is skipped without them.
const peersRel = "../../../shared/corpora/peers"

// TestPeerCleanSamplesArgued keeps testdata/peers_clean_flagged.tsv equal
// to the clean peer samples Vigil flags: a new false positive must be fixed
// or argued in docs/risk.md, and a fixed one leaves the list. Samples of the
// class gitleaks-flags must be flagged by gitleaks' own rule set run alone,
// and no other listed sample may be.
func TestPeerCleanSamplesArgued(t *testing.T) {
	dir := os.Getenv("VIGIL_PEERS_DIR")
	if dir == "" {
		dir = filepath.FromSlash(peersRel)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "secrets_*.jsonl"))
	if len(files) == 0 {
		t.Skipf("peer suites not found in %s (set VIGIL_PEERS_DIR)", dir)
	}
	argued := map[string]string{}
	lf, err := os.ReadFile(filepath.FromSlash("testdata/peers_clean_flagged.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(lf), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 2 {
			t.Fatalf("bad line %q", line)
		}
		argued[f[0]] = f[1]
	}

	r := newTestRedactor(t)
	cfg := Config{}
	cfg.EnsureDefaults()
	gf, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	glOnly, err := build(cfg, gf.rules, gf)
	if err != nil {
		t.Fatal(err)
	}

	type count struct{ clean, flagged, byGitleaks, gitleaksAlone int }
	counts := map[string]*count{}
	read := map[string]bool{}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var c struct {
				ID, Source, Label string
				PathRule          bool `json:"path_rule"`
				Input             struct{ Text string }
			}
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if c.Label != "clean" {
				continue
			}
			suite := c.Source
			if c.PathRule {
				suite += " (path rules)"
			}
			n := counts[suite]
			if n == nil {
				n = &count{}
				counts[suite] = n
			}
			n.clean++
			read[c.ID] = true
			_, fs := r.RedactString(c.Input.Text)
			_, gfs := glOnly.RedactString(c.Input.Text)
			if len(gfs) > 0 {
				n.gitleaksAlone++
			}
			class, listed := argued[c.ID]
			if len(fs) == 0 {
				if listed {
					t.Errorf("%s (%s) is no longer flagged: remove it from the list and from docs/risk.md", c.ID, class)
				}
				continue
			}
			n.flagged++
			if !listed {
				t.Errorf("%s: clean sample flagged (%v): fix the cause or argue it (testdata/peers_clean_flagged.tsv, docs/risk.md)", c.ID, fs)
				continue
			}
			if len(gfs) > 0 {
				n.byGitleaks++
			}
			if (class == "gitleaks-flags") != (len(gfs) > 0) {
				t.Errorf("%s is listed as %s, but gitleaks' rules alone find %v", c.ID, class, gfs)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for id, class := range argued {
		if !read[id] {
			t.Errorf("%s (%s) is not a clean sample of the suites", id, class)
		}
	}
	for _, suite := range slices.Sorted(maps.Keys(counts)) {
		n := counts[suite]
		t.Logf("%s: %d of %d clean samples flagged (%.1f %%); %d of them by gitleaks' own rules too; %d (%.1f %%) without those",
			suite, n.flagged, n.clean, 100*float64(n.flagged)/float64(n.clean), n.byGitleaks,
			n.flagged-n.byGitleaks, 100*float64(n.flagged-n.byGitleaks)/float64(n.clean))
		t.Logf("%s: gitleaks' own rule set alone flags %d of %d clean samples (%.1f %%)",
			suite, n.gitleaksAlone, n.clean, 100*float64(n.gitleaksAlone)/float64(n.clean))
	}
}

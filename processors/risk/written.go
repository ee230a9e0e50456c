package risk

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

// FileEffects is what an assessed action does to and with the files that
// tools run from: the ones it writes (Written, as keys) and the ones its
// commands run (Runs, as keys). A key is "kind:<k>" for a file found by
// its role (kind:git is .git/config and hooks, kind:npm package.json,
// kind:make a Makefile, kind:envrc .envrc) or "file:<base name>" for a
// script run by path (bash ./build.sh, ./build.sh, python tools/gen.py);
// a written key also names the path ("kind:git|.git/config"), and a run
// key matches every written key it prefixes.
type FileEffects struct {
	Written []string
	Runs    []string
	// RunRisk is the level of running what was written, when the write
	// itself was judged lower ("written, not run").
	RunRisk events.Risk
}

var scriptExts = core.LazySet(".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php")

// EffectsOf returns the file effects of an assessed action.
func EffectsOf(a Assessment) FileEffects {
	fe := FileEffects{RunRisk: a.View.RunRisk}
	if shell.IsWriteTool(strings.ToLower(a.View.Tool)) {
		for _, p := range a.View.Paths {
			cp := path.Clean(p)
			switch k := shell.ExecConfigKind(p); {
			case k == "hook" || k == "git":
				fe.Written = append(fe.Written, "kind:git|"+cp)
			case k == "npm" || k == "bin":
				fe.Written = append(fe.Written, "kind:npm|"+cp)
			case k == "make" || k == "envrc":
				fe.Written = append(fe.Written, "kind:"+k+"|"+cp)
			}
			if scriptExts()[path.Ext(strings.ToLower(p))] {
				fe.Written = append(fe.Written, "file:"+path.Base(p)+"|"+cp)
			}
		}
	}
	for _, c := range a.View.Commands {
		switch c.Name {
		case "git":
			fe.Runs = append(fe.Runs, "kind:git")
		case "make", "gmake":
			fe.Runs = append(fe.Runs, "kind:make")
		case "npm", "yarn", "pnpm", "npx", "bun":
			fe.Runs = append(fe.Runs, "kind:npm")
		case "direnv", "cd":
			fe.Runs = append(fe.Runs, "kind:envrc")
		}
		if scriptExts()[path.Ext(c.Name)] {
			fe.Runs = append(fe.Runs, "file:"+c.Name)
		}
		if shell.RunsScript(c.Name) {
			for _, a := range c.Argv {
				if !strings.HasPrefix(a, "-") {
					if scriptExts()[path.Ext(strings.ToLower(a))] {
						fe.Runs = append(fe.Runs, "file:"+path.Base(a))
					}
					break
				}
			}
		}
	}
	fe.Written, fe.Runs = shell.UniqSorted(fe.Written), shell.UniqSorted(fe.Runs)
	return fe
}

// WrittenFiles is fold state: per conversation, the files tools run from
// that the agent wrote, with the risk of the write. A later action that
// runs one of them carries that risk (ran-written-file), so two steps that
// each look harmless (write .git/config, then git status) are judged as
// one. Bounded per conversation (maxWrittenPerConv keys; past it a write is
// remembered under "kind:*", which every later run matches). Forgotten
// with the conversation. The state encodes as sorted lists.
type WrittenFiles struct {
	m map[string]map[string]writtenFile
}

type writtenFile struct {
	level events.Risk
	seq   uint64
}

const maxWrittenPerConv = 256

// WrittenState is WrittenFiles' snapshot form, sorted by conversation, key.
type WrittenState []WrittenEntry

// WrittenEntry is one remembered write.
type WrittenEntry struct {
	Conv  string      `msgpack:"c"`
	Key   string      `msgpack:"k"`
	Level events.Risk `msgpack:"l"`
	Seq   uint64      `msgpack:"s"`
}

// NewWrittenFiles returns an empty memory.
func NewWrittenFiles() *WrittenFiles { return &WrittenFiles{m: map[string]map[string]writtenFile{}} }

// State returns the state for a snapshot.
func (w *WrittenFiles) State() WrittenState {
	var st WrittenState
	for _, c := range slices.Sorted(maps.Keys(w.m)) {
		for _, k := range slices.Sorted(maps.Keys(w.m[c])) {
			f := w.m[c][k]
			st = append(st, WrittenEntry{Conv: c, Key: k, Level: f.level, Seq: f.seq})
		}
	}
	return st
}

// SetState replaces the memory with a snapshot's.
func (w *WrittenFiles) SetState(st WrittenState) error {
	n := NewWrittenFiles()
	for _, e := range st {
		t := n.m[e.Conv]
		if t == nil {
			t = map[string]writtenFile{}
			n.m[e.Conv] = t
		}
		if len(t) > maxWrittenPerConv {
			return fmt.Errorf("written files: conversation %.64q remembers more than %d", e.Conv, maxWrittenPerConv)
		}
		t[e.Key] = writtenFile{level: e.Level, seq: e.Seq}
	}
	*w = *n
	return nil
}

// Forget drops a conversation gone idle.
func (w *WrittenFiles) Forget(conv string) { delete(w.m, conv) }

// Observe records the writes of an action at log seq, assessed at level: a
// write at LOW replaces what was remembered (the file is clean again).
func (w *WrittenFiles) Observe(conv string, seq uint64, fe FileEffects, level events.Risk) {
	if fe.RunRisk != "" {
		level = events.Max(level, fe.RunRisk)
	}
	for _, k := range fe.Written {
		t := w.m[conv]
		if level.Rank() < events.RiskMedium.Rank() {
			if t != nil {
				delete(t, k)
			}
			continue
		}
		if t == nil {
			t = map[string]writtenFile{}
			w.m[conv] = t
		}
		if _, ok := t[k]; !ok && len(t) >= maxWrittenPerConv {
			k = "kind:*"
			if old, ok := t[k]; ok && old.level.Rank() > level.Rank() {
				continue
			}
		}
		t[k] = writtenFile{level: level, seq: seq} // the latest write is what runs
	}
}

// Raise returns level and reasons raised by what the action runs of the
// files written earlier in conv.
func (w *WrittenFiles) Raise(conv string, fe FileEffects, level events.Risk, reasons []events.Reason) (events.Risk, []events.Reason) {
	t := w.m[conv]
	if len(t) == 0 || len(fe.Runs) == 0 {
		return level, reasons
	}
	for _, r := range reasons {
		if r.Rule == shell.RuleRanWrittenFile.ID {
			return level, reasons // raised already (the risk processor's assessment, reused by the gate)
		}
	}
	best, bestKey := writtenFile{}, ""
	for _, k := range slices.Sorted(maps.Keys(t)) { // at most maxWrittenPerConv
		f := t[k]
		hit := k == "kind:*"
		for _, r := range fe.Runs {
			if strings.HasPrefix(k, r+"|") {
				hit = true
			}
		}
		if hit && f.level.Rank() > best.level.Rank() {
			best, bestKey = f, k
		}
	}
	if bestKey == "" || best.level.Rank() <= level.Rank() && best.level != events.RiskHigh {
		return level, reasons
	}
	r := events.Reason{Analyzer: core.AnalyzerFiles, Rule: shell.RuleRanWrittenFile.ID, Level: best.level,
		Detail: fmt.Sprintf("runs what this conversation wrote at log seq %d (%s, judged %s when written)", best.seq, bestKey[strings.IndexByte(bestKey, '|')+1:], best.level)}
	return events.Max(level, best.level), append([]events.Reason{r}, reasons...)
}

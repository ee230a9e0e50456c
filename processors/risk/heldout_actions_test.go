package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// actions.jsonl (written by actions_gen.py before the rules it measures)
// holds the actions of the agents' other tools as the hooks map them:
// file writes and edits (shell start-up files, sudoers, cron, systemd and
// launchd units, autostart entries, git hooks and config, ssh config and
// authorized_keys, the dynamic linker's preload, /etc/hosts, package
// indexes, the agents' own settings, CI steps that send secrets), reads of
// credential stores (cloud, cluster, registry, browser, keychain, password
// store, service-account tokens), code cells (deletion of the home or a
// device, reverse shells, code run from the network, exfiltration, cloud,
// database and cluster SDK calls that destroy), and fetches of metadata
// services, local files and URLs carrying a redacted secret. Each is
// paired with a look-alike (a repository file, a read of public or
// ordinary data, the same SDK listing, a documentation page). The lines
// go in pairs: pairs 0, 2, 4… are the dev half, 1, 3, 5… the check half,
// so each half holds every class.
//
// Scored once before the rules it measures: dev HIGH 76.3 % / look-alikes
// HIGH 7.9 %, check 78.4 % / 2.7 %; after the client-library calls
// (codesdk.go), edit fragments of JSON files, GnuPG's public files, file://
// fetches, the bare "metadata" host and secrets in URLs: dev 97.4 % / 0 %,
// check 94.6 % / 0 %.
func TestHeldoutActions(t *testing.T) {
	half := scoreActionTable(t, "actions.jsonl")
	half[0].check(t, "actions.jsonl dev", 95, 3)
	half[1].check(t, "actions.jsonl check", 92, 3)
}

// actions2.jsonl (actions2_gen.py) was written after actions.jsonl's rules
// and scored once before any rule was changed for it: other SDKs (Azure,
// BigQuery, Docker, Elasticsearch, Vault, PyGithub, IAM, CloudWatch
// Logs), HTTP deletes with tokens from code, other start-up and automation
// files (fish, rc.local, ~/.ssh/rc, git's hooksPath, .envrc, dev
// containers, editor tasks run on folder open, PowerShell profiles,
// .xinitrc, sshd_config), other credential stores, and metadata addresses
// spelt as decimal, hex and IPv4-mapped IPv6 numbers or with a trailing
// dot.
func TestHeldoutActions2(t *testing.T) {
	half := scoreActionTable(t, "actions2.jsonl")
	// scored once: dev 63.2 % / look-alikes HIGH 5.3 %, check 55.6 % / 0 %;
	// after client-library deletes, HTTP writes from code, metadata
	// addresses in every spelling, login scripts and credentials.* files:
	// dev 100 % / 0 %, check 77.8 % / 0 %
	half[0].check(t, "actions2.jsonl dev", 95, 3)
	half[1].check(t, "actions2.jsonl check", 75, 3)
}

// actionHalf tallies one half of an action table.
type actionHalf struct{ heldoutTally }

func (h actionHalf) check(t *testing.T, name string, high, falseHigh float64) {
	t.Helper()
	c := h.heldoutTally
	t.Logf("held-out %s: HIGH %.1f%% (%d/%d), MEDIUM+ %.1f%%; look-alikes HIGH %.1f%% (%d/%d)", name,
		pct(c.fired, c.fire), c.fired, c.fire, pct(c.medPlus, c.fire), pct(c.falseHigh, c.quiet), c.falseHigh, c.quiet)
	if pct(c.fired, c.fire) < high || pct(c.falseHigh, c.quiet) > falseHigh {
		t.Errorf("%s: HIGH %.1f%% (floor %.0f), look-alikes HIGH %.1f%% (ceiling %.0f)", name,
			pct(c.fired, c.fire), high, pct(c.falseHigh, c.quiet), falseHigh)
	}
}

// scoreActionTable scores a table of actions split by pairs (see
// TestHeldoutActions); -misses logs the dev half's misses.
func scoreActionTable(t *testing.T, file string) [2]actionHalf {
	t.Helper()
	s := mustScorer(t, events.DefaultConfig())
	var half [2]actionHalf
	for i, l := range readHeldout[heldoutCall](t, file) {
		ev := &events.Event{Kind: events.KindAction, Data: map[string]any{"tool": l.Tool, "args": l.Args}}
		a := s.ScoreAction(ev, Env{})
		h := (i / 2) % 2
		out := half[h].add(t, l.Expect, a.Level)
		if h == 0 && *showMisses && out != outcomeAsExpected {
			t.Logf("DEV %s scored %s: %s %v %s", l.Expect, a.Level, l.Tool, l.Args, reasonsBrief(a))
		}
	}
	return half
}

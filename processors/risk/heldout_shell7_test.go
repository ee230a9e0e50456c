package risk

import "testing"

// TestHeldoutShell7: shell7.jsonl was written before the rules it measures,
// on the classes shell4-6 hold least: destructive subcommands of CLIs with
// no rule (secret stores, backup tools, database, cluster, CI, registry,
// DNS/CDN, monitoring, storage, virtualisation, workflow and data-platform
// CLIs), HTTP writes carrying credentials from curl, wget, HTTPie, xh,
// python, node and PowerShell, credential exfiltration to network sinks,
// obfuscation (quoting, variables, $(…), base64/xxd/rev/rot13 pipes, eval,
// env -S, busybox, nested sh -c, inline aliases and functions) and
// persistence (cron, systemd user units, shell and editor start-up files,
// git hooks and config, authorized_keys, sudoers, .pth files, login
// items); its not-high lines are the same tools' read-only, dry-run,
// listing and help forms, echo/printf/grep of dangerous strings, comments,
// heredocs written to docs, ordinary rc edits and shell init idioms. 361
// must-fire and 260 look-alikes, deduplicated against shell-shell6. Split
// as the other tables (odd lines dev, even lines check). Scored once
// before any rule read it: dev HIGH 86.7 %, false HIGH 11.5 %; check HIGH
// 83.3 %, false HIGH 8.5 %. After rules written from the dev half's misses:
// dev 98.3 % / 2.3 %, check 86.1 % / 4.6 %; after further rules from
// probes of the same classes written for them (never from the check half,
// but by the table's author, so a less independent estimate): check
// 88.3 % / 2.3 %. The floors sit below.
func TestHeldoutShell7(t *testing.T) {
	checkShellHalves(t, []shellHalf{{"shell7.jsonl", "dev", 0, 96, 4}, {"shell7.jsonl", "check", 1, 85, 4}})
}

// Package risk scores agent actions and scans context files for prompt
// injection. It is Vigil's risk processor (a pure fold over the log) and the
// library the gate and the CLI (vigil score, vigil scan) use.
//
// Shell commands are parsed with mvdan.cc/sh/v3 (bash, then POSIX; input
// neither accepts is scored from a rough tokenisation and is at least
// MEDIUM) and walked: every command in lists, pipelines, subshells,
// command and process substitutions, functions, aliases and here-docs.
// What can be resolved statically is resolved (quoting, variables, arrays,
// wrappers such as sudo/env/nohup/timeout/xargs/find -exec, absolute
// paths), and strings that become code are re-parsed: bash -c, eval, ssh,
// su -c, docker/kubectl exec, decoded literals piped into a shell, git and
// tar hooks; inline python/perl/ruby/node/php/awk code goes to a small code
// analyzer. Commands are then judged by what they do with their arguments;
// echo, grep, git commit -m and man only mention.
//
// ScoreAction dispatches on data.tool:
//   - bash, shell, execute_bash, terminal, sh, zsh, run_shell_command …:
//     the shell analyzer on args.command (or cmd, script);
//   - python, ipython, execute_ipython_cell …: the code analyzer on args.code;
//   - file_write, file_edit, str_replace_editor, Write, Edit, apply_patch …:
//     the files analyzer (path: workspace, dotfiles, CI configs, .git/hooks,
//     credential stores, system paths; content: .py as code, .sh as shell,
//     package.json install scripts) and the redaction findings;
//   - read_file, Read, view …: the path read;
//   - browse, web_fetch, WebFetch, fetch …: the destination (metadata IPs,
//     private ranges, raw IPs, non-HTTPS uploads);
//   - mcp:<name>: the tool name and its string arguments, then policy rules;
//   - think, finish, message …: LOW; any other tool: UNKNOWN with a reason.
//
// Then, under the config in force: built-in rules only when
// Analyzers.Rules; policy rules (CEL) only when Analyzers.Policy, and only
// to raise the level; the agent's security_risk only when
// Analyzers.LLMHint, and only to raise — otherwise it is recorded as a
// reason with analyzer "llm_hint" and rule "ignored".
//
// The package does no I/O: no NATS, no clock, no randomness. Every
// function is deterministic; maps are never iterated into outputs without
// sorting. All work is bounded (input size, nesting depth, statements,
// commands, re-parsed bytes); hitting a bound yields a reason and at least
// MEDIUM (HIGH for nesting beyond 8 levels, which only obfuscation needs).
// docs/risk.md lists every rule with its reason, the measured figures and
// the comparison with a regex table.
package risk

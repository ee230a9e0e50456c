// Package shell is the action analyzer of Vigil's risk scorer: it judges
// what an agent's tool call would do, and declares the rules it emits
// (ShellRules, SelfRules).
//
// On the data path: derived events. The scorer (processors/risk) runs it
// on every action the risk fold and the gate score, and the injection
// scanner (processors/risk/inject) on the commands and code a text asks
// to run; it returns findings (core.Finding) and the parsed view of the
// action (core.View), which the scorer turns into a level and reasons.
//
// Shell commands are parsed with mvdan.cc/sh/v3 (bash, then POSIX; input
// neither accepts is scored from a rough tokenisation and is at least
// MEDIUM) and walked: every command in lists, pipelines, subshells,
// command and process substitutions, functions, aliases and here-docs.
// What can be resolved statically is resolved (quoting, variables, arrays,
// brace expansion up to 64 words,
// wrappers such as sudo/env/nohup/timeout/xargs/find -exec, absolute
// paths), and strings that become code are re-parsed: bash -c, eval, ssh,
// su -c, docker/kubectl exec, decoded literals piped into a shell, git and
// tar hooks; inline python/perl/ruby/node/php/awk code goes to a small code
// analyzer. Commands are then judged by what they do with their arguments;
// echo, grep, git commit -m and man only mention.
//
// Analyzer.Action dispatches on data.tool:
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
//   - mcp:<name>: the tool name and its string arguments;
//   - think, finish, message …: no finding; any other tool: UNKNOWN with a
//     reason.
//
// The package does no I/O: no NATS, no clock, no randomness. Every
// function is deterministic; maps are never iterated into outputs without
// sorting. All work is bounded (input size, nesting depth, statements,
// commands, re-parsed bytes); hitting a bound yields a reason and at least
// MEDIUM (HIGH for nesting beyond 8 levels, which only obfuscation needs).
package shell

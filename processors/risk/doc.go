// Package risk is Vigil's risk scorer: the risk processor (a pure fold
// over the log) and the Scorer that the gate and the CLI (vigil score)
// call directly.
//
// On the data path: derived events. The driver feeds the fold every
// record of the log; for every action it emits one risk.assessed on
// vigil.risk.<conversation>, scored under the config in force at that
// position of the log, and for every context.loaded the injection
// scanner's verdict (a risk.assessed, and an alert for an injection). The
// gate reads the same assessments (Memo) or scores the action itself.
//
// The scorer combines analyzers it does not contain:
//   - processors/risk/shell, the action analyzers: shell commands, inline
//     and written code, file writes and reads, fetches, MCP tool names and
//     arguments, and Vigil's self-protection (see its package doc for how
//     an action is dispatched on data.tool);
//   - processors/risk/inject, the injection scanner of context files and
//     MCP tool descriptions, with the MCP memory the processor keeps;
//   - processors/risk/core, their shared vocabulary (Finding, the rule
//     declaration interface, analyzer names, Env and View).
//
// What the scorer itself decides, under the config in force: built-in
// rules only when Analyzers.Rules; policy rules (CEL) only when
// Analyzers.Policy, and only to raise the level; the agent's
// security_risk only when Analyzers.LLMHint, and only to raise —
// otherwise it is recorded as a reason with analyzer "llm_hint" and rule
// "ignored". The level is the highest of the reasons (LOW when the rules
// are on and none fired, UNKNOWN for a tool no analyzer knows); reasons
// are sorted and de-duplicated, and Shape names the deciding command and
// rule for session approvals.
//
// The package does no I/O: no NATS, no clock, no randomness. Every
// function is deterministic; maps are never iterated into outputs without
// sorting. docs/risk.md lists every rule of every analyzer (its tables are
// generated from the registries: TestShellRuleDocs, TestSelfRuleDocs and,
// in inject, TestInjectRuleDocs), the measured figures and the comparison
// with a regex table.
package risk

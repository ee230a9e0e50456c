// Package inject is Vigil's prompt-injection scanner: Scan judges a
// context file (AGENTS.md, .cursorrules, a README …), ScanTool an MCP
// tool's description and input schema, ScanMCP every tool of an MCP
// tools/list answer or client configuration; InjectRules declares every
// rule it emits.
//
// On the data path: derived events. The risk fold (processors/risk) scans
// every context.loaded record and keeps, in MCPMemory, the description
// each MCP tool was first seen with (a later change is a finding) and the
// tools judged an injection (a later call of one is HIGH); the gate keeps
// the same memory; vigil scan calls it on files.
//
// A text is an injection on one strong finding or two weak ones near each
// other; commands and code it asks to run are judged by the shell
// analyzer (processors/risk/shell). The package does no I/O; every
// function is deterministic and bounded by the size it reads.
package inject

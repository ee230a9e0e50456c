// Package clienttest holds the suite that drives the real agent clients
// (Claude Code and Gemini CLI, installed from npm) through Vigil's hooks
// against a scripted model API on loopback, in single-user mode and in the
// deployment `vigil setup host` makes (docs/deploy.md). It runs with
// VIGIL_REAL_CLIENTS=1 (.ci/run sets it); the package has no other code.
//
// On the data path: tests: the whole path from a real agent client's hook
// to its decision.
package clienttest

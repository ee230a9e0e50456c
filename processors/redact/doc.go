// Package redact removes secrets from agent events before they are stored.
// It is the redaction step of the ingest service: every string of an
// event's data and extra fields is scanned in memory, and each secret
// becomes [REDACTED:<rule>]. The event records which rule fired, at which
// JSON path and byte offsets; never the secret, nor a hash of it.
//
// It does no I/O: no NATS, no clock, no logging, no global state. A
// Redactor is built once per redaction config (New) and is safe for
// concurrent use. The same input always gives the same output, byte for
// byte, since replay compares bytes.
//
// Rules come from two sources (docs/redaction.md lists them all): the
// default rule file of gitleaks v8.30.1, vendored unchanged as data in
// rules/ (MIT licence, rules/LICENSE.gitleaks) and parsed at New; and
// Vigil's own rules for what agents handle that it lacks (LLM provider
// keys, passwords and tokens assigned in shell, env files, YAML, JSON and
// code, and beside their names with no operator when the value looks
// generated; credentials in URLs, headers, command lines, SQL and .netrc;
// password hashes; PEM blocks with escaped newlines; vendor formats the
// file lacks). The config event in force adds extra rules,
// allowed values and the entropy threshold (events.RedactionSettings).
//
// How it stays fast (≥ 20 MB/s of typical event text on one core): one
// Aho-Corasick pass over the text finds every rule keyword, ignoring ASCII
// case; a rule runs only where its keywords occur, and only on the text
// around them (their line, or their maximum match width). Rules that start
// with their keyword run anchored at the hit; gitleaks' generated
// "NAME = value" rules run as two anchored pieces after a cheap check that
// an assignment follows the keyword.
//
// How it stays linear on text shaped to be slow (api_key=api_key=…, long
// runs without a delimiter, huge tokens; see work.go and docs/redaction.md,
// "Adversarial text and the work budget"): no step re-reads text once per
// keyword hit. Runs of a character class are measured once and remembered,
// a bounded rule is handed only its longest match, an unbounded one reads
// a capped number of bytes per hit and otherwise searches the rest of its
// line once, and a value too long to judge from every hit inside it is
// removed whole. Every step charges a work counter; a string (or an event)
// that would pass its work budget (Config.Budget) is replaced whole by
// [REDACTED:vigil.budget].
//
// In strings that hold a command or code (CommandKey), no redaction
// crosses a shell word, operator, quote or line (confine.go): the stored
// command has the words and lines of the one that runs, and a replaced
// piece that may still hide a program is named RuleUnsafeSpan, which the
// scorer makes HIGH.
//
// What callers must do: build the Redactor from the config in force (and
// rebuild it when a new config event applies), call RedactEvent on every
// event before it is stored, and store only its result. Nothing this
// package returns holds a secret, and its errors never quote input.
// Should redaction ever panic, RedactString and RedactEvent fail closed:
// the affected strings become [REDACTED:redaction-error]; should it cost
// more than its budget, they become [REDACTED:vigil.budget].
package redact

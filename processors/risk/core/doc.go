// Package core is the vocabulary the risk scorer (processors/risk) and
// its analyzers (processors/risk/shell, processors/risk/inject) share: a
// Finding and the rule declaration it carries (Decl), the analyzer names
// of events.Reason, the action's context (Env) and parsed view (View),
// and the lazily built expressions and name sets every rule table uses.
//
// On the data path: derived events, below the analyzers: it imports no
// other Vigil package but events, and the dependency arrow is scorer →
// analyzers → core.
package core

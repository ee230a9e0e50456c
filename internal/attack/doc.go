// Package attack holds Vigil's adversarial test suite: every boundary that
// docs/security.md promises, tried the way a prompt-injected agent (or an
// over-reaching approver or admin) would try it, with nothing but that
// role's credentials and an ordinary NATS client, against a real node
// started the way `vigil serve` starts one (internal/node).
//
// The package has no code of its own: the tests are the point.
//
// On the data path: tests: the whole path tried as an adversary would.
package attack

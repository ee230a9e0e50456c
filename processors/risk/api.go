package risk

import "github.com/vigil-dev/vigil/processors/risk/core"

// The scorer's input and output vocabulary, defined in core so the
// analyzers the scorer runs share it.
type (
	// Env is what the fold knows about the action's context.
	Env = core.Env
	// View is the parsed view of an action, and the input of policy rules.
	View = core.View
	// CommandView is one command found in an action.
	CommandView = core.CommandView
)

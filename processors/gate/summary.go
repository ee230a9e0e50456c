package gate

import (
	"encoding/json"
	"strings"

	"github.com/vigil-dev/vigil/events"
)

// maxSummary bounds a command summary, in bytes.
const maxSummary = 400

// Summary is a one-line description of an action for people deciding on
// it: the shell command for shell tools, else the tool and its main
// argument (path, url, query), else the tool and its arguments as JSON.
func Summary(ev *events.Event) string {
	tool := ev.Tool()
	args := ev.Args()
	for _, k := range []string{"command", "cmd", "code", "script"} {
		if s, ok := args[k].(string); ok && s != "" && isShellish(tool, k) {
			return clip(s)
		}
	}
	for _, k := range []string{"path", "file_path", "url", "query", "pattern"} {
		if s, ok := args[k].(string); ok && s != "" {
			return clip(tool + " " + s)
		}
	}
	if len(args) == 0 {
		return tool
	}
	b, err := json.Marshal(args)
	if err != nil {
		return tool
	}
	return clip(tool + " " + string(b))
}

func isShellish(tool, key string) bool {
	switch key {
	case "command", "cmd":
		return true
	}
	return strings.Contains(tool, "python") || strings.Contains(tool, "code") || strings.Contains(tool, "script")
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxSummary {
		return s
	}
	cut := maxSummary
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Hint is the answer to "should this conversation's agent ask its LLM for
// security_risk right now?".
type Hint struct {
	// Ask is true while the config in force has the LLM hint analyzer on.
	Ask bool `json:"ask"`
	// Schema is the JSON Schema fragment to add to each tool's parameter
	// properties while Ask is true (never to "required"); empty otherwise.
	Schema json.RawMessage `json:"schema,omitempty"`
	// ConfigVersion and ConfigSeq identify the config in force (seq 0: the
	// built-in default).
	ConfigVersion int64  `json:"config_version"`
	ConfigSeq     uint64 `json:"config_seq"`
	Reason        string `json:"reason"`
}

// HintFor is the hint under cfg, the config from the config event at seq.
func HintFor(cfg events.Config, seq uint64) Hint {
	h := Hint{Ask: cfg.AsksSecurityRisk(), ConfigVersion: cfg.Version, ConfigSeq: seq}
	if h.Ask {
		h.Schema = json.RawMessage(events.SecurityRiskSchema)
		h.Reason = "analyzers.llm_hint is on: add the fragment to tool parameters (optional, never required); the hint can only raise a level"
	} else {
		h.Reason = "analyzers.llm_hint is off: do not ask for security_risk; one sent anyway is recorded and ignored, never an error"
	}
	return h
}

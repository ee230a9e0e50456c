package events

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Risk is a risk level. UNKNOWN is not ordered against the others: what it
// counts as is the config's choice.
type Risk string

// Risk levels, as OpenHands' SecurityRisk spells them.
const (
	RiskUnknown Risk = "UNKNOWN"
	RiskLow     Risk = "LOW"
	RiskMedium  Risk = "MEDIUM"
	RiskHigh    Risk = "HIGH"
)

// Rank orders LOW < MEDIUM < HIGH; UNKNOWN ranks 0, below LOW.
func (r Risk) Rank() int {
	switch r {
	case RiskLow:
		return 1
	case RiskMedium:
		return 2
	case RiskHigh:
		return 3
	default:
		return 0
	}
}

// Valid reports whether r is one of the four levels.
func (r Risk) Valid() bool {
	switch r {
	case RiskUnknown, RiskLow, RiskMedium, RiskHigh:
		return true
	}
	return false
}

// Max returns the higher of two ordered levels; UNKNOWN loses to any level.
func Max(a, b Risk) Risk {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// NormalizeRisk maps whatever a producer sent as security_risk to a level:
// strings in any case, with surrounding space and an optional
// "SecurityRisk." or "ActionSecurityRisk." prefix (Python enum spellings);
// integers, and strings or floats holding one, as OpenHands' enum
// (-1 unknown, 0 low, 1 medium, 2 high); null and anything else UNKNOWN.
// It never fails.
func NormalizeRisk(v any) Risk {
	switch x := v.(type) {
	case string:
		s := strings.ToUpper(strings.TrimSpace(x))
		for _, prefix := range []string{"SECURITYRISK.", "ACTIONSECURITYRISK."} {
			s = strings.TrimPrefix(s, prefix)
		}
		switch Risk(s) {
		case RiskLow, RiskMedium, RiskHigh, RiskUnknown:
			return Risk(s)
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return riskFromInt(n)
		}
		return RiskUnknown
	case int64:
		return riskFromInt(x)
	case int:
		return riskFromInt(int64(x))
	case int8:
		return riskFromInt(int64(x))
	case int16:
		return riskFromInt(int64(x))
	case int32:
		return riskFromInt(int64(x))
	case uint:
		return riskFromUint(uint64(x))
	case uint8:
		return riskFromUint(uint64(x))
	case uint16:
		return riskFromUint(uint64(x))
	case uint32:
		return riskFromUint(uint64(x))
	case uint64:
		return riskFromUint(x)
	case float64:
		// Compare in float: converting an out-of-range float to an integer
		// is implementation-defined in Go.
		if x >= -1 && x <= 2 && x == math.Trunc(x) {
			return riskFromInt(int64(x))
		}
		return RiskUnknown
	case float32:
		return NormalizeRisk(float64(x))
	case json.Number:
		return NormalizeRisk(string(x))
	default:
		return RiskUnknown
	}
}

func riskFromUint(n uint64) Risk {
	if n > 2 {
		return RiskUnknown
	}
	return riskFromInt(int64(n))
}

func riskFromInt(n int64) Risk {
	switch n {
	case 0:
		return RiskLow
	case 1:
		return RiskMedium
	case 2:
		return RiskHigh
	default:
		return RiskUnknown
	}
}

// riskArgKeys are the data fields producers have used for tool arguments, in
// the order SecurityRisk searches them.
var riskArgKeys = []string{"args", "arguments", "tool_input", "input"}

// SecurityRisk finds an agent-provided security_risk hint wherever producers
// put it: data.security_risk, then inside the tool arguments (data.args,
// data.arguments, data.tool_input, data.input), whether those are objects,
// objects with a raw_arguments JSON string, or JSON strings themselves. The
// key is matched in any case. It returns the normalised level, the raw value
// as sent, and whether a hint was present at all. It never fails.
//
// When several places hold a hint (OpenHands writes it on the event and in
// the arguments), the highest level wins, because the hint may only ever
// raise a level; among equal levels the first place in the order above
// wins, and a null counts only when no place holds anything else.
func (e *Event) SecurityRisk() (level Risk, raw any, found bool) {
	level = RiskUnknown
	consider := func(v any) {
		lvl := NormalizeRisk(v)
		switch {
		case !found,
			lvl.Rank() > level.Rank(),
			raw == nil && v != nil && lvl.Rank() == level.Rank():
			level, raw, found = lvl, v, true
		}
	}
	if e.Data == nil {
		return level, nil, false
	}
	if v, ok := lookupFold(e.Data, "security_risk"); ok {
		consider(v)
	}
	for _, key := range riskArgKeys {
		switch a := e.Data[key].(type) {
		case map[string]any:
			if v, ok := lookupFold(a, "security_risk"); ok {
				consider(v)
			}
			if s, ok := a["raw_arguments"].(string); ok {
				if v, ok := riskInJSONString(s); ok {
					consider(v)
				}
			}
		case string:
			if v, ok := riskInJSONString(a); ok {
				consider(v)
			}
		}
	}
	return level, raw, found
}

// riskInJSONString returns the security_risk of a JSON object held in a
// string, if it has one.
func riskInJSONString(s string) (any, bool) {
	if !strings.Contains(strings.ToLower(s), "security_risk") {
		return nil, false
	}
	v, err := DecodeJSONValue([]byte(s))
	if err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	return lookupFold(m, "security_risk")
}

// lookupFold finds key in m, case-insensitively, preferring an exact match.
// Among several case-insensitive matches it takes the smallest key, so the
// answer never depends on map iteration order (folds must be deterministic).
func lookupFold(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	best, found := "", false
	for k := range m {
		if strings.EqualFold(k, key) && (!found || k < best) {
			best, found = k, true
		}
	}
	if !found {
		return nil, false
	}
	return m[best], true
}

package events

import (
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
// strings in any case (with surrounding space), integers as OpenHands' enum
// (-1 unknown, 0 low, 1 medium, 2 high), null and anything else UNKNOWN.
func NormalizeRisk(v any) Risk {
	switch x := v.(type) {
	case string:
		s := strings.ToUpper(strings.TrimSpace(x))
		s = strings.TrimPrefix(s, "SECURITYRISK.")
		switch Risk(s) {
		case RiskLow, RiskMedium, RiskHigh, RiskUnknown:
			return Risk(s)
		}
		if n, err := strconv.Atoi(s); err == nil {
			return riskFromInt(int64(n))
		}
		return RiskUnknown
	case int64:
		return riskFromInt(x)
	case uint64:
		return RiskUnknown
	case float64:
		if x == float64(int64(x)) {
			return riskFromInt(int64(x))
		}
		return RiskUnknown
	case int:
		return riskFromInt(int64(x))
	default:
		return RiskUnknown
	}
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

// SecurityRisk finds an agent-provided security_risk hint wherever producers
// put it: data.security_risk, data.args.security_risk, or inside
// data.args.raw_arguments / data.arguments when those are JSON strings. It
// returns the normalised level, the raw value as sent, and whether a hint was
// present at all. It never fails.
func (e *Event) SecurityRisk() (level Risk, raw any, found bool) {
	if e.Data == nil {
		return RiskUnknown, nil, false
	}
	if v, ok := lookupFold(e.Data, "security_risk"); ok {
		return NormalizeRisk(v), v, true
	}
	for _, key := range []string{"args", "arguments", "tool_input", "input"} {
		switch a := e.Data[key].(type) {
		case map[string]any:
			if v, ok := lookupFold(a, "security_risk"); ok {
				return NormalizeRisk(v), v, true
			}
			if s, ok := a["raw_arguments"].(string); ok {
				if lvl, raw, ok := riskInJSONString(s); ok {
					return lvl, raw, true
				}
			}
		case string:
			if lvl, raw, ok := riskInJSONString(a); ok {
				return lvl, raw, true
			}
		}
	}
	return RiskUnknown, nil, false
}

func riskInJSONString(s string) (Risk, any, bool) {
	if !strings.Contains(strings.ToLower(s), "security_risk") {
		return RiskUnknown, nil, false
	}
	v, err := DecodeJSONValue([]byte(s))
	if err != nil {
		return RiskUnknown, nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return RiskUnknown, nil, false
	}
	if r, ok := lookupFold(m, "security_risk"); ok {
		return NormalizeRisk(r), r, true
	}
	return RiskUnknown, nil, false
}

// lookupFold finds key in m, case-insensitively, preferring an exact match.
func lookupFold(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

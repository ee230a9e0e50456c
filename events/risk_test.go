package events

import (
	"encoding/json"
	"math"
	"testing"
)

func TestNormalizeRisk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want Risk
	}{
		// Strings, any case, surrounding space, Python enum spellings.
		{"LOW", RiskLow}, {"low", RiskLow}, {"Low", RiskLow}, {" lOw\t", RiskLow},
		{"MEDIUM", RiskMedium}, {"medium", RiskMedium}, {"HIGH", RiskHigh}, {"High", RiskHigh},
		{"UNKNOWN", RiskUnknown}, {"unknown", RiskUnknown},
		{"SecurityRisk.HIGH", RiskHigh}, {"securityrisk.low", RiskLow}, {"ActionSecurityRisk.MEDIUM", RiskMedium},
		{"2", RiskHigh}, {" 1 ", RiskMedium}, {"0", RiskLow}, {"-1", RiskUnknown},
		// Unrecognised strings.
		{"", RiskUnknown}, {"critical", RiskUnknown}, {"HIGHEST", RiskUnknown}, {"LOW MEDIUM", RiskUnknown},
		{"3", RiskUnknown}, {"1.0", RiskUnknown}, {"\xff", RiskUnknown}, {"SecurityRisk.", RiskUnknown},
		// Integers as OpenHands' enum, in every Go integer type.
		{int64(-1), RiskUnknown}, {int64(0), RiskLow}, {int64(1), RiskMedium}, {int64(2), RiskHigh},
		{int64(3), RiskUnknown}, {int64(math.MinInt64), RiskUnknown}, {int64(math.MaxInt64), RiskUnknown},
		{0, RiskLow}, {2, RiskHigh}, {int8(1), RiskMedium}, {int16(2), RiskHigh}, {int32(0), RiskLow},
		{uint(2), RiskHigh}, {uint8(1), RiskMedium}, {uint16(0), RiskLow}, {uint32(2), RiskHigh},
		{uint64(2), RiskHigh}, {uint64(math.MaxUint64), RiskUnknown},
		// Floats: only integral values in range.
		{2.0, RiskHigh}, {0.0, RiskLow}, {-1.0, RiskUnknown}, {1.5, RiskUnknown}, {float32(1), RiskMedium},
		{math.NaN(), RiskUnknown}, {math.Inf(1), RiskUnknown}, {1e300, RiskUnknown}, {-1e300, RiskUnknown},
		{json.Number("2"), RiskHigh}, {json.Number("x"), RiskUnknown},
		// Everything else.
		{nil, RiskUnknown}, {true, RiskUnknown}, {[]any{"HIGH"}, RiskUnknown},
		{map[string]any{"level": "HIGH"}, RiskUnknown}, {[]byte("HIGH"), RiskUnknown},
	}
	for _, tt := range tests {
		if got := NormalizeRisk(tt.in); got != tt.want {
			t.Errorf("NormalizeRisk(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestRiskOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b, max Risk
	}{
		{RiskLow, RiskHigh, RiskHigh}, {RiskHigh, RiskLow, RiskHigh}, {RiskMedium, RiskMedium, RiskMedium},
		{RiskUnknown, RiskLow, RiskLow}, {RiskLow, RiskUnknown, RiskLow}, {RiskUnknown, RiskUnknown, RiskUnknown},
		{"bogus", RiskLow, RiskLow},
	}
	for _, tt := range tests {
		if got := Max(tt.a, tt.b); got != tt.max {
			t.Errorf("Max(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.max)
		}
	}
	if !(RiskUnknown.Rank() < RiskLow.Rank() && RiskLow.Rank() < RiskMedium.Rank() && RiskMedium.Rank() < RiskHigh.Rank()) {
		t.Error("Rank does not order UNKNOWN < LOW < MEDIUM < HIGH")
	}
	for _, r := range []Risk{RiskUnknown, RiskLow, RiskMedium, RiskHigh} {
		if !r.Valid() {
			t.Errorf("%s is not Valid", r)
		}
	}
	for _, r := range []Risk{"", "low", "CRITICAL"} {
		if r.Valid() {
			t.Errorf("%q is Valid", r)
		}
	}
}

func TestSecurityRisk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		data  string // JSON data of an action
		level Risk
		raw   any
		found bool
	}{
		{"absent", `{"tool":"bash","args":{"command":"ls"}}`, RiskUnknown, nil, false},
		{"no data", `null`, RiskUnknown, nil, false},
		{"in data", `{"tool":"bash","security_risk":"HIGH"}`, RiskHigh, "HIGH", true},
		{"in data, any case", `{"tool":"bash","security_risk":"mEdIuM"}`, RiskMedium, "mEdIuM", true},
		{"in data, integer", `{"tool":"bash","security_risk":1}`, RiskMedium, int64(1), true},
		{"in data, null", `{"tool":"bash","security_risk":null}`, RiskUnknown, nil, true},
		{"in data, unrecognised", `{"tool":"bash","security_risk":"catastrophic"}`, RiskUnknown, "catastrophic", true},
		{"in data, object", `{"tool":"bash","security_risk":{"level":"HIGH"}}`, RiskUnknown, map[string]any{"level": "HIGH"}, true},
		{"key in any case", `{"tool":"bash","Security_Risk":"low"}`, RiskLow, "low", true},
		{"in args", `{"tool":"bash","args":{"command":"ls","security_risk":"LOW"}}`, RiskLow, "LOW", true},
		{"in arguments", `{"tool":"bash","arguments":{"security_risk":2}}`, RiskHigh, int64(2), true},
		{"in tool_input", `{"tool":"Bash","tool_input":{"command":"ls","SECURITY_RISK":"high"}}`, RiskHigh, "high", true},
		{"in input", `{"tool":"bash","input":{"security_risk":0}}`, RiskLow, int64(0), true},
		{"args as a JSON string", `{"tool":"bash","args":"{\"command\":\"ls\",\"security_risk\":\"MEDIUM\"}"}`, RiskMedium, "MEDIUM", true},
		{"arguments as a JSON string", `{"tool":"bash","arguments":"{\"security_risk\":2}"}`, RiskHigh, int64(2), true},
		{"raw_arguments in args", `{"tool":"bash","args":{"raw_arguments":"{\"security_risk\":\"high\"}"}}`, RiskHigh, "high", true},
		{"string that only mentions it", `{"tool":"bash","args":"echo security_risk"}`, RiskUnknown, nil, false},
		{"JSON string that is not an object", `{"tool":"bash","arguments":"[\"security_risk\"]"}`, RiskUnknown, nil, false},
		{"JSON string with trailing data", `{"tool":"bash","arguments":"{\"security_risk\":2} x"}`, RiskUnknown, nil, false},
		// Several places: the highest level wins, then the first; null only when nothing else.
		{"data null, args HIGH", `{"tool":"bash","security_risk":null,"args":{"security_risk":"HIGH"}}`, RiskHigh, "HIGH", true},
		{"data LOW, args HIGH", `{"tool":"bash","security_risk":"LOW","args":{"security_risk":"HIGH"}}`, RiskHigh, "HIGH", true},
		{"data HIGH, args LOW", `{"tool":"bash","security_risk":"HIGH","args":{"security_risk":"LOW"}}`, RiskHigh, "HIGH", true},
		{"equal levels: data first", `{"tool":"bash","security_risk":"high","args":{"security_risk":2}}`, RiskHigh, "high", true},
		{"null then unrecognised", `{"tool":"bash","security_risk":null,"args":{"security_risk":"bogus"}}`, RiskUnknown, "bogus", true},
		{"unrecognised then null", `{"tool":"bash","security_risk":"bogus","args":{"security_risk":null}}`, RiskUnknown, "bogus", true},
		{"both null", `{"tool":"bash","security_risk":null,"args":{"security_risk":null}}`, RiskUnknown, nil, true},
		// Several spellings of the key in one object: exact wins, then the smallest key.
		{"exact key wins", `{"tool":"bash","SECURITY_RISK":"HIGH","security_risk":"LOW"}`, RiskLow, "LOW", true},
		{"smallest key wins", `{"tool":"bash","Security_risk":"HIGH","SECURITY_RISK":"LOW","security_RISK":"MEDIUM"}`, RiskLow, "LOW", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := DecodeJSONValue([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := v.(map[string]any)
			ev := Event{V: 1, ID: "x", Kind: KindAction, Data: data}
			for range 20 { // map order must never matter
				level, raw, found := ev.SecurityRisk()
				if level != tt.level || !sameValue(raw, tt.raw) || found != tt.found {
					t.Fatalf("SecurityRisk() = %s, %#v, %v; want %s, %#v, %v", level, raw, found, tt.level, tt.raw, tt.found)
				}
			}
			checkRiskStable(t, ev)
		})
	}
}

package events

import (
	"fmt"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"
)

// This file states, per kind, what Validate requires of Event.Data (and of
// Derived.Data): which fields must be present, their JSON types, enums and
// simple bounds. It is the Go twin of the JSON Schemas in schemas/; the
// tests there check, example by example and field by field, that both
// accept and refuse the same documents. Fields not named here are never
// checked, so unknown fields stay harmless.

// jsonType is the JSON type a field must have once decoded and normalised.
type jsonType uint8

const (
	anyType     jsonType = iota // anything, null included
	stringType                  // a string
	integerType                 // an integer that fits an int64
	uintType                    // a non-negative integer
	numberType                  // any number
	booleanType                 // true or false
	objectType                  // a JSON object
	arrayType                   // a JSON array
)

func (t jsonType) String() string {
	return [...]string{"anything", "a string", "an integer", "a non-negative integer",
		"a number", "a boolean", "an object", "an array"}[t]
}

// shape is a small JSON Schema: enough to say what a kind's data looks like.
type shape struct {
	typ      jsonType
	nullable bool
	// strings
	minLen   int          // in characters
	enum     []string     // allowed values
	pattern  *lazyPattern // must match
	dateTime bool         // an RFC 3339 time
	// numbers
	min, max *float64
	// objects
	fields []field // named fields; others are allowed and unchecked
	values *shape  // the shape of every value, when set
	// cross-field rules (if/then in the schema); run after fields pass
	check func(m map[string]any, path string) error
	// arrays
	items              *shape
	minItems, maxItems int // maxItems 0 means unbounded
}

// field is one named field of an object shape.
type field struct {
	name     string
	required bool
	shape    shape
}

// check validates v against s; path names v in errors ("data.args").
func (s *shape) validate(v any, path string) error {
	if v == nil {
		if s.typ == anyType || s.nullable {
			return nil
		}
		return &ValidationError{path, fmt.Sprintf("is null; it must be %s", s.typ)}
	}
	bad := func() error {
		return &ValidationError{path, fmt.Sprintf("is %s; it must be %s", typeName(v), s.typ)}
	}
	switch s.typ {
	case anyType:
		return nil
	case stringType:
		str, ok := v.(string)
		if !ok {
			return bad()
		}
		return s.validateString(str, path)
	case integerType:
		n, ok := v.(int64)
		if !ok {
			return bad()
		}
		return s.validateNumber(float64(n), path)
	case uintType:
		switch n := v.(type) {
		case int64:
			if n < 0 {
				return bad()
			}
			return s.validateNumber(float64(n), path)
		case uint64:
			return s.validateNumber(float64(n), path)
		}
		return bad()
	case numberType:
		switch n := v.(type) {
		case int64:
			return s.validateNumber(float64(n), path)
		case uint64:
			return s.validateNumber(float64(n), path)
		case float64:
			return s.validateNumber(n, path)
		}
		return bad()
	case booleanType:
		if _, ok := v.(bool); !ok {
			return bad()
		}
		return nil
	case objectType:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		return s.validateObject(m, path)
	case arrayType:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		if len(a) < s.minItems || (s.maxItems > 0 && len(a) > s.maxItems) {
			if s.minItems == s.maxItems {
				return &ValidationError{path, fmt.Sprintf("has %d items; it must have %d", len(a), s.minItems)}
			}
			return &ValidationError{path, fmt.Sprintf("has %d items; it must have %d to %d", len(a), s.minItems, s.maxItems)}
		}
		if s.items != nil {
			for i, item := range a {
				if err := s.items.validate(item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return bad()
}

func (s *shape) validateString(str, path string) error {
	if utf8.RuneCountInString(str) < s.minLen {
		return &ValidationError{path, "is empty"}
	}
	if len(s.enum) > 0 {
		ok := false
		for _, e := range s.enum {
			ok = ok || str == e
		}
		if !ok {
			return &ValidationError{path, fmt.Sprintf("is %q; it must be one of %q", str, s.enum)}
		}
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		return &ValidationError{path, fmt.Sprintf("is %q; it must match %s", str, s.pattern)}
	}
	if s.dateTime {
		if _, err := parseTime(str); err != nil {
			return &ValidationError{path, fmt.Sprintf("is %q; it must be an RFC 3339 time such as 2026-11-22T10:00:00Z", str)}
		}
	}
	return nil
}

func (s *shape) validateNumber(n float64, path string) error {
	if s.min != nil && n < *s.min {
		return &ValidationError{path, fmt.Sprintf("is %v; it must be at least %v", n, *s.min)}
	}
	if s.max != nil && n > *s.max {
		return &ValidationError{path, fmt.Sprintf("is %v; it must be at most %v", n, *s.max)}
	}
	return nil
}

func (s *shape) validateObject(m map[string]any, path string) error {
	for _, f := range s.fields {
		v, ok := m[f.name]
		if !ok {
			if f.required {
				return &ValidationError{path + "." + f.name, "is missing"}
			}
			continue
		}
		if err := f.shape.validate(v, path+"."+f.name); err != nil {
			return err
		}
	}
	if s.values != nil {
		for _, k := range SortedKeys(m) {
			if err := s.values.validate(m[k], path+"."+k); err != nil {
				return err
			}
		}
	}
	if s.check != nil {
		return s.check(m, path)
	}
	return nil
}

// parseTime parses an RFC 3339 time, accepting the lower-case t and z that
// RFC 3339 allows.
func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, upperASCII(s))
}

func upperASCII(s string) string {
	lower := false
	for i := 0; i < len(s) && !lower; i++ {
		lower = s[i] >= 'a' && s[i] <= 'z'
	}
	if !lower {
		return s // the usual spelling: nothing to change
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func bound(f float64) *float64 { return &f }

// Patterns shared with schemas/ (JSON Schema "pattern", RE2 syntax).
// They are compiled on first use: package initialisation runs for every
// command of the binary (`vigil hook` on every tool call of an agent), and
// the token pattern alone costs a few milliseconds to compile.
var (
	tokenPattern    = &lazyPattern{expr: `^[A-Za-z0-9_:@-]{1,128}$`}
	digestPattern   = &lazyPattern{expr: `^sha256:[0-9a-f]{64}$`}
	durationPattern = &lazyPattern{expr: `^([0-9]*\.?[0-9]+(ns|us|µs|ms|s|m|h))+$`}
	// tokenNamePattern names an HTTP token: up to 64 characters, no control ones.
	tokenNamePattern = &lazyPattern{expr: `^[^\x00-\x1f\x7f]{0,64}$`}
	// tokenHintPattern is the last characters of an HTTP token (base64url).
	tokenHintPattern = &lazyPattern{expr: `^[A-Za-z0-9_-]{0,4}$`}
)

// lazyPattern is a regular expression compiled once, on first use.
type lazyPattern struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// MatchString reports whether s matches the pattern.
func (p *lazyPattern) MatchString(s string) bool {
	p.once.Do(func() { p.re = regexp.MustCompile(p.expr) })
	return p.re.MatchString(s)
}

// String is the expression.
func (p *lazyPattern) String() string { return p.expr }

// Shapes reused across kinds.
var (
	anyShape      = shape{typ: anyType}
	stringShape   = shape{typ: stringType}
	nonEmptyShape = shape{typ: stringType, minLen: 1}
	uintShape     = shape{typ: uintType}
	boolShape     = shape{typ: booleanType}
	int64Shape    = shape{typ: integerType}
	verdictShape  = shape{typ: stringType, enum: []string{string(VerdictOnce), string(VerdictSession), string(VerdictAlways), string(VerdictDeny)}}
	levelShape    = shape{typ: stringType, enum: []string{string(RiskUnknown), string(RiskLow), string(RiskMedium), string(RiskHigh)}}
	// orderedLevelShape is a level a config compares against: UNKNOWN is
	// not ordered, so it cannot be a threshold.
	orderedLevelShape = shape{typ: stringType, enum: []string{string(RiskLow), string(RiskMedium), string(RiskHigh)}}
	reasonShape       = shape{typ: objectType, fields: []field{
		{"analyzer", true, nonEmptyShape},
		{"rule", true, nonEmptyShape},
		{"detail", false, stringShape},
		{"level", false, levelShape},
		{"span", false, shape{typ: arrayType, items: &uintShape, minItems: 2, maxItems: 2}},
	}}
	reasonsShape = shape{typ: arrayType, nullable: true, items: &reasonShape}
	policyRule   = shape{typ: objectType, fields: []field{
		{"name", true, nonEmptyShape},
		{"expr", true, nonEmptyShape},
		{"level", false, orderedLevelShape},
		{"reason", false, stringShape},
		{"action", false, shape{typ: stringType, enum: []string{""}}}, // only deny rules have one
	}}
	denyRule = shape{typ: objectType, fields: []field{
		{"name", true, nonEmptyShape},
		{"expr", true, nonEmptyShape},
		{"level", false, orderedLevelShape},
		{"reason", false, stringShape},
		{"action", false, shape{typ: stringType, enum: []string{DenyActionDeny, DenyActionAsk}}},
	}}
	pairingShape = shape{typ: objectType, fields: []field{
		{"user", true, nonEmptyShape},
		{"platform", false, stringShape},
		{"code_hash", false, stringShape},
		{"by", false, stringShape},
		{"claim_hash", false, stringShape},
		{"client", false, stringShape},
		{"name", false, stringShape},
		{"reason", false, stringShape},
	}}
)

var configShape = shape{typ: objectType, fields: []field{
	{"version", true, uintShape},
	{"scope", false, shape{typ: stringType, enum: []string{ScopeGlobal, ScopeConversation}}},
	{"conversation", false, shape{typ: stringType, pattern: tokenPattern}},
	{"analyzers", false, shape{typ: objectType, fields: []field{
		{"rules", false, boolShape},
		{"policy", false, boolShape},
		{"injection", false, boolShape},
		{"llm_hint", false, boolShape},
	}}},
	{"confirmation", true, shape{typ: objectType, fields: []field{
		{"mode", true, shape{typ: stringType, enum: []string{ModeAlways, ModeNever, ModeRisky, ModeAnalyzeOnly}}},
		{"threshold", false, orderedLevelShape},
		{"unknown", false, orderedLevelShape},
		{"client_handoff", false, shape{typ: stringType, enum: []string{ClientHandoffRecord, ClientHandoffIgnore}}},
	}}},
	{"policy_rules", false, shape{typ: arrayType, items: &policyRule}},
	{"deny_rules", false, shape{typ: arrayType, items: &denyRule}},
	{"allowlist", false, shape{typ: objectType, fields: []field{
		{"disable_session", false, boolShape},
		{"disable_always", false, boolShape},
	}}},
	{"sandbox", false, shape{typ: objectType, fields: []field{
		{"backends", false, shape{typ: arrayType, items: &nonEmptyShape}},
		{"policy", false, shape{typ: stringType, enum: []string{SandboxConfirm, SandboxAllowBelowHigh, SandboxAllow}}},
	}}},
	{"approval_timeout", false, shape{typ: stringType, pattern: durationPattern}},
	{"redaction", false, shape{typ: objectType, fields: []field{
		{"extra_rules", false, shape{typ: arrayType, items: &shape{typ: objectType, fields: []field{
			{"name", true, nonEmptyShape},
			{"regex", true, nonEmptyShape},
			{"keywords", false, shape{typ: arrayType, items: &stringShape}},
		}}}},
		{"allow", false, shape{typ: arrayType, items: &stringShape}},
		{"entropy_threshold", false, shape{typ: numberType, min: bound(0), max: bound(8)}},
	}}},
	{"workspace", false, stringShape},
	{"notify", false, notifyShape},
}, check: checkConfigShape}

// checkConfigShape holds the cross-field rules the config schema states
// with if/then; ValidateConfig checks the rest.
func checkConfigShape(m map[string]any, path string) error {
	_, hasConv := m["conversation"]
	switch {
	case m["scope"] == ScopeConversation && !hasConv:
		return &ValidationError{path + ".conversation", `is missing; a config with scope "conversation" names its conversation`}
	case m["scope"] != ScopeConversation && hasConv:
		return &ValidationError{path + ".conversation", `is set, but scope is not "conversation"; set scope to "conversation" or drop the field`}
	}
	conf, _ := m["confirmation"].(map[string]any)
	mode, _ := conf["mode"].(string)
	an, _ := m["analyzers"].(map[string]any)
	anyOn := false
	for _, k := range []string{"rules", "policy", "injection", "llm_hint"} {
		anyOn = anyOn || an[k] == true
	}
	switch {
	case (mode == ModeRisky || mode == ModeAnalyzeOnly) && !anyOn:
		return &ValidationError{path + ".analyzers", fmt.Sprintf("are all off, but confirmation mode %q needs a risk level; turn on an analyzer (rules, policy, injection or llm_hint) or use mode %q or %q", mode, ModeAlways, ModeNever)}
	case mode == ModeNever && anyOn:
		return &ValidationError{path + ".confirmation.mode", fmt.Sprintf("is %q but analyzers are on; to score and audit without ever asking, say so with mode %q", ModeNever, ModeAnalyzeOnly)}
	}
	return nil
}

// dataShapes gives the shape of each kind's data. Read-only. Built on
// first use: built at initialisation, the table cost every command of the
// vigil binary its start-up (`vigil hook` included, which validates in the
// server).
var dataShapes = sync.OnceValue(func() map[Kind]*shape {
	return map[Kind]*shape{
		KindConversationStarted: {typ: objectType, fields: []field{
			{"backend", false, stringShape},
			{"workspace", false, stringShape},
		}},
		KindAction: {typ: objectType, fields: []field{
			{"tool", true, nonEmptyShape},
			// args is an object; its security_risk, like data's, is never
			// checked: any value is accepted and normalised by SecurityRisk.
			{"args", false, shape{typ: objectType}},
			{"security_risk", false, anyShape},
			{"thought", false, anyShape},
			{"backend", false, stringShape},
			{"cwd", false, stringShape},
		}},
		KindObservation: {typ: objectType, fields: []field{
			{"action_id", true, nonEmptyShape},
			{"content", false, anyShape},
			{"exit_code", false, shape{typ: integerType, nullable: true}},
		}},
		KindMessage: {typ: objectType, fields: []field{
			{"role", true, nonEmptyShape},
			{"content", true, anyShape},
		}},
		KindContextLoaded: {typ: objectType, fields: []field{
			{"path", true, nonEmptyShape},
			{"content", true, stringShape},
		}},
		KindConfig: &configShape,
		KindApprovalDecision: {typ: objectType, fields: []field{
			{"action_id", true, nonEmptyShape},
			{"verdict", true, verdictShape},
			{"approver", false, stringShape},
			{"reason", false, stringShape},
			{"log_seq", false, uintShape},
			{"digest", false, shape{typ: stringType, pattern: digestPattern}},
		}},
		KindAllowlistChanged: {typ: objectType, fields: []field{
			{"op", true, shape{typ: stringType, enum: []string{AllowlistAdd, AllowlistRevoke}}},
			{"entry_id", true, nonEmptyShape},
			{"shape", false, stringShape},
			{"action_id", false, stringShape},
			{"by", false, stringShape},
			{"reason", false, stringShape},
		}, check: func(m map[string]any, path string) error {
			if s, _ := m["shape"].(string); m["op"] == AllowlistAdd && s == "" {
				return &ValidationError{path + ".shape", "is missing or empty; an added entry needs the command shape it allows"}
			}
			return nil
		}},
		KindApprovalExpired: {typ: objectType, fields: []field{
			{"action_id", true, nonEmptyShape},
			{"reason", false, stringShape},
		}},
		KindPairingRequested: &pairingShape,
		KindPairingApproved:  &pairingShape,
		KindPairingRevoked:   &pairingShape,
		KindPairingDenied:    &pairingShape,
		KindPairingExpired:   &pairingShape,
		KindAuditSeal: {typ: objectType, fields: []field{
			{"by", false, stringShape},
			{"reason", false, stringShape},
		}},
		KindTokenCreated: {typ: objectType, fields: []field{
			{"token_id", true, shape{typ: stringType, pattern: tokenPattern}},
			{"role", true, shape{typ: stringType, enum: []string{"agent", "runtime", "approver", "admin"}}},
			{"name", false, shape{typ: stringType, pattern: tokenNamePattern}},
			{"hash", true, shape{typ: stringType, pattern: digestPattern}},
			{"hint", false, shape{typ: stringType, pattern: tokenHintPattern}},
			{"by", false, stringShape},
		}},
		KindTokenRevoked: {typ: objectType, fields: []field{
			{"token_id", true, shape{typ: stringType, pattern: tokenPattern}},
			{"by", false, stringShape},
			{"reason", false, stringShape},
		}},

		KindRiskAssessed: {typ: objectType, fields: []field{
			{"action_id", true, nonEmptyShape},
			{"log_seq", true, uintShape},
			{"config_version", true, int64Shape},
			{"level", true, levelShape},
			{"reasons", true, reasonsShape},
		}},
		KindGateRequested: {typ: objectType, fields: []field{
			{"action_id", true, nonEmptyShape},
			{"log_seq", true, uintShape},
			{"level", true, levelShape},
			{"reasons", true, reasonsShape},
			{"tool", false, stringShape},
			{"command", false, stringShape},
			{"shape", false, stringShape},
			{"timeout", false, stringShape},
			{"config_version", false, int64Shape},
			{"agent", false, stringShape},
			{"backend", false, stringShape},
			{"backend_claimed", false, stringShape},
			{"digest", false, shape{typ: stringType, pattern: digestPattern}},
		}},
		KindGateDecided: {typ: objectType, fields: []field{
			{"action_id", true, nonEmptyShape},
			{"log_seq", true, uintShape},
			{"outcome", true, shape{typ: stringType, enum: []string{string(OutcomeAllow), string(OutcomeDeny)}}},
			{"by", true, shape{typ: stringType, enum: []string{string(ByRule), string(ByHuman), string(ByAllowlist), string(BySandbox), string(ByTimeout), string(ByMode), string(BySession), string(ByClient)}}},
			{"level", true, levelShape},
			{"reasons", true, reasonsShape},
			{"approver", false, stringShape},
			{"reason", false, stringShape},
			{"decision_seq", true, uintShape},
			{"shape", false, stringShape},
			{"config_version", false, int64Shape},
			{"verdict", false, verdictShape},
			{"entry_id", false, stringShape},
			{"would", false, shape{typ: stringType, enum: []string{"", "ask", "deny"}}},
			{"ask_security_risk", false, boolShape},
			{"digest", false, shape{typ: stringType, pattern: digestPattern}},
		}},
		KindAuditCheckpoint: {typ: objectType, fields: []field{
			{"tree_size", true, uintShape},
			{"root_hash", true, nonEmptyShape},
			{"note", true, nonEmptyShape},
			{"interval", false, uintShape},
			{"first_seq", false, uintShape},
			{"leaves", false, stringShape},
			{"prefix", false, stringShape},
		}},
		KindAlert: {typ: objectType, fields: []field{
			{"severity", true, nonEmptyShape},
			{"reason", true, nonEmptyShape},
			{"event_id", false, stringShape},
			{"log_seq", false, uintShape},
			{"subject", false, stringShape},
		}},
		KindStats: {typ: objectType, fields: []field{
			{"conversation", true, nonEmptyShape},
			{"events", true, uintShape},
			{"by_kind", true, shape{typ: objectType, nullable: true, values: &uintShape}},
			{"actions", false, uintShape},
			{"redacted", false, uintShape},
			{"first_seq", false, uintShape},
			{"last_seq", true, uintShape},
		}},
		KindDeadLetter: {typ: objectType, fields: []field{
			{"reason", true, nonEmptyShape},
			{"subject", true, stringShape},
			{"digest", true, shape{typ: stringType, pattern: digestPattern}},
			{"size", true, uintShape},
			{"event_id", false, stringShape},
			{"time", true, shape{typ: stringType, dateTime: true}},
		}},
	}
})

// validateData checks data against the shape of kind k.
func validateData(k Kind, data map[string]any) error {
	s, ok := dataShapes()[k]
	if !ok {
		return &ValidationError{"kind", fmt.Sprintf("%q has no data rules", k)}
	}
	if data == nil {
		data = map[string]any{}
	}
	return s.validateObject(data, "data")
}

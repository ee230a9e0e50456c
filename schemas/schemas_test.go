package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vigil-dev/vigil/events"
)

// The examples live at the repository root, shared with package events.
const exampleDir = "../testdata/events"

var validator = sync.OnceValues(New)

func mustValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := validator()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

// schemaFiles reads every embedded schema as generic JSON.
func schemaFiles(t testing.TB) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	err := fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), path)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out[path] = doc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dataFile is the data schema of a kind.
func dataFile(k events.Kind) string { return string(k) + ".json" }

func TestSchemasCompileAndDeclareThemselves(t *testing.T) {
	t.Parallel()
	mustValidator(t)
	for name, doc := range schemaFiles(t) {
		if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %v, want draft 2020-12", name, doc["$schema"])
		}
		if doc["$id"] != BaseURL+name {
			t.Errorf("%s: $id = %v, want %s", name, doc["$id"], BaseURL+name)
		}
		if name != DefsFile && doc["title"] == nil {
			t.Errorf("%s: no title", name)
		}
	}
}

// TestEveryKindHasASchema checks the schemas list exactly the kinds Go knows.
func TestEveryKindHasASchema(t *testing.T) {
	t.Parallel()
	v := mustValidator(t)
	var loggable, derived []string
	want := map[string]bool{EnvelopeFile: true, DerivedFile: true, DefsFile: true}
	for _, k := range events.AllKinds() {
		want[dataFile(k)] = true
		if k.IsDerived() {
			derived = append(derived, string(k))
		} else {
			loggable = append(loggable, string(k))
		}
	}
	if got := v.EventKinds(); !slices.Equal(got, loggable) {
		t.Errorf("envelope.json kinds = %q, want events' agent and control kinds %q", got, loggable)
	}
	if got := v.DerivedKinds(); !slices.Equal(got, derived) {
		t.Errorf("derived.json kinds = %q, want events' derived kinds %q", got, derived)
	}
	files := schemaFiles(t)
	for name := range want {
		if files[name] == nil {
			t.Errorf("no schema %s", name)
		}
	}
	for name := range files {
		if !want[name] {
			t.Errorf("schema %s describes no kind events knows", name)
		}
	}
}

// walk calls f on every JSON object inside v, with its JSON pointer.
func walk(v any, ptr string, f func(ptr string, obj map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(ptr, x)
		for _, k := range sortedKeys(x) {
			walk(x[k], ptr+"/"+k, f)
		}
	case []any:
		for i, item := range x {
			walk(item, fmt.Sprintf("%s/%d", ptr, i), f)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestUnknownFieldsAllowed checks that every object schema with named
// properties keeps unknown fields (additionalProperties true, or a schema
// for map values): Vigil round-trips them, so no schema may refuse them.
func TestUnknownFieldsAllowed(t *testing.T) {
	t.Parallel()
	for name, doc := range schemaFiles(t) {
		walk(doc, "", func(ptr string, obj map[string]any) {
			if _, ok := obj["properties"].(map[string]any); !ok {
				return
			}
			if strings.Contains(ptr, "/if") || strings.Contains(ptr, "/not") || strings.Contains(ptr, "/then") || strings.Contains(ptr, "/else") || strings.Contains(ptr, "/anyOf") {
				return // conditions, not shapes
			}
			ap, ok := obj["additionalProperties"]
			if !ok {
				t.Errorf("%s#%s: set additionalProperties true; unknown fields are kept", name, ptr)
				return
			}
			if ap != true {
				if _, isSchema := ap.(map[string]any); !isSchema {
					t.Errorf("%s#%s: additionalProperties = %v; unknown fields are kept", name, ptr, ap)
				}
			}
		})
	}
}

// TestSecurityRiskNeverRequired: security_risk is optional everywhere.
func TestSecurityRiskNeverRequired(t *testing.T) {
	t.Parallel()
	for name, doc := range schemaFiles(t) {
		walk(doc, "", func(ptr string, obj map[string]any) {
			req, _ := obj["required"].([]any)
			for _, r := range req {
				if r == "security_risk" {
					t.Errorf("%s#%s requires security_risk; it must never be required", name, ptr)
				}
			}
		})
	}
}

// withSecurityRisk returns the action example with the hint set as asked.
func withSecurityRisk(t testing.TB, inData, inArgs any, setData, setArgs bool) []byte {
	t.Helper()
	doc := readJSON(t, filepath.Join(exampleDir, "action.json"))
	data := doc["data"].(map[string]any)
	args := data["args"].(map[string]any)
	delete(data, "security_risk")
	delete(args, "security_risk")
	if setData {
		data["security_risk"] = inData
	}
	if setArgs {
		args["security_risk"] = inArgs
	}
	return mustMarshal(t, doc)
}

// TestSecurityRiskAcceptedEverywhere: string (any case), integer or null,
// in data or in args, or absent: the schema and Go both accept, and Go
// normalises the value (unrecognised ones to UNKNOWN).
func TestSecurityRiskAcceptedEverywhere(t *testing.T) {
	t.Parallel()
	v := mustValidator(t)
	values := []struct {
		raw  any
		want events.Risk
	}{
		{"LOW", events.RiskLow}, {"medium", events.RiskMedium}, {"High", events.RiskHigh},
		{"UNKNOWN", events.RiskUnknown}, {" high ", events.RiskHigh}, {"SecurityRisk.HIGH", events.RiskHigh},
		{0, events.RiskLow}, {1, events.RiskMedium}, {2, events.RiskHigh}, {-1, events.RiskUnknown}, {7, events.RiskUnknown},
		{nil, events.RiskUnknown}, {"catastrophic", events.RiskUnknown}, {"", events.RiskUnknown},
		// Beyond string, integer and null: still tolerated, read as UNKNOWN.
		{1.5, events.RiskUnknown}, {true, events.RiskUnknown}, {map[string]any{"level": "HIGH"}, events.RiskUnknown},
		{[]any{"HIGH"}, events.RiskUnknown},
	}
	for _, val := range values {
		for _, where := range []string{"data", "args"} {
			t.Run(fmt.Sprintf("%s=%v", where, val.raw), func(t *testing.T) {
				t.Parallel()
				doc := withSecurityRisk(t, val.raw, val.raw, where == "data", where == "args")
				if err := v.Validate("action", doc); err != nil {
					t.Errorf("schema refuses security_risk %#v in %s: %v", val.raw, where, err)
				}
				ev, err := events.DecodeJSON(doc)
				if err != nil {
					t.Fatal(err)
				}
				if err := ev.Validate(); err != nil {
					t.Errorf("Go refuses security_risk %#v in %s: %v", val.raw, where, err)
				}
				level, _, found := ev.SecurityRisk()
				if level != val.want || !found {
					t.Errorf("SecurityRisk() = %s, found %v; want %s, found", level, found, val.want)
				}
			})
		}
	}
	t.Run("absent", func(t *testing.T) {
		t.Parallel()
		doc := withSecurityRisk(t, nil, nil, false, false)
		if err := v.Validate("action", doc); err != nil {
			t.Errorf("schema requires security_risk: %v", err)
		}
		ev, err := events.DecodeJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("Go requires security_risk: %v", err)
		}
	})
}

func readJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// views reads each kind's typed view.
var eventViews = map[events.Kind]func(*events.Event) error{
	events.KindConversationStarted: eventView[events.ConversationStarted],
	events.KindAction:              eventView[events.Action],
	events.KindObservation:         eventView[events.Observation],
	events.KindMessage:             eventView[events.Message],
	events.KindContextLoaded:       eventView[events.ContextLoaded],
	events.KindConfig:              eventView[events.Config],
	events.KindApprovalDecision:    eventView[events.ApprovalDecision],
	events.KindAllowlistChanged:    eventView[events.AllowlistChanged],
	events.KindApprovalExpired:     eventView[events.ApprovalExpired],
	events.KindPairingRequested:    eventView[events.Pairing],
	events.KindPairingApproved:     eventView[events.Pairing],
	events.KindPairingRevoked:      eventView[events.Pairing],
	events.KindPairingDenied:       eventView[events.Pairing],
	events.KindPairingExpired:      eventView[events.Pairing],
	events.KindAuditSeal:           eventView[events.AuditSeal],
	events.KindTokenCreated:        eventView[events.TokenCreated],
	events.KindTokenRevoked:        eventView[events.TokenRevoked],
}

var derivedViews = map[events.Kind]func(*events.Derived) error{
	events.KindRiskAssessed:    derivedView[events.RiskAssessed],
	events.KindGateRequested:   derivedView[events.GateRequested],
	events.KindGateDecided:     derivedView[events.GateDecided],
	events.KindAuditCheckpoint: derivedView[events.AuditCheckpoint],
	events.KindAlert:           derivedView[events.Alert],
	events.KindStats:           derivedView[events.Stats],
	events.KindDeadLetter:      derivedView[events.DeadLetter],
}

// dataTypes is the Go type of each kind's data.
var dataTypes = map[events.Kind]reflect.Type{
	events.KindConversationStarted: reflect.TypeFor[events.ConversationStarted](),
	events.KindAction:              reflect.TypeFor[events.Action](),
	events.KindObservation:         reflect.TypeFor[events.Observation](),
	events.KindMessage:             reflect.TypeFor[events.Message](),
	events.KindContextLoaded:       reflect.TypeFor[events.ContextLoaded](),
	events.KindConfig:              reflect.TypeFor[events.Config](),
	events.KindApprovalDecision:    reflect.TypeFor[events.ApprovalDecision](),
	events.KindAllowlistChanged:    reflect.TypeFor[events.AllowlistChanged](),
	events.KindApprovalExpired:     reflect.TypeFor[events.ApprovalExpired](),
	events.KindPairingRequested:    reflect.TypeFor[events.Pairing](),
	events.KindPairingApproved:     reflect.TypeFor[events.Pairing](),
	events.KindPairingRevoked:      reflect.TypeFor[events.Pairing](),
	events.KindPairingDenied:       reflect.TypeFor[events.Pairing](),
	events.KindPairingExpired:      reflect.TypeFor[events.Pairing](),
	events.KindAuditSeal:           reflect.TypeFor[events.AuditSeal](),
	events.KindTokenCreated:        reflect.TypeFor[events.TokenCreated](),
	events.KindTokenRevoked:        reflect.TypeFor[events.TokenRevoked](),
	events.KindRiskAssessed:        reflect.TypeFor[events.RiskAssessed](),
	events.KindGateRequested:       reflect.TypeFor[events.GateRequested](),
	events.KindGateDecided:         reflect.TypeFor[events.GateDecided](),
	events.KindAuditCheckpoint:     reflect.TypeFor[events.AuditCheckpoint](),
	events.KindAlert:               reflect.TypeFor[events.Alert](),
	events.KindStats:               reflect.TypeFor[events.Stats](),
	events.KindDeadLetter:          reflect.TypeFor[events.DeadLetter](),
}

func eventView[T any](e *events.Event) error {
	_, err := events.DataAs[T](e)
	return err
}

func derivedView[T any](d *events.Derived) error {
	_, err := events.DerivedDataAs[T](d)
	return err
}

// goVerdict decodes, validates and reads the typed view of doc as Vigil
// does; nil means Go accepts it.
func goVerdict(doc []byte, derived bool) error {
	if derived {
		d, err := events.DecodeDerivedJSON(doc)
		if err != nil {
			return err
		}
		if err := d.Validate(); err != nil {
			return err
		}
		return derivedViews[d.Kind](&d)
	}
	ev, err := events.DecodeJSON(doc)
	if err != nil {
		return err
	}
	if err := ev.Validate(); err != nil {
		return err
	}
	return eventViews[ev.Kind](&ev)
}

// schemaVerdict validates doc against envelope.json or derived.json.
func schemaVerdict(v *Validator, doc []byte, derived bool) error {
	if derived {
		return v.ValidateDerived(doc)
	}
	return v.ValidateEvent(doc)
}

type example struct {
	name    string
	raw     []byte
	derived bool
}

func examples(t testing.TB, pattern string) []example {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(exampleDir, pattern))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples %s in %s (%v)", pattern, exampleDir, err)
	}
	var out []example
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Kind events.Kind `json:"kind"`
		}
		_ = json.Unmarshal(raw, &head)
		rel, _ := filepath.Rel(exampleDir, p)
		out = append(out, example{
			name:    filepath.ToSlash(rel),
			raw:     raw,
			derived: head.Kind.IsDerived() || strings.HasPrefix(filepath.Base(p), "derived-"),
		})
	}
	return out
}

// TestGoldenExamplesValid: every valid example is valid for the schema and
// for Go (decode, Validate, typed view); so are their canonical encodings.
func TestGoldenExamplesValid(t *testing.T) {
	t.Parallel()
	v := mustValidator(t)
	all := append(examples(t, "*.json"), examples(t, "canonical/*.json")...)
	for _, x := range all {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			if err := goVerdict(x.raw, x.derived); err != nil {
				t.Errorf("Go refuses it: %v", err)
			}
			if err := schemaVerdict(v, x.raw, x.derived); err != nil {
				t.Errorf("the schema refuses it: %v", err)
			}
		})
	}
}

// TestV0ExamplesUpcastToValid: the schemas describe v1; a v0 example is
// read by Go and, once upcast, is valid for the schema.
func TestV0ExamplesUpcastToValid(t *testing.T) {
	t.Parallel()
	v := mustValidator(t)
	for _, x := range examples(t, "v0/*.json") {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			if err := v.ValidateEvent(x.raw); err == nil {
				t.Errorf("the v1 schema accepts a v0 example as it is; it is not an example of upcasting")
			}
			ev, err := events.DecodeJSON(x.raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := ev.Validate(); err != nil {
				t.Fatalf("Go refuses the upcast event: %v", err)
			}
			if err := v.Validate(string(ev.Kind), ev); err != nil {
				t.Errorf("the upcast event is not valid v1: %v", err)
			}
		})
	}
}

// TestInvalidExamples: both refuse every invalid example; the schema's
// refusal concerns the field Go's refusal names. The go-only examples break
// rules a JSON Schema cannot state: the schema accepts them, Go does not.
func TestInvalidExamples(t *testing.T) {
	t.Parallel()
	v := mustValidator(t)
	for _, x := range examples(t, "invalid/*.json") {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			goErr := goVerdict(x.raw, x.derived)
			if goErr == nil {
				t.Error("Go accepts it")
			}
			err := schemaVerdict(v, x.raw, x.derived)
			if err == nil {
				t.Fatal("the schema accepts it")
			}
			var ve *events.ValidationError
			if errors.As(goErr, &ve) && !refusesAt(err, ve.Field) {
				t.Errorf("Go refuses field %s, but the schema refuses for other reasons:\n%v", ve.Field, err)
			}
		})
	}
	for _, x := range examples(t, "invalid/go-only/*.json") {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			if err := goVerdict(x.raw, x.derived); err == nil {
				t.Error("Go accepts it")
			}
			if err := schemaVerdict(v, x.raw, x.derived); err != nil {
				t.Errorf("the schema refuses it; move it out of go-only: %v", err)
			}
		})
	}
}

// refusesAt reports whether some leaf of the schema error lies on the path
// of field ("data.confirmation.mode"): at it, inside it, or at one of its
// parents (a missing required field is reported at its parent).
func refusesAt(err error, field string) bool {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	want := strings.FieldsFunc(field, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	var leaves []*jsonschema.ValidationError
	var collect func(e *jsonschema.ValidationError)
	collect = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			collect(c)
		}
	}
	collect(ve)
	for _, l := range leaves {
		n := min(len(l.InstanceLocation), len(want))
		if slices.Equal(l.InstanceLocation[:n], want[:n]) {
			return true
		}
	}
	return false
}

// TestValidateAPI covers the package's entry points.
func TestValidateAPI(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(exampleDir, "action.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var asMap map[string]any
	if err := json.Unmarshal(raw, &asMap); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]any{"bytes": raw, "raw message": json.RawMessage(raw), "map": asMap, "event": ev, "event pointer": &ev} {
		if err := Validate("action", doc); err != nil {
			t.Errorf("Validate(action, %s): %v", name, err)
		}
	}
	if err := Validate("message", raw); err == nil {
		t.Error("Validate(message, an action) = nil, want an error")
	}
	if err := Validate("tool.called", raw); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("Validate(unknown kind) = %v, want ErrUnknownKind", err)
	}
	if err := Validate("action", []byte("{")); err == nil {
		t.Error("Validate(action, truncated JSON) = nil")
	}
	v := mustValidator(t)
	if err := v.ValidateData("action", map[string]any{"tool": "bash"}); err != nil {
		t.Errorf("ValidateData(action, {tool: bash}) = %v", err)
	}
	if err := v.ValidateData("action", map[string]any{"args": map[string]any{}}); err == nil {
		t.Error("ValidateData(action, no tool) = nil")
	}
	if err := v.ValidateData("dlq.nope", map[string]any{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("ValidateData(unknown kind) = %v, want ErrUnknownKind", err)
	}
	d, err := events.DecodeDerivedJSON(mustRead(t, "risk.assessed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate("risk.assessed", d); err != nil {
		t.Errorf("Validate(risk.assessed, Derived): %v", err)
	}
	if _, err := fs.ReadFile(FS(), "envelope.json"); err != nil {
		t.Errorf("FS() has no envelope.json: %v", err)
	}
}

func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exampleDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

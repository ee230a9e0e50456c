// Package schemas holds the JSON Schemas (draft 2020-12) of Vigil's events,
// the contract for producers in any language, and validates documents
// against them.
//
// The files, embedded here and served as they are by FS:
//
//   - envelope.json: an event of an agent or control kind, as sent to the
//     ingest subjects and stored in VIGIL_LOG. It dispatches on kind to the
//     kind's data schema, so it alone validates a whole event.
//   - derived.json: an event a processor publishes to VIGIL_DERIVED.
//   - <kind>.json: the data of one kind (action.json, gate.decided.json …).
//     Data schemas allow unknown fields, because Vigil keeps them.
//   - defs.json: shared definitions (ids, tokens, levels, security_risk).
//
// The schemas describe version 1 exactly. Vigil's decoders (package events)
// also read older shapes and upcast them; a few rules a JSON Schema cannot
// state (see config.json's description) are checked by events.Validate
// only. The tests in this package check, example by example and field by
// field, that the schemas and the Go types accept and refuse the same
// documents.
//
// security_risk is never required and never refused, wherever it appears.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BaseURL is the prefix of every schema's $id; relative $refs resolve
// against it. It names the schemas; nothing is fetched from it.
const BaseURL = "https://github.com/vigil-dev/vigil/schemas/"

// The schema files that are not the data of one kind.
const (
	EnvelopeFile = "envelope.json"
	DerivedFile  = "derived.json"
	DefsFile     = "defs.json"
)

//go:embed *.json
var files embed.FS

// ErrUnknownKind is returned for a kind no schema describes.
var ErrUnknownKind = errors.New("schemas: unknown kind")

// FS returns the schema files, read-only, e.g. to serve them over HTTP.
func FS() fs.FS { return files }

// Validator validates documents against the compiled schemas. It is safe
// for concurrent use.
type Validator struct {
	envelope, derived *jsonschema.Schema
	data              map[string]*jsonschema.Schema // by kind
	eventKinds        []string                      // envelope.json's kind enum
	derivedKinds      []string                      // derived.json's kind enum
}

// New compiles every embedded schema. Formats (date-time) are asserted, not
// just annotated, and nothing is loaded from the network.
func New() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schemas: %s: %w", e.Name(), err)
		}
		if err := c.AddResource(BaseURL+e.Name(), doc); err != nil {
			return nil, fmt.Errorf("schemas: %s: %w", e.Name(), err)
		}
		names = append(names, e.Name())
	}
	v := &Validator{data: map[string]*jsonschema.Schema{}}
	for _, name := range names {
		s, err := c.Compile(BaseURL + name)
		if err != nil {
			return nil, fmt.Errorf("schemas: compile %s: %w", name, err)
		}
		switch name {
		case EnvelopeFile:
			v.envelope = s
		case DerivedFile:
			v.derived = s
		case DefsFile:
		default:
			v.data[strings.TrimSuffix(name, ".json")] = s
		}
	}
	if v.envelope == nil || v.derived == nil {
		return nil, errors.New("schemas: envelope.json or derived.json is missing")
	}
	if v.eventKinds, err = kindEnum(EnvelopeFile); err != nil {
		return nil, err
	}
	if v.derivedKinds, err = kindEnum(DerivedFile); err != nil {
		return nil, err
	}
	return v, nil
}

// kindEnum reads the kind enum of an envelope schema.
func kindEnum(name string) ([]string, error) {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Properties struct {
			Kind struct {
				Enum []string `json:"enum"`
			} `json:"kind"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", name, err)
	}
	return doc.Properties.Kind.Enum, nil
}

// EventKinds lists the kinds of envelope.json (agent and control kinds).
func (v *Validator) EventKinds() []string { return slices.Clone(v.eventKinds) }

// DerivedKinds lists the kinds of derived.json.
func (v *Validator) DerivedKinds() []string { return slices.Clone(v.derivedKinds) }

// Validate checks doc, a whole event of the given kind, against
// envelope.json or derived.json (which check its data against <kind>.json).
// doc's own kind must be kind. doc may be JSON text ([]byte,
// json.RawMessage) or any value that encodes to JSON (a map, an
// events.Event, an events.Derived).
func (v *Validator) Validate(kind string, doc any) error {
	inst, err := instance(doc)
	if err != nil {
		return err
	}
	var s *jsonschema.Schema
	switch {
	case slices.Contains(v.eventKinds, kind):
		s = v.envelope
	case slices.Contains(v.derivedKinds, kind):
		s = v.derived
	default:
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	if m, ok := inst.(map[string]any); !ok || m["kind"] != kind {
		return fmt.Errorf("schemas: document is not an event of kind %q", kind)
	}
	return s.Validate(inst)
}

// ValidateEvent checks doc against envelope.json, whatever its kind.
func (v *Validator) ValidateEvent(doc any) error {
	inst, err := instance(doc)
	if err != nil {
		return err
	}
	return v.envelope.Validate(inst)
}

// ValidateDerived checks doc against derived.json, whatever its kind.
func (v *Validator) ValidateDerived(doc any) error {
	inst, err := instance(doc)
	if err != nil {
		return err
	}
	return v.derived.Validate(inst)
}

// ValidateData checks the data of one event of the given kind against
// <kind>.json.
func (v *Validator) ValidateData(kind string, data any) error {
	s, ok := v.data[kind]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	inst, err := instance(data)
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// instance turns doc into the JSON value the validator expects.
func instance(doc any) (any, error) {
	var b []byte
	switch d := doc.(type) {
	case []byte:
		b = d
	case json.RawMessage:
		b = d
	default:
		var err error
		if b, err = json.Marshal(doc); err != nil {
			return nil, fmt.Errorf("schemas: document does not encode as JSON: %w", err)
		}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schemas: document is not JSON: %w", err)
	}
	return v, nil
}

// noLoader refuses every URL: all schemas are embedded, so a $ref that
// reaches for anything else is a bug, not a download.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas: %s is not an embedded schema", url)
}

var defaultValidator = sync.OnceValues(New)

// Validate checks doc, a whole event of the given kind, with the embedded
// schemas; see Validator.Validate.
func Validate(kind string, doc any) error {
	v, err := defaultValidator()
	if err != nil {
		return err
	}
	return v.Validate(kind, doc)
}

package schemas

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// This file checks that the Go types and the schemas say the same thing,
// two ways: structurally (every field of every typed view is a property of
// the kind's schema with a matching JSON type, and back), and by behaviour
// (thousands of one-field mutations of the golden examples, each of which
// the schema and Go must both accept or both refuse).

// resolver follows $refs between the embedded schema files.
type resolver struct{ files map[string]map[string]any }

// resolve returns node with any $ref followed, from within file.
func (r resolver) resolve(file string, node map[string]any) (string, map[string]any) {
	for range 10 {
		ref, ok := node["$ref"].(string)
		if !ok {
			return file, node
		}
		target, frag, _ := strings.Cut(ref, "#")
		if target != "" {
			file = target
		}
		node = r.files[file]
		for _, p := range strings.Split(strings.Trim(frag, "/"), "/") {
			if p == "" {
				continue
			}
			next, _ := node[p].(map[string]any)
			node = next
		}
	}
	return file, node
}

// jsonTypes lists the JSON types node admits ("any" when it does not say).
func (r resolver) jsonTypes(file string, node map[string]any) []string {
	file, node = r.resolve(file, node)
	var out []string
	switch t := node["type"].(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, x := range t {
			out = append(out, x.(string))
		}
	}
	if len(out) > 0 {
		return normTypes(out)
	}
	if enum, ok := node["enum"].([]any); ok {
		for _, v := range enum {
			out = append(out, jsonTypeOf(v))
		}
		return normTypes(out)
	}
	if c, ok := node["const"]; ok {
		return []string{jsonTypeOf(c)}
	}
	if branches, ok := node["anyOf"].([]any); ok {
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			if _, neg := bm["not"]; neg && bm["type"] == nil {
				return []string{"any"} // "anything else", as security_risk says
			}
			out = append(out, r.jsonTypes(file, bm)...)
		}
		return normTypes(out)
	}
	if branches, ok := node["allOf"].([]any); ok && len(branches) > 0 {
		bm, _ := branches[0].(map[string]any)
		return r.jsonTypes(file, bm)
	}
	return []string{"any"}
}

func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func normTypes(ts []string) []string {
	slices.Sort(ts)
	return slices.Compact(ts)
}

// goTypes lists the JSON types a Go type encodes as.
func goTypes(t reflect.Type) []string {
	switch t.Kind() {
	case reflect.String:
		return []string{"string"}
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{"integer"}
	case reflect.Float32, reflect.Float64:
		return []string{"number"}
	case reflect.Slice, reflect.Array:
		return []string{"array"}
	case reflect.Map, reflect.Struct:
		return []string{"object"}
	case reflect.Pointer:
		return normTypes(append(goTypes(t.Elem()), "null"))
	case reflect.Interface:
		return []string{"any"}
	}
	return []string{t.Kind().String()}
}

// nilable reports whether the Go type can encode as null.
func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	}
	return false
}

// compareStruct checks typ's JSON fields against the object schema node,
// except the fields named in skip.
func (r resolver) compareStruct(t *testing.T, where string, typ reflect.Type, file string, node map[string]any, skip ...string) {
	file, node = r.resolve(file, node)
	props, _ := node["properties"].(map[string]any)
	fields := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = true
		if slices.Contains(skip, name) {
			continue
		}
		at := where + "." + name
		p, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s (Go %s.%s) is not a property of the schema %s", at, typ.Name(), f.Name, file)
			continue
		}
		gt, st := goTypes(f.Type), r.jsonTypes(file, p)
		if slices.Contains(gt, "any") {
			if !slices.Contains(st, "any") {
				t.Errorf("%s: Go accepts any value (%s), the schema only %q", at, f.Type, st)
			}
			continue
		}
		schemaNonNull := slices.DeleteFunc(slices.Clone(st), func(s string) bool { return s == "null" })
		goNonNull := slices.DeleteFunc(slices.Clone(gt), func(s string) bool { return s == "null" })
		if !slices.Equal(schemaNonNull, goNonNull) {
			t.Errorf("%s: Go type %s is JSON %q, the schema says %q", at, f.Type, gt, st)
		}
		if slices.Contains(st, "null") && !nilable(f.Type) {
			t.Errorf("%s: the schema allows null, Go type %s cannot hold it", at, f.Type)
		}
		if f.Type.Kind() == reflect.Pointer && !slices.Contains(st, "null") {
			t.Errorf("%s: Go type %s may be null, the schema does not allow it", at, f.Type)
		}
		elem := f.Type
		pfile, pnode := r.resolve(file, p)
		if elem.Kind() == reflect.Slice {
			elem = elem.Elem()
			items, _ := pnode["items"].(map[string]any)
			pfile, pnode = r.resolve(pfile, items)
		}
		if elem.Kind() == reflect.Struct && pnode != nil {
			r.compareStruct(t, at, elem, pfile, pnode, skip...)
		}
	}
	for name := range props {
		if !fields[name] {
			t.Errorf("%s.%s is a property of the schema %s but no field of Go %s", where, name, file, typ.Name())
		}
	}
}

// TestGoTypesMatchSchemas is the structural check.
func TestGoTypesMatchSchemas(t *testing.T) {
	t.Parallel()
	r := resolver{files: schemaFiles(t)}
	for _, k := range events.AllKinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			typ, ok := dataTypes[k]
			if !ok {
				t.Fatalf("no Go data type for %s", k)
			}
			r.compareStruct(t, "data", typ, dataFile(k), r.files[dataFile(k)])
		})
	}
	t.Run("envelope.redactions", func(t *testing.T) {
		t.Parallel()
		r.compareStruct(t, "redactions[]", reflect.TypeFor[events.Redaction](), DefsFile,
			map[string]any{"$ref": "#/$defs/redaction"})
	})
	t.Run("derived", func(t *testing.T) {
		t.Parallel()
		// data is any in Go and checked per kind: the subtests above.
		r.compareStruct(t, "derived", reflect.TypeFor[events.Derived](), DerivedFile, r.files[DerivedFile], "data")
	})
}

// probes are the values every mutated field is set to in turn.
var probes = []any{
	"x", "", "LOW", "add", "2026-11-22T10:00:00Z", "c-42", "/abs", "10m",
	json.Number("7"), json.Number("0"), json.Number("-1"), json.Number("1.5"), json.Number("1"),
	true, false, nil, map[string]any{}, []any{}, []any{"x"},
}

// mutation is one changed copy of an example.
type mutation struct {
	path string // "data.confirmation.mode"
	desc string // "deleted" or the probe
	doc  []byte
}

// mutate returns every one-field change of raw: each present field (in
// the envelope, in data, and inside data's objects and first array items)
// deleted or set to each probe, and each absent property of the kind's
// data schema added with each probe.
func mutate(t testing.TB, r resolver, raw []byte) []mutation {
	t.Helper()
	var out []mutation
	fresh := func() map[string]any {
		var doc map[string]any
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	// at returns the container at path in doc (maps and arrays).
	at := func(doc any, path []string) any {
		cur := doc
		for _, p := range path {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[p]
			case []any:
				cur = c[0]
			}
		}
		return cur
	}
	add := func(path []string, key, desc string, change func(m map[string]any)) {
		doc := fresh()
		m, ok := at(doc, path).(map[string]any)
		if !ok {
			return
		}
		change(m)
		out = append(out, mutation{strings.Join(append(slices.Clone(path), key), "."), desc, mustMarshal(t, doc)})
	}
	var visit func(path []string, node any)
	visit = func(path []string, node any) {
		m, ok := node.(map[string]any)
		if !ok {
			if a, ok := node.([]any); ok && len(a) > 0 {
				visit(append(slices.Clone(path), "0"), a[0])
			}
			return
		}
		keys := sortedKeys(m)
		if len(path) == 1 && path[0] == "data" {
			// Also every property of the kind's data schema.
			if kind, _ := fresh()["kind"].(string); kind != "" {
				if node := r.files[kind+".json"]; node != nil {
					_, n := r.resolve(kind+".json", node)
					props, _ := n["properties"].(map[string]any)
					for k := range props {
						if _, present := m[k]; !present {
							keys = append(keys, k)
						}
					}
				}
			}
		}
		for _, k := range keys {
			if _, present := m[k]; present {
				add(path, k, "deleted", func(mm map[string]any) { delete(mm, k) })
			}
			for _, p := range probes {
				add(path, k, fmt.Sprintf("%v", p), func(mm map[string]any) { mm[k] = p })
			}
			if _, present := m[k]; present {
				visit(append(slices.Clone(path), k), m[k])
			}
		}
	}
	visit(nil, fresh())
	return out
}

// differenceReason explains a disagreement that is by design, or "".
func differenceReason(x example, m mutation, goOK, schemaOK bool) string {
	switch {
	// The schemas describe v1; Go also reads v0 (no v, or v 0) and upcasts.
	case !x.derived && m.path == "v" && (m.desc == "deleted" || m.desc == "0") && goOK && !schemaOK:
		return "v0 upcast"
	// Cross-field rules of a config that a JSON Schema cannot state: the
	// envelope's conversation must equal a conversation config's own.
	case strings.HasPrefix(x.name, "config_conversation") && (m.path == "conversation" || m.path == "data.conversation") && !goOK && schemaOK:
		return "config conversation must match the envelope"
	}
	return ""
}

// TestMutationsAgree is the behavioural check.
func TestMutationsAgree(t *testing.T) {
	t.Parallel()
	v := mustValidator(t)
	r := resolver{files: schemaFiles(t)}
	for _, x := range examples(t, "*.json") {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			ms := mutate(t, r, x.raw)
			// And the kind, through every kind of its family.
			kinds := v.EventKinds()
			if x.derived {
				kinds = v.DerivedKinds()
			}
			for _, k := range kinds {
				var doc map[string]any
				if err := json.Unmarshal(x.raw, &doc); err != nil {
					t.Fatal(err)
				}
				doc["kind"] = k
				ms = append(ms, mutation{"kind", k, mustMarshal(t, doc)})
			}
			disagree, refused := 0, 0
			for _, m := range ms {
				goErr := goVerdict(m.doc, x.derived)
				schemaErr := schemaVerdict(v, m.doc, x.derived)
				goOK, schemaOK := goErr == nil, schemaErr == nil
				if !goOK && !schemaOK {
					refused++
				}
				if goOK == schemaOK || differenceReason(x, m, goOK, schemaOK) != "" {
					continue
				}
				disagree++
				if disagree <= 20 {
					t.Errorf("%s = %s: Go ok=%v (%v), schema ok=%v (%v)", m.path, m.desc, goOK, goErr, schemaOK, firstLine(schemaErr))
				}
			}
			if disagree > 20 {
				t.Errorf("… and %d more disagreements", disagree-20)
			}
			t.Logf("%d mutations, %d refused by both", len(ms), refused)
			if refused == 0 || refused == len(ms) {
				t.Errorf("%d of %d mutations refused: the check is vacuous", refused, len(ms))
			}
		})
	}
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/schemas"
)

// specFile is the API's contract.
var specFile = filepath.Join("..", "..", "schemas", "openapi.yaml")

type openAPI struct {
	OpenAPI  string                          `yaml:"openapi"`
	Security []map[string][]string           `yaml:"security"`
	Paths    map[string]map[string]operation `yaml:"paths"`
}

type operation struct {
	OperationID string                 `yaml:"operationId"`
	Security    *[]map[string][]string `yaml:"security"`
	Roles       *[]string              `yaml:"x-vigil-roles"`
	Responses   map[string]any         `yaml:"responses"`
	Parameters  []map[string]any       `yaml:"parameters"`
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func readSpec(t *testing.T) openAPI {
	t.Helper()
	b, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPI
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", specFile, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("%s: openapi %q, want 3.1.x", specFile, doc.OpenAPI)
	}
	return doc
}

// TestOpenAPIMatchesRoutes checks schemas/openapi.yaml against the routes
// the server serves: every route is described with its method, and every
// operation described is served; the roles (x-vigil-roles) and the need
// for a token agree; a route that needs a token documents 401 and 403.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := readSpec(t)
	if len(doc.Security) == 0 {
		t.Fatal("the spec has no default security requirement")
	}
	served := map[string]httpapi.Route{}
	for _, r := range httpapi.Routes() {
		served[strings.ToLower(r.Method)+" "+r.Path] = r
	}
	described := map[string]operation{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if !slices.Contains(httpMethods, method) {
				continue // parameters, summary …
			}
			described[method+" "+path] = op
		}
	}
	for key := range served {
		if _, ok := described[key]; !ok {
			t.Errorf("route %s is served but not in %s", key, specFile)
		}
	}
	ids := map[string]string{}
	for key, op := range described {
		r, ok := served[key]
		if !ok {
			t.Errorf("%s describes %s, which is not served", specFile, key)
			continue
		}
		if op.OperationID == "" {
			t.Errorf("%s: no operationId", key)
		} else if other, dup := ids[op.OperationID]; dup {
			t.Errorf("%s and %s share operationId %s", key, other, op.OperationID)
		}
		ids[op.OperationID] = key
		if op.Roles == nil {
			t.Errorf("%s: no x-vigil-roles", key)
			continue
		}
		want := make([]string, len(r.Roles))
		for i, role := range r.Roles {
			want[i] = string(role)
		}
		got := slices.Clone(*op.Roles)
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: x-vigil-roles %v, the server allows %v", key, got, want)
		}
		open := op.Security != nil && len(*op.Security) == 0
		if open != (r.Roles == nil) {
			t.Errorf("%s: the spec says a token is needed: %v; the server: %v", key, !open, r.Roles != nil)
		}
		if r.Roles != nil {
			for _, code := range []string{"401", "403"} {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s needs a token but documents no %s", key, code)
				}
			}
		}
		// Path parameters are declared.
		for _, seg := range strings.Split(r.Path, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				if !slices.ContainsFunc(op.Parameters, func(p map[string]any) bool { return p["name"] == name && p["in"] == "path" }) {
					t.Errorf("%s: path parameter %s is not declared", key, name)
				}
			}
		}
	}
}

// TestRolesHaveTokens: every role a route names has a token.
func TestRolesHaveTokens(t *testing.T) {
	for _, r := range httpapi.Routes() {
		for _, role := range r.Roles {
			if !slices.Contains(natsutil.TokenRoles, role) {
				t.Errorf("%s %s names role %s, which has no token", r.Method, r.Path, role)
			}
		}
	}
}

// specSchemas compiles the spec's component schemas, with the event
// schemas beside it, to check real answers against them.
type specSchemas struct {
	mu    sync.Mutex // tests call from several goroutines
	c     *jsonschema.Compiler
	cache map[string]*jsonschema.Schema
}

func loadSpecSchemas(t *testing.T) *specSchemas {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	b, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(schemas.BaseURL+"openapi.yaml", spec); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(schemas.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		f, err := schemas.FS().Open(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		d, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if err := c.AddResource(schemas.BaseURL+e.Name(), d); err != nil {
			t.Fatal(err)
		}
	}
	return &specSchemas{c: c, cache: map[string]*jsonschema.Schema{}}
}

// check validates a JSON answer against the spec's component schema name.
func (s *specSchemas) check(t *testing.T, name string, body []byte) {
	t.Helper()
	s.mu.Lock()
	sch, ok := s.cache[name]
	if !ok {
		var err error
		sch, err = s.c.Compile(schemas.BaseURL + "openapi.yaml#/components/schemas/" + name)
		if err != nil {
			s.mu.Unlock()
			t.Errorf("compile %s: %v", name, err)
			return
		}
		s.cache[name] = sch
	}
	s.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("answer is not JSON: %v: %s", err, body)
		return
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("answer does not match %s in %s: %v\n%s", name, specFile, err, body)
	}
}

// specChecker checks that an answer's status is documented for its route
// and that its body matches the schema the spec gives for that status.
type specChecker struct {
	schemas *specSchemas
	doc     map[string]any
}

func loadSpecChecker(t *testing.T) *specChecker {
	t.Helper()
	b, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return &specChecker{schemas: loadSpecSchemas(t), doc: doc}
}

// resolve follows a local $ref ("#/components/…").
func (s *specChecker) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return m
		}
		var cur any = s.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cm, _ := cur.(map[string]any)
			cur = cm[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// operation finds the spec's operation for a request path (no query).
func (s *specChecker) operation(method, path string) (map[string]any, bool) {
	paths, _ := s.doc["paths"].(map[string]any)
	for tmpl, ops := range paths {
		if !pathMatches(tmpl, path) {
			continue
		}
		opm, _ := ops.(map[string]any)
		op, ok := opm[strings.ToLower(method)].(map[string]any)
		return op, ok
	}
	return nil, false
}

func pathMatches(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if !strings.HasPrefix(ts[i], "{") && ts[i] != ps[i] {
			return false
		}
	}
	return true
}

func (s *specChecker) check(t *testing.T, method, path string, status int, contentType string, body []byte) {
	t.Helper()
	path, _, _ = strings.Cut(path, "?")
	op, ok := s.operation(method, path)
	if !ok {
		if status != 404 && status != 405 {
			t.Errorf("%s %s answered %d but is not in %s", method, path, status, specFile)
		}
		return
	}
	resps, _ := op["responses"].(map[string]any)
	resp := s.resolve(resps[fmt.Sprint(status)])
	if resp == nil {
		t.Errorf("%s %s answered %d, which %s does not document", method, path, status, specFile)
		return
	}
	content, _ := resp["content"].(map[string]any)
	mt, _, _ := strings.Cut(contentType, ";")
	media, ok := content[mt].(map[string]any)
	if !ok {
		if len(body) > 0 {
			t.Errorf("%s %s answered %d with %s, which %s does not document", method, path, status, contentType, specFile)
		}
		return
	}
	schema, _ := media["schema"].(map[string]any)
	ref, _ := schema["$ref"].(string)
	if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
		s.schemas.check(t, name, body)
	}
}

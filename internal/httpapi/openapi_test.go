package httpapi_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
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

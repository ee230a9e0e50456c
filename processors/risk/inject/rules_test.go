package inject

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

var update = flag.Bool("update", false, "rewrite docs/risk.md's injection rule tables")

// runToolExample scans an MCP tool example: through ScanTool, or, for a
// rug pull (Before set), through the MCP memory the processor's context
// scan steps, after it has seen the first description. It returns the
// result and the text the spans point into.
func runToolExample(ex ToolExample) (ScanResult, string) {
	var schema any
	if ex.Schema != "" {
		schema = ex.Schema
	}
	text := ToolText(ex.Description, schema)
	if ex.Before == "" {
		return ScanTool("srv", ex.Tool, ex.Description, schema), text
	}
	m := NewMCPMemory()
	record := func(seq uint64, desc string) *events.Record {
		d := map[string]any{"path": "mcp:srv/" + ex.Tool, "source": SourceMCP, "server": "srv", "tool": ex.Tool, "content": desc}
		if schema != nil {
			d["input_schema"] = schema
		}
		return &events.Record{Seq: seq, Event: events.Event{V: 1, ID: "e" + strconv.FormatUint(seq, 10), Kind: events.KindContextLoaded,
			Conversation: "s" + strconv.FormatUint(seq, 10), Data: d}}
	}
	m.StepContext(record(1, ex.Before), true)
	r, _ := m.StepContext(record(2, ex.Description), true)
	return r, text
}

func (ex ToolExample) String() string {
	if ex.Before != "" {
		return ex.Tool + ": " + strconv.Quote(ex.Before) + " then " + strconv.Quote(ex.Description)
	}
	return ex.Tool + ": " + strconv.Quote(ex.Description) + " " + ex.Schema
}

// TestInjectRuleRegistry runs every declared example: each Fires text
// yields a finding of its rule with the declared strength, each Quiet text
// none of it. Every finding of every run has a declared rule, a strength
// that agrees with its declaration, and a span inside the text.
func TestInjectRuleRegistry(t *testing.T) {
	declared := map[string]*InjectRule{}
	for _, r := range InjectRules() {
		if _, dup := declared[r.ID]; dup {
			t.Errorf("%s declared twice", r.ID)
		}
		declared[r.ID] = r
		if r.Doc == "" || r.Class == "" {
			t.Errorf("%s: incomplete declaration", r.ID)
		}
		switch r.Strength {
		case StrengthStrong, StrengthWeak, StrengthBoth:
		default:
			t.Errorf("%s: strength %q", r.ID, r.Strength)
		}
		if len(r.Fires)+len(r.FiresTool) == 0 {
			t.Errorf("%s: no example that fires", r.ID)
		}
		if len(r.Quiet)+len(r.QuietTool) == 0 {
			t.Errorf("%s: no example that must not fire", r.ID)
		}
		if (r.Class == icMCP) != (len(r.Fires)+len(r.Quiet) == 0) {
			t.Errorf("%s: MCP rules, and only they, have tool examples only", r.ID)
		}
	}
	// observed[rule][strong]: the strengths a rule's findings had in any run
	observed := map[string]map[bool]bool{}
	check := func(rule, what string, r ScanResult, text string) {
		for _, f := range r.Findings {
			if _, ok := declared[f.Rule]; !ok {
				t.Errorf("%s: example %s gives the rule %q, which InjectRules does not declare", rule, what, f.Rule)
			}
			if observed[f.Rule] == nil {
				observed[f.Rule] = map[bool]bool{}
			}
			observed[f.Rule][f.Strong] = true
			if f.Span[0] < 0 || f.Span[1] > len(text) || f.Span[0] > f.Span[1] {
				t.Errorf("%s: example %s: span %v of %s outside the text", rule, what, f.Span, f.Rule)
			}
		}
		if len(r.Findings) > 0 && r.Verdict == VerdictClean {
			t.Errorf("%s: example %s: findings %v with a clean verdict", rule, what, r.Findings)
		}
	}
	for _, ru := range InjectRules() {
		// strengths this rule's own Fires examples showed
		shown := map[bool]bool{}
		fires := func(what string, r ScanResult, text string) {
			check(ru.ID, what, r, text)
			ok := false
			for _, f := range r.Findings {
				if f.Rule != ru.ID {
					continue
				}
				shown[f.Strong] = true
				ok = ok || ru.Strength == StrengthBoth || f.Strong == (ru.Strength == StrengthStrong)
			}
			if !ok {
				t.Errorf("%s (%s) must fire on %s: %s %v", ru.ID, ru.Strength, what, r.Verdict, r.Findings)
			}
		}
		quiet := func(what string, r ScanResult, text string) {
			check(ru.ID, what, r, text)
			for _, f := range r.Findings {
				if f.Rule == ru.ID {
					t.Errorf("%s must not fire on %s: %s", ru.ID, what, f.Detail)
				}
			}
		}
		for _, text := range ru.Fires {
			fires(strconv.Quote(text), Scan(text, "AGENTS.md"), text)
		}
		for _, ex := range ru.FiresTool {
			r, text := runToolExample(ex)
			fires(ex.String(), r, text)
		}
		for _, text := range ru.Quiet {
			quiet(strconv.Quote(text), Scan(text, "AGENTS.md"), text)
		}
		for _, ex := range ru.QuietTool {
			r, text := runToolExample(ex)
			quiet(ex.String(), r, text)
		}
		if ru.Strength == StrengthBoth && !(shown[true] && shown[false]) {
			t.Errorf("%s is declared strong / weak: its Fires examples must show both (got strong: %v, weak: %v)", ru.ID, shown[true], shown[false])
		}
	}
	for id, seen := range observed {
		r, ok := declared[id]
		if !ok {
			continue
		}
		if r.Strength == StrengthStrong && seen[false] || r.Strength == StrengthWeak && seen[true] {
			t.Errorf("%s is declared %s, and an example run gave it the other strength", id, r.Strength)
		}
	}
}

// emitter is a function that emits a finding whose rule id it is given:
// scanner.add, and the closures and methods that pass their own
// parameters on to it.
type emitter struct {
	rule   int    // index of the rule id argument
	strong int    // index of the strength argument, or -1 when fixed
	fixed  string // the strength when strong is -1: "true", "false", or "" when computed
}

// emitSite is a literal rule id at a place that emits it.
type emitSite struct {
	id     string
	strong string // "true", "false", or "" when computed at run time
	pos    token.Position
}

// injectScope is a function the source walk is inside: a declaration or a
// closure, with its parameters by name.
type injectScope struct {
	params map[string]int
	decl   *ast.FuncDecl
	name   string // the closure's variable, or the declaration's name; "" for an anonymous function
	isDecl bool
}

func paramIndex(ft *ast.FuncType) map[string]int {
	m := map[string]int{}
	i := 0
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			i++
		}
		for _, n := range f.Names {
			m[n.Name] = i
			i++
		}
	}
	return m
}

// injectEmits parses the injection scanner's sources and returns every
// literal rule id at an emit site. Emitters are found, not listed: a
// function that passes a parameter as the rule id to an emitter (or into
// a Finding's Rule) is one too. An emit site whose rule id is neither a
// literal, a parameter passed on, nor the Rule of an existing finding is
// an error: its ids could not be checked.
func injectEmits(t *testing.T) []emitSite {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 5 {
		t.Fatalf("only %d injection sources found", len(files))
	}
	// the declarations' names and ids (injX = &InjectRule{ID: "x", …})
	declID := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, v := range vs.Values {
					u, ok := v.(*ast.UnaryExpr)
					if !ok {
						continue
					}
					cl, ok := u.X.(*ast.CompositeLit)
					if !ok {
						continue
					}
					if id, ok := cl.Type.(*ast.Ident); !ok || id.Name != "InjectRule" {
						continue
					}
					for _, el := range cl.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "ID" {
							declID[vs.Names[i].Name], _ = strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
						}
					}
				}
			}
		}
	}
	if len(declID) < 50 {
		t.Fatalf("only %d injection rule declarations found", len(declID))
	}
	methods := map[string]emitter{}
	funcs := map[string]emitter{}
	local := map[*ast.FuncDecl]map[string]emitter{}
	changed := false
	register := func(sc *injectScope, e emitter) {
		var m map[string]emitter
		switch {
		case !sc.isDecl:
			if local[sc.decl] == nil {
				local[sc.decl] = map[string]emitter{}
			}
			m = local[sc.decl]
		case sc.decl.Recv != nil:
			m = methods
		default:
			m = funcs
		}
		if old, ok := m[sc.name]; !ok || old != e {
			m[sc.name] = e
			changed = true
		}
	}
	// paramOf: the innermost enclosing function that has a parameter named
	// by e, and its index.
	paramOf := func(scopes []*injectScope, e ast.Expr) (*injectScope, int) {
		id, ok := e.(*ast.Ident)
		if !ok {
			return nil, 0
		}
		for k := len(scopes) - 1; k >= 0; k-- {
			if i, ok := scopes[k].params[id.Name]; ok {
				return scopes[k], i
			}
		}
		return nil, 0
	}
	var sites []emitSite
	var bad []string
	collect := false
	// emit handles one emit site: rule and strength expressions (strong nil
	// means fixed).
	emit := func(scopes []*injectScope, rule, strong ast.Expr, fixed string, at token.Pos) {
		str := fixed
		strongParam := -1
		if strong != nil {
			str = ""
			if id, ok := strong.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
				str = id.Name
			}
		}
		switch r := rule.(type) {
		case *ast.Ident:
			if id, ok := declID[r.Name]; ok {
				if collect {
					sites = append(sites, emitSite{id: id, strong: str, pos: fset.Position(at)})
				}
				return
			}
		case *ast.SelectorExpr:
			if x, ok := r.X.(*ast.Ident); ok && r.Sel.Name == "ID" {
				if id, ok := declID[x.Name]; ok {
					if collect {
						sites = append(sites, emitSite{id: id, strong: str, pos: fset.Position(at)})
					}
					return
				}
				rule = x // a declaration's id, passed in: rule.ID
			}
		}
		sc, i := paramOf(scopes, rule)
		if sc == nil || sc.name == "" {
			if collect {
				bad = append(bad, fset.Position(at).String())
			}
			return
		}
		if strong != nil {
			if sc2, j := paramOf(scopes, strong); sc2 == sc {
				strongParam = j
			}
		}
		if strongParam >= 0 {
			str = ""
		}
		register(sc, emitter{rule: i, strong: strongParam, fixed: str})
	}
	var walk func(n ast.Node, scopes []*injectScope)
	walk = func(n ast.Node, scopes []*injectScope) {
		decl := scopes[0].decl
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				named := false
				for i, rhs := range x.Rhs {
					fl, ok := rhs.(*ast.FuncLit)
					if !ok || i >= len(x.Lhs) {
						continue
					}
					if id, ok := x.Lhs[i].(*ast.Ident); ok {
						named = true
						walk(fl.Body, append(scopes[:len(scopes):len(scopes)], &injectScope{params: paramIndex(fl.Type), decl: decl, name: id.Name}))
					}
				}
				return !named
			case *ast.FuncLit:
				walk(x.Body, append(scopes[:len(scopes):len(scopes)], &injectScope{params: paramIndex(x.Type), decl: decl}))
				return false
			case *ast.CompositeLit:
				if id, ok := x.Type.(*ast.Ident); !ok || id.Name != "Finding" {
					return true
				}
				var rule, strong ast.Expr
				for _, el := range x.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						switch kv.Key.(*ast.Ident).Name {
						case "Rule":
							rule = kv.Value
						case "Strong":
							strong = kv.Value
						}
					}
				}
				if rule != nil {
					emit(scopes, rule, strong, "false", x.Pos())
				}
			case *ast.CallExpr:
				var e emitter
				ok := false
				switch fn := x.Fun.(type) {
				case *ast.SelectorExpr:
					e, ok = methods[fn.Sel.Name]
				case *ast.Ident:
					if e, ok = local[decl][fn.Name]; !ok {
						e, ok = funcs[fn.Name]
					}
				}
				if !ok || e.rule >= len(x.Args) {
					return true
				}
				var strong ast.Expr
				if e.strong >= 0 && e.strong < len(x.Args) {
					strong = x.Args[e.strong]
				}
				emit(scopes, x.Args[e.rule], strong, e.fixed, x.Pos())
			}
			return true
		})
	}
	walkAll := func() {
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				walk(fd.Body, []*injectScope{{params: paramIndex(fd.Type), decl: fd, name: fd.Name.Name, isDecl: true}})
			}
		}
	}
	for n := 0; ; n++ {
		changed = false
		walkAll()
		if !changed {
			break
		}
		if n > 10 {
			t.Fatal("the emitters do not settle")
		}
	}
	if _, ok := methods["add"]; !ok {
		t.Fatal("scanner.add is not recognised as an emitter")
	}
	collect = true
	walkAll()
	for _, b := range bad {
		t.Errorf("%s: a rule computed at run time; emit a declaration (injX) so the registry can check it", b)
	}
	return sites
}

// TestInjectRuleSources: every rule id emitted in inject*.go is declared,
// every declared id is emitted, and a literal strength at an emit site
// agrees with the declaration.
func TestInjectRuleSources(t *testing.T) {
	declared := map[string]*InjectRule{}
	for _, r := range InjectRules() {
		declared[r.ID] = r
	}
	emitted := map[string]bool{}
	strengths := map[string]map[string]bool{}
	for _, s := range injectEmits(t) {
		emitted[s.id] = true
		r, ok := declared[s.id]
		if !ok {
			t.Errorf("%s emits the rule %q, which InjectRules does not declare", s.pos, s.id)
			continue
		}
		if strengths[s.id] == nil {
			strengths[s.id] = map[string]bool{}
		}
		strengths[s.id][s.strong] = true
		if r.Strength == StrengthStrong && s.strong == "false" || r.Strength == StrengthWeak && s.strong == "true" {
			t.Errorf("%s emits %s as %s, declared %s", s.pos, s.id, map[string]string{"true": "strong", "false": "weak"}[s.strong], r.Strength)
		}
	}
	for id, r := range declared {
		if !emitted[id] {
			t.Errorf("InjectRules declares %q, which no injection source emits", id)
			continue
		}
		if st := strengths[id]; r.Strength == StrengthBoth && !st[""] && !(st["true"] && st["false"]) {
			t.Errorf("%s is declared strong / weak, and every site emits it with the same literal strength", id)
		}
	}
	if len(emitted) < 40 {
		t.Errorf("only %d rule ids found in the sources: the parse misses emit sites", len(emitted))
	}
}

const (
	injectDocsBegin = "<!-- inject-rules:begin (generated from processors/risk/inject/rules.go by go test ./processors/risk/inject -run InjectRuleDocs -update) -->"
	injectDocsEnd   = "<!-- inject-rules:end -->"
	mcpDocsBegin    = "<!-- mcp-rules:begin (generated from processors/risk/inject/rules.go by go test ./processors/risk/inject -run InjectRuleDocs -update) -->"
	mcpDocsEnd      = "<!-- mcp-rules:end -->"
)

// exampleText renders an example for a table cell: invisible characters
// written out, tag and variation-selector runs shown as what they spell,
// line breaks as ⏎, cut at 80 characters.
func exampleText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if tagChar(r) {
			j := i
			var dec strings.Builder
			for ; j < len(rs) && tagChar(rs[j]); j++ {
				if rs[j] >= 0xE0020 && rs[j] <= 0xE007E {
					dec.WriteRune(rs[j] - 0xE0000)
				}
			}
			b.WriteString("⟨tag characters: " + dec.String() + "⟩")
			i = j - 1
			continue
		}
		if _, ok := variationSelector(r); ok {
			j := i
			var dec []byte
			for ; j < len(rs); j++ {
				v, ok := variationSelector(rs[j])
				if !ok {
					break
				}
				dec = append(dec, v)
			}
			if j-i >= 4 {
				if printable(string(dec)) {
					b.WriteString("⟨variation selectors: " + string(dec) + "⟩")
				} else {
					b.WriteString("⟨" + strconv.Itoa(j-i) + " variation selectors⟩")
				}
				i = j - 1
				continue
			}
		}
		switch {
		case r == '\n':
			b.WriteString("⏎")
		case unicode.Is(unicode.Cf, r) || unicode.IsControl(r) || r == 0x034F || r >= 0xFE00 && r <= 0xFE0F:
			b.WriteString(strconv.QuoteRuneToASCII(r)[1 : len(strconv.QuoteRuneToASCII(r))-1])
		default:
			b.WriteRune(r)
		}
	}
	out := []rune(b.String())
	if len(out) > 80 {
		return string(out[:80]) + "…"
	}
	return string(out)
}

// toolExampleText renders an MCP tool example: the schema line the rule
// reads, the description, or the change for a rug pull.
func toolExampleText(ex ToolExample) string {
	switch {
	case ex.Before != "":
		return exampleText(ex.Before + " ⇒ " + ex.Description)
	case ex.Schema != "":
		lines := schemaLines(ex.Schema)
		for _, l := range lines {
			if strings.Contains(l, ".description: ") {
				return exampleText(strings.TrimPrefix(l, "input_schema.properties."))
			}
		}
	}
	return exampleText(ex.Tool + ": " + ex.Description)
}

// codeCell writes s as a code span a markdown table keeps whole: enough
// backticks around it, pipes escaped.
func codeCell(s string) string {
	run, most := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			most = max(most, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", most+1)
	if most > 0 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}

// injectRulesTable renders the rules of the context-file scanner (every
// class but MCP's) as docs/risk.md's tables, one per class.
func injectRulesTable() string {
	var b strings.Builder
	class := ""
	for _, r := range InjectRules() {
		if r.Class == icMCP {
			continue
		}
		if r.Class != class {
			class = r.Class
			b.WriteString("\n**" + class + "**\n\n| rule | strength | fires on | e.g. |\n| --- | --- | --- | --- |\n")
		}
		injectRuleRow(&b, r)
	}
	return b.String()
}

// mcpRulesTable renders the MCP tool rules.
func mcpRulesTable() string {
	var b strings.Builder
	b.WriteString("\n| rule | strength | fires on | e.g. |\n| --- | --- | --- | --- |\n")
	for _, r := range InjectRules() {
		if r.Class == icMCP {
			injectRuleRow(&b, r)
		}
	}
	return b.String()
}

func injectRuleRow(b *strings.Builder, r *InjectRule) {
	ex := ""
	switch {
	case len(r.Fires) > 0:
		ex = codeCell(exampleText(r.Fires[0]))
	case len(r.FiresTool) > 0:
		ex = codeCell(toolExampleText(r.FiresTool[0]))
	}
	b.WriteString("| `" + r.ID + "` | " + string(r.Strength) + " | " + strings.ReplaceAll(r.Doc, "|", `\|`) + " | " + ex + " |\n")
}

// TestInjectRuleDocs: docs/risk.md's injection and MCP rule tables are
// the registry's (rerun with -update after reviewing).
func TestInjectRuleDocs(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "risk.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("docs not available: %v", err)
	}
	s := string(doc)
	stale := false
	for _, sec := range []struct{ begin, end, body string }{
		{injectDocsBegin, injectDocsEnd, injectRulesTable()},
		{mcpDocsBegin, mcpDocsEnd, mcpRulesTable()},
	} {
		i, j := strings.Index(s, sec.begin), strings.Index(s, sec.end)
		if i < 0 || j < i {
			t.Fatalf("%s has no %q … %q section", path, sec.begin, sec.end)
		}
		want := sec.begin + "\n" + sec.body + "\n" + sec.end
		if s[i:j+len(sec.end)] != want {
			stale = true
			s = s[:i] + want + s[j+len(sec.end):]
		}
	}
	if !stale {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the injection or MCP rule table differs from InjectRules (rerun with -update after reviewing)", path)
}

// TestInjectRuleClasses: the classes come in one run each, so the
// documentation has one table per class.
func TestInjectRuleClasses(t *testing.T) {
	done := map[string]bool{}
	prev := ""
	for _, r := range InjectRules() {
		if r.Class != prev {
			if done[r.Class] {
				t.Errorf("class %q is split: %s is declared away from the rest of it", r.Class, r.ID)
			}
			done[r.Class] = true
			prev = r.Class
		}
	}
}

// TestInjectWordSets: every set of data/inject_words.txt is loaded by a
// wordSet call in the scanner's sources, and every call names a set.
func TestInjectWordSets(t *testing.T) {
	sets, err := parseWordSets(wordsText)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "wordSet" && len(c.Args) == 1 {
				if bl, ok := c.Args[0].(*ast.BasicLit); ok {
					name, _ := strconv.Unquote(bl.Value)
					used[name] = true
					if sets[name] == nil {
						t.Errorf("%s loads the word set %q, which data/inject_words.txt does not have", p, name)
					}
				}
			}
			return true
		})
	}
	for name := range sets {
		if !used[name] {
			t.Errorf("data/inject_words.txt has the set %q, which no source loads", name)
		}
	}
	if len(used) < 10 {
		t.Errorf("only %d wordSet calls found", len(used))
	}
}

// codeRuleRe finds the rule ids the code analyzer (code.go) emits.
var codeRuleRe = regexp.MustCompile(`add\("([a-z0-9-]+)", events\.Risk`)

// TestAttackRulesExist: the rules dangerous-command treats as an attack
// wherever written are rules the shell registry declares or the code
// analyzer emits, so a rename there cannot silently drop one.
func TestAttackRulesExist(t *testing.T) {
	known := map[string]bool{}
	for _, r := range shell.ShellRules() {
		known[r.ID] = true
	}
	src, err := os.ReadFile(filepath.Join("..", "shell", "code.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range codeRuleRe.FindAllStringSubmatch(string(src), -1) {
		known[m[1]] = true
	}
	for id := range attackRules() {
		if !known[id] {
			t.Errorf("attackRules names %q, which neither shell.ShellRules declares nor code.go emits", id)
		}
	}
}

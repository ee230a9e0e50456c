package shell

import (
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Bounds that keep the walker's time and memory linear in its input, whatever
// the input (fuzzed, 1 MB, nested a thousand times).
const (
	maxInput      = 1 << 20 // bytes of a command analysed; the rest is reported
	maxDepth      = 8       // nested re-parses (bash -c 'bash -c …')
	maxSteps      = 20000   // statements walked in total
	maxCommands   = 4000    // commands recorded
	maxReparsed   = 4 << 20 // bytes re-parsed in total
	maxExpanded   = 1 << 20 // bytes of variable and parameter expansions in total
	maxLoopItems  = 8       // for-loop items walked
	maxFuncDepth  = 8       // nested function calls
	maxAliasDepth = 4
)

// walker walks a shell AST, resolving what can be resolved statically, and
// records every simple command it finds with its data flows.
type walker struct {
	parsers *parserPool // nil: a fresh parser per parse
	env     core.Env
	sc      *scope
	cmds    []*command
	finds   []core.Finding
	funcs   map[string]*syntax.Stmt
	aliases map[string]string
	files   map[string]*data // files written earlier in the script: their content
	dl      map[string]bool  // files downloaded earlier in the script

	// inherited by commands found in nested code
	depth     int
	via       []string
	sudo      bool
	container bool
	remote    bool
	top       bool // walking the original input: node positions are spans
	outer     [2]int

	inSubst    int
	inLoop     int
	funcStack  []string
	aliasDepth int

	steps     int
	pipeSeq   int
	pipeID    int
	reparsed  int
	expanded  int
	exhausted bool
	// fileTool: the walker judges a file-write action's path, whose
	// content fileAction judges itself (judgeWrite leaves it)
	fileTool bool
	parseErr string
	hosts    []string

	// self is what the action's hook said about Vigil's installation
	// (selfprotect.go); nil: names only.
	self *selfCtx
	// selfCopies are the paths this walk copied or linked Vigil's binary
	// to (noteVigilCopy): a command run from one of them is Vigil.
	selfCopies []string

	// codeLits are the string literals of the code the walk read, for the
	// self-protection rules (selfprotect.go).
	codeLits []codeLit
}

// codeLit is a string literal of code: what it says, where the code is,
// and whether the code writes files.
type codeLit struct {
	s, name, how string
	span         [2]int
	writes       bool
	listOnly     bool // the code only lists directories or tests paths (listingOnly)
}

func newWalker(env core.Env) *walker {
	return &walker{
		env:     env,
		sc:      newScope(),
		funcs:   map[string]*syntax.Stmt{},
		aliases: map[string]string{},
		files:   map[string]*data{},
		dl:      map[string]bool{},
		top:     true,
	}
}

func (w *walker) add(f core.Finding) {
	w.finds = append(w.finds, f)
}

func newParser(lang syntax.LangVariant) *syntax.Parser {
	return syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(false))
}

// parserPool reuses shell parsers (a parser may be reused, not shared
// concurrently); building one per command was a measurable share of
// scoring. Each Scorer owns one, so a Scorer stays safe for concurrent use.
type parserPool struct{ bash, posix sync.Pool }

func newParserPool() *parserPool {
	pp := &parserPool{}
	pp.bash.New = func() any { return newParser(syntax.LangBash) }
	pp.posix.New = func() any { return newParser(syntax.LangPOSIX) }
	return pp
}

// parseWith parses src with a pooled parser of the variant, or a fresh one
// when there is no pool.
func (pp *parserPool) parseWith(lang syntax.LangVariant, src string) (*syntax.File, error) {
	if pp == nil {
		return newParser(lang).Parse(strings.NewReader(src), "")
	}
	pool := &pp.bash
	if lang == syntax.LangPOSIX {
		pool = &pp.posix
	}
	p := pool.Get().(*syntax.Parser)
	defer pool.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// parse parses src as bash, then POSIX sh. It returns nil when both fail.
func (w *walker) parse(src string) (*syntax.File, string) {
	f, err := w.parsers.parseWith(syntax.LangBash, src)
	if err == nil {
		return f, ""
	}
	f2, err2 := w.parsers.parseWith(syntax.LangPOSIX, src)
	if err2 == nil {
		return f2, "bash: " + err.Error()
	}
	return nil, err.Error()
}

// run analyses a whole input.
func (w *walker) run(src string) {
	if len(src) > maxInput {
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleInputTooLarge, Level: events.RiskHigh,
			Detail: "only the first 1 MiB was analysed; what follows it could not be judged, so a person must", Span: [2]int{maxInput, len(src)}})
		src = src[:maxInput]
	}
	w.deceptiveChars(src)
	f, perr := w.parse(src)
	if f == nil {
		w.parseErr = perr
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleUnparsable, Level: events.RiskHigh,
			Detail: "not valid bash or POSIX sh (" + perr + "); scored from a rough tokenisation", Span: [2]int{0, len(src)}})
		w.fallback(src)
		return
	}
	if perr != "" {
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: rulePosixFallback, Level: events.RiskLow,
			Detail: "parsed as POSIX sh after bash failed: " + perr})
	}
	w.walkStmts(f.Stmts, stmtCtx{})
}

// spend counts n bytes of a variable's value about to be expanded. Past
// maxExpanded it reports false and ends the walk: a short script that
// expands one long value many times (U=<70 KB>; curl $U/0; curl $U/1 …)
// would otherwise cost time quadratic in its size, and every action of
// every conversation waits for the fold.
func (w *walker) spend(n int) bool {
	if w.exhausted {
		return false
	}
	w.expanded += n
	if w.expanded > maxExpanded {
		w.exhausted = true
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleAnalysisBudget, Level: events.RiskHigh,
			Detail: "variable expansions exceeded the analysis budget (1 MiB); the rest of the script was not walked", Span: w.outer})
		return false
	}
	return true
}

// reparse analyses code that a command turns into code (bash -c, eval, ssh,
// su -c …) as if it were part of the script, one level deeper.
func (w *walker) reparse(code, how string, pos []string, stdin *data, sudo bool) *data {
	if w.exhausted {
		return &data{}
	}
	if w.depth+1 > maxDepth {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleNestingLimit, Level: events.RiskHigh,
			Detail: "code nested more than 8 levels deep (" + how + "); deliberate obfuscation is treated as dangerous", Span: w.outer})
		return &data{}
	}
	w.reparsed += len(code)
	if w.reparsed > maxReparsed {
		w.exhausted = true
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleAnalysisBudget, Level: events.RiskHigh,
			Detail: "re-parsed code exceeded the analysis budget", Span: w.outer})
		return &data{}
	}
	f, perr := w.parse(code)
	savedSc, savedTop, savedVia, savedSudo := w.sc, w.top, w.via, w.sudo
	w.sc = w.sc.clone()
	if pos != nil {
		w.sc.pos = pos
	}
	w.top = false
	w.depth++
	w.via = append(append([]string(nil), w.via...), how)
	w.sudo = w.sudo || sudo
	var out *data
	if f == nil {
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleUnparsableNested, Level: events.RiskHigh,
			Detail: how + " runs code that does not parse (" + perr + ")", Span: w.outer})
		w.fallback(code)
		out = &data{}
	} else {
		out = w.walkStmts(f.Stmts, stmtCtx{stdin: stdin})
	}
	w.depth--
	w.sc, w.top, w.via, w.sudo = savedSc, savedTop, savedVia, savedSudo
	return out
}

type stmtCtx struct {
	stdin      *data
	inPipe     bool
	pipeOut    bool
	background bool
	outer      []redir
}

func (w *walker) spanOf(n *syntax.Stmt) [2]int {
	if !w.top || n == nil {
		return w.outer
	}
	return [2]int{int(n.Pos().Offset()), int(n.End().Offset())}
}

func (w *walker) walkStmts(stmts []*syntax.Stmt, ctx stmtCtx) *data {
	out := &data{known: true}
	for _, st := range stmts {
		d := w.walkStmt(st, ctx)
		appendData(out, d)
		// only the first statement of a list reads a pipe's stdin in practice
	}
	return out
}

// appendData concatenates d onto out.
func appendData(out, d *data) {
	if d == nil {
		return
	}
	out.text += d.text
	out.known = out.known && d.known
	out.flags |= d.flags
	out.paths = append(out.paths, d.paths...)
	out.items = append(out.items, d.items...)
}

func (w *walker) walkStmt(st *syntax.Stmt, ctx stmtCtx) *data {
	if st == nil || w.exhausted {
		return &data{}
	}
	w.steps++
	if w.steps > maxSteps {
		w.exhausted = true
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleAnalysisBudget, Level: events.RiskHigh,
			Detail: "the script is too large to walk completely", Span: w.outer})
		return &data{}
	}
	if w.top {
		w.outer = w.spanOf(st)
	}
	if st.Background {
		ctx.background = true
	}
	redirs, stdin := w.evalRedirs(st.Redirs)
	if stdin != nil {
		ctx.stdin = stdin
	}
	switch c := st.Cmd.(type) {
	case nil:
		cmd := &command{name: ":", path: ":", redirs: redirs, stdin: ctx.stdin}
		w.finish(cmd, ctx, st)
		return cmd.out
	case *syntax.CallExpr:
		return w.callExpr(c, redirs, ctx, st)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			return w.pipeline(st, ctx)
		default:
			d := &data{known: true}
			appendData(d, w.walkStmt(c.X, ctx))
			appendData(d, w.walkStmt(c.Y, stmtCtx{outer: ctx.outer, background: ctx.background}))
			return w.compoundRedirs(d, redirs, ctx, st)
		}
	case *syntax.Block:
		ctx.outer = append(ctx.outer, redirs...)
		d := w.walkStmts(c.Stmts, ctx)
		return w.compoundRedirs(d, redirs, ctx, st)
	case *syntax.Subshell:
		saved := w.sc
		w.sc = w.sc.clone()
		ctx.outer = append(ctx.outer, redirs...)
		d := w.walkStmts(c.Stmts, ctx)
		w.sc = saved
		return w.compoundRedirs(d, redirs, ctx, st)
	case *syntax.IfClause:
		d := &data{}
		ctx.outer = append(ctx.outer, redirs...)
		for ic := c; ic != nil; ic = ic.Else {
			w.walkStmts(ic.Cond, stmtCtx{outer: ctx.outer})
			appendData(d, w.walkStmts(ic.Then, ctx))
		}
		return w.compoundRedirs(d, redirs, ctx, st)
	case *syntax.WhileClause:
		w.inLoop++
		ctx.outer = append(ctx.outer, redirs...)
		w.walkStmts(c.Cond, ctx)
		d := w.walkStmts(c.Do, ctx)
		w.inLoop--
		d.known = false
		return w.compoundRedirs(d, redirs, ctx, st)
	case *syntax.ForClause:
		w.inLoop++
		ctx.outer = append(ctx.outer, redirs...)
		d := w.forClause(c, ctx)
		w.inLoop--
		return w.compoundRedirs(d, redirs, ctx, st)
	case *syntax.CaseClause:
		w.fields(c.Word)
		d := &data{}
		for _, it := range c.Items {
			appendData(d, w.walkStmts(it.Stmts, ctx))
		}
		return w.compoundRedirs(d, redirs, ctx, st)
	case *syntax.FuncDecl:
		if c.Name != nil {
			w.shadowing("function", c.Name.Value, funcWraps(c.Name.Value, c.Body), w.spanOf(st))
			w.funcs[c.Name.Value] = c.Body
			if selfCallsInPipeOrBackground(c.Name.Value, c.Body) {
				w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleForkBomb, Level: events.RiskHigh,
					Detail: "function " + c.Name.Value + " starts copies of itself in a pipe or in the background", Span: w.spanOf(st), Command: c.Name.Value})
			}
		}
		return &data{known: true}
	case *syntax.DeclClause:
		w.declClause(c, st)
		return &data{known: true}
	case *syntax.TimeClause:
		return w.walkStmt(c.Stmt, ctx)
	case *syntax.CoprocClause:
		return w.walkStmt(c.Stmt, ctx)
	default:
		// [[ … ]], (( … )), let: only their substitutions can run anything.
		w.walkNodeSubsts(st.Cmd)
		return &data{known: true}
	}
}

// compoundRedirs records the redirections of a compound command as a
// pseudo-command so that file writes and reads on it are judged.
func (w *walker) compoundRedirs(d *data, redirs []redir, ctx stmtCtx, st *syntax.Stmt) *data {
	if len(redirs) == 0 {
		return d
	}
	cmd := &command{name: "{}", path: "{}", redirs: redirs, stdin: ctx.stdin, out: d}
	w.finish(cmd, ctx, st)
	for _, r := range redirs {
		if r.isWrite() {
			return &data{known: true}
		}
	}
	return d
}

// walkNodeSubsts walks the command and process substitutions inside any node.
func (w *walker) walkNodeSubsts(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.CmdSubst:
			w.cmdSubst(x.Stmts, x)
			return false
		case *syntax.ProcSubst:
			w.procSubst(x)
			return false
		}
		return true
	})
}

func selfCallsInPipeOrBackground(name string, body *syntax.Stmt) bool {
	found := false
	syntax.Walk(body, func(node syntax.Node) bool {
		if found {
			return false
		}
		switch x := node.(type) {
		case *syntax.Stmt:
			if x.Background {
				if ce, ok := x.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == name {
					found = true
				}
				if bc, ok := x.Cmd.(*syntax.BinaryCmd); ok && callsIn(bc, name) {
					found = true
				}
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				if callsIn(x, name) {
					found = true
				}
			}
		}
		return true
	})
	return found
}

func callsIn(n syntax.Node, name string) bool {
	found := false
	syntax.Walk(n, func(node syntax.Node) bool {
		if ce, ok := node.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == name {
			found = true
		}
		return !found
	})
	return found
}

func (w *walker) cmdSubst(stmts []*syntax.Stmt, node syntax.Node) *data {
	saved := w.sc
	w.sc = w.sc.clone()
	w.inSubst++
	d := w.walkStmts(stmts, stmtCtx{})
	w.inSubst--
	w.sc = saved
	return d
}

func (w *walker) procSubst(ps *syntax.ProcSubst) *data {
	saved := w.sc
	w.sc = w.sc.clone()
	w.inSubst++
	var d *data
	if ps.Op == syntax.CmdIn {
		d = w.walkStmts(ps.Stmts, stmtCtx{})
	} else {
		// >(cmd): cmd reads what is written to the path; unknown here.
		w.walkStmts(ps.Stmts, stmtCtx{stdin: &data{flags: flowCmdOut}})
		d = &data{}
	}
	w.inSubst--
	w.sc = saved
	return d
}

func (w *walker) pipeline(st *syntax.Stmt, ctx stmtCtx) *data {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flatten(bc.X)
			flatten(bc.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(st)
	in := ctx.stdin
	var out *data
	w.pipeSeq++
	id := w.pipeSeq
	savedPipe := w.pipeID
	w.pipeID = id
	defer func() { w.pipeID = savedPipe }()
	for i, s := range stages {
		sctx := stmtCtx{stdin: in, inPipe: true, pipeOut: i < len(stages)-1, background: ctx.background, outer: ctx.outer}
		if i > 0 && in == nil {
			sctx.stdin = &data{}
		}
		out = w.walkStmt(s, sctx)
		if out == nil {
			out = &data{}
		}
		in = out
	}
	return out
}

func (w *walker) evalRedirs(rs []*syntax.Redirect) ([]redir, *data) {
	var out []redir
	var stdin *data
	for _, r := range rs {
		rd := redir{op: r.Op.String()}
		if r.N != nil {
			rd.fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body := w.str(r.Hdoc)
			d := &data{text: body.s, known: !body.dyn, flags: flowStatic}
			if body.d != nil {
				d.flags |= body.d.flags
			}
			rd.data = d
			rd.op = "<<"
			stdin = d
		case syntax.WordHdoc:
			f := w.str(r.Word)
			d := &data{text: f.s + "\n", known: !f.dyn, flags: flowStatic}
			if f.d != nil {
				d.flags |= f.d.flags
				d.paths = append(d.paths, f.d.paths...)
			}
			rd.data = d
			rd.op = "<<<"
			stdin = d
		default:
			f := w.str(r.Word)
			rd.target, rd.dyn = f.s, f.dyn
			if f.d != nil {
				rd.data = f.d
			}
			if rd.isRead() && (rd.fd == "" || rd.fd == "0") {
				if strings.HasPrefix(rd.target, "/dev/fd/") && f.d != nil {
					stdin = f.d
				} else {
					stdin = w.fileData(rd.target)
				}
			}
		}
		out = append(out, rd)
	}
	return out, stdin
}

// fileData is what reading path yields.
func (w *walker) fileData(p string) *data {
	if d, ok := w.files[w.normFile(p)]; ok {
		return d
	}
	d := &data{flags: flowFile, paths: []string{p}}
	if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
		d.flags |= flowNetwork
	}
	if c := credentialKind(p); c != "" {
		d.flags |= flowSecret
	}
	return d
}

func (w *walker) normFile(p string) string {
	if p == "" {
		return p
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && w.sc.cwd != "" {
		p = w.sc.cwd + "/" + p
	}
	return path.Clean(p)
}

func (w *walker) forClause(c *syntax.ForClause, ctx stmtCtx) *data {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.walkNodeSubsts(c.Loop)
		return w.walkStmts(c.Do, ctx)
	}
	var items []field
	for _, it := range wi.Items {
		for _, f := range w.fields(it) {
			if f.dyn && f.d != nil && len(f.d.items) > 0 {
				for _, s := range f.d.items {
					items = append(items, field{s: s, d: f.d})
				}
				continue
			}
			items = append(items, f)
		}
	}
	if len(wi.Items) == 0 && len(w.sc.pos) > 1 {
		for _, p := range w.sc.pos[1:] {
			items = append(items, field{s: p})
		}
	}
	if len(items) == 0 {
		w.sc.vars[wi.Name.Value] = value{dyn: true}
		return w.walkStmts(c.Do, ctx)
	}
	d := &data{}
	for i, it := range items {
		if i >= maxLoopItems {
			break
		}
		w.sc.vars[wi.Name.Value] = value{s: it.s, dyn: it.dyn, d: it.d}
		appendData(d, w.walkStmts(c.Do, ctx))
	}
	d.known = false
	return d
}

func (w *walker) declClause(c *syntax.DeclClause, st *syntax.Stmt) {
	variant := c.Variant.Value
	for _, a := range c.Args {
		if a.Name == nil {
			if a.Value != nil {
				w.fields(a.Value)
			}
			continue
		}
		w.assign(a, variant == "export", st)
	}
}

func (w *walker) assign(a *syntax.Assign, export bool, st *syntax.Stmt) {
	name := a.Name.Value
	if a.Array != nil {
		var arr []string
		dyn := false
		for _, e := range a.Array.Elems {
			for _, f := range w.fields(e.Value) {
				arr = append(arr, f.s)
				dyn = dyn || f.dyn
			}
		}
		w.sc.vars[name] = value{s: strings.Join(arr, " "), arr: arr, isArr: true, dyn: dyn}
		return
	}
	if a.Naked && a.Value == nil {
		return
	}
	f := w.str(a.Value)
	if a.Append {
		old := w.sc.vars[name]
		f.s = old.s + f.s
		f.dyn = f.dyn || old.dyn
	}
	w.sc.vars[name] = value{s: f.s, dyn: f.dyn, d: f.d}
	w.checkAssign(name, f.s, f.dyn, w.spanOf(st))
}

// checkAssign judges assignments that change the shell's own behaviour.
func (w *walker) checkAssign(name, val string, dyn bool, span [2]int) {
	w.envCommand(name, val, dyn, span)
	switch name {
	case "HISTFILE":
		if val == "/dev/null" || val == "" {
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleHistoryTampering, Level: events.RiskHigh,
				Detail: "HISTFILE=" + val + " stops the shell recording history", Span: span, Command: name})
		}
	case "HISTSIZE", "HISTFILESIZE", "SAVEHIST":
		if val == "0" || val == "" {
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleHistoryTampering, Level: events.RiskHigh,
				Detail: name + "=" + val + " stops the shell recording history", Span: span, Command: name})
		}
	case "PATH":
		// A directory anyone can write (/tmp), or the working directory
		// ("." or an empty entry), searched before the system's: every
		// command typed later may run a planted program of the same name.
		for _, d := range strings.Split(val, ":") {
			if d == "$PATH" || d == "${PATH}" {
				break
			}
			if d == "" || d == "." || d == "./" || classify(d, "", "") == pcTemp || strings.HasPrefix(d, "/tmp") {
				w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: rulePathHijack, Level: events.RiskMedium,
					Detail: "PATH searches " + shownDir(d) + " before the system directories: a program planted there replaces any command", Span: span, Command: name})
				break
			}
		}
	case "LD_PRELOAD", "DYLD_INSERT_LIBRARIES":
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleLibraryInjection, Level: events.RiskMedium,
			Detail: name + " loads a library into every program started", Span: span, Command: name})
	}
}

func (w *walker) callExpr(c *syntax.CallExpr, redirs []redir, ctx stmtCtx, st *syntax.Stmt) *data {
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			w.assign(a, false, st)
		}
		cmd := &command{name: ":", path: ":", redirs: redirs, stdin: ctx.stdin}
		if len(redirs) == 0 {
			return &data{known: true}
		}
		w.finish(cmd, ctx, st)
		return cmd.out
	}
	// Prefix assignments apply to the command's environment only.
	assigns := map[string]string{}
	for _, a := range c.Assigns {
		if a.Name == nil {
			continue
		}
		f := w.str(a.Value)
		assigns[a.Name.Value] = f.s
		w.checkAssign(a.Name.Value, f.s, f.dyn, w.spanOf(st))
	}
	var fs []field
	for _, a := range c.Args {
		fs = append(fs, w.fields(a)...)
	}
	if len(fs) == 0 {
		cmd := &command{name: ":", path: ":", redirs: redirs, stdin: ctx.stdin}
		w.finish(cmd, ctx, st)
		return cmd.out
	}
	return w.runFields(fs, assigns, redirs, ctx, st)
}

// runFields runs an expanded command line: aliases, functions, wrappers,
// then the command itself.
func (w *walker) runFields(fs []field, assigns map[string]string, redirs []redir, ctx stmtCtx, st *syntax.Stmt) *data {
	name := fs[0].s
	if !fs[0].dyn {
		if body, ok := w.aliases[name]; ok && w.aliasDepth < maxAliasDepth {
			w.aliasDepth++
			code := body
			for _, f := range fs[1:] {
				code += " " + Quote(f.s)
			}
			d := w.reparse(code, "alias "+name, nil, ctx.stdin, false)
			w.aliasDepth--
			return d
		}
		if body, ok := w.funcs[name]; ok {
			for _, f := range w.funcStack {
				if f == name {
					if ctx.inPipe || ctx.background {
						w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleForkBomb, Level: events.RiskHigh,
							Detail: "function " + name + " calls itself in a pipe or in the background", Span: w.spanOf(st), Command: name})
					}
					return &data{}
				}
			}
			if len(w.funcStack) >= maxFuncDepth {
				return &data{}
			}
			savedPos := w.sc.pos
			pos := []string{name}
			for _, f := range fs[1:] {
				pos = append(pos, f.s)
			}
			w.sc.pos = pos
			w.funcStack = append(w.funcStack, name)
			d := w.walkStmt(body, ctx)
			w.funcStack = w.funcStack[:len(w.funcStack)-1]
			w.sc.pos = savedPos
			return d
		}
	}
	cmd := &command{assigns: assigns, redirs: redirs, stdin: ctx.stdin}
	fs = w.unwrap(cmd, fs, ctx)
	if len(fs) == 0 {
		w.finish(cmd, ctx, st)
		return cmd.out
	}
	cmd.path = fs[0].s
	cmd.name, cmd.dynName = commandName(fs[0])
	if fs[0].glob {
		cmd.name, cmd.dynName, cmd.glob = "", true, true
	}
	for _, f := range fs[1:] {
		cmd.args = append(cmd.args, f.s)
		cmd.argDyn = append(cmd.argDyn, f.dyn)
		cmd.argData = append(cmd.argData, f.d)
	}
	cmd.win = isWindowsCommand(cmd.name, cmd.args)
	if fs[0].d != nil {
		if fs[0].d.has(flowNetwork) {
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleRemoteCodeExec, Level: events.RiskHigh,
				Detail: "the command to run is fetched from the network", Span: w.spanOf(st), Command: "$(…)"})
		} else if fs[0].d.has(flowDecoded | flowUnknownXf) {
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleDecodeExec, Level: events.RiskHigh,
				Detail: "the command to run is decoded at run time", Span: w.spanOf(st), Command: "$(…)"})
		}
	}
	for i, a := range cmd.args {
		switch {
		case a == "--help" || a == "-help":
			cmd.helpOnly = true
		case a == "--version" && (i == len(cmd.args)-1 || strings.HasPrefix(cmd.args[i+1], "-")):
			// `--version` alone prints the version; followed by a value it
			// is an option of the command (`cargo yank --version 0.4.1`)
			cmd.helpOnly = true
		}
	}
	w.finish(cmd, ctx, st)
	return cmd.out
}

// finish records cmd, runs what it runs (nested code), and works out its output.
func (w *walker) finish(cmd *command, ctx stmtCtx, st *syntax.Stmt) {
	if len(w.cmds) >= maxCommands {
		if !w.exhausted {
			w.exhausted = true
			w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleAnalysisBudget, Level: events.RiskHigh,
				Detail: "more commands than Vigil walks in one input", Span: w.outer})
		}
		cmd.out = &data{}
		return
	}
	cmd.depth = w.depth
	cmd.via = append(append([]string(nil), w.via...), cmd.via...)
	cmd.sudo = cmd.sudo || w.sudo
	cmd.container = cmd.container || w.container
	cmd.remote = cmd.remote || w.remote
	cmd.span = w.spanOf(st)
	cmd.cwd = w.sc.cwd
	cmd.inSubst = w.inSubst > 0
	cmd.inLoop = w.inLoop > 0
	cmd.background = ctx.background
	cmd.inPipe = ctx.inPipe
	cmd.pipeOut = ctx.pipeOut
	if ctx.inPipe {
		cmd.pipeID = w.pipeID
	}
	cmd.redirs = append(cmd.redirs, ctx.outer...)
	if cmd.stdin == nil && ctx.stdin != nil {
		cmd.stdin = ctx.stdin
	}
	w.cmds = append(w.cmds, cmd)
	savedSudo, savedCont, savedRemote := w.sudo, w.container, w.remote
	w.sudo, w.container, w.remote = cmd.sudo, cmd.container, cmd.remote
	w.execute(cmd)
	w.sudo, w.container, w.remote = savedSudo, savedCont, savedRemote
	if cmd.out == nil {
		cmd.out = w.outputOf(cmd)
	}
	// Writes to files: remember the content for later execution.
	for _, r := range cmd.redirs {
		if r.isWrite() && (r.fd == "" || r.fd == "1" || r.op == "&>" || r.op == "&>>") && !r.dyn {
			key := w.normFile(r.target)
			content := cmd.out
			if r.op == ">>" || r.op == "&>>" {
				if old, ok := w.files[key]; ok {
					c := &data{known: old.known}
					appendData(c, old)
					appendData(c, content)
					content = c
				}
			}
			if content != nil && !strings.HasPrefix(key, "/dev/") {
				w.files[key] = content
			}
			if content.has(flowNetwork) {
				w.dl[key] = true
			}
		}
	}
	for _, r := range cmd.redirs {
		if r.isWrite() && (r.fd == "" || r.fd == "1" || r.op == "&>" || r.op == "&>>" || r.op == ">&") {
			cmd.written = cmd.out
			cmd.out = &data{known: true}
			break
		}
	}
}

// Quote quotes s for re-parsing as one word.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./=:,+@%~", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CanonicalName reduces a command word to the name rules match on.
func CanonicalName(p string) string {
	n := p
	if i := strings.LastIndexByte(n, '/'); i >= 0 && i < len(n)-1 {
		n = n[i+1:]
	}
	n = strings.ToLower(n)
	for _, base := range []string{"python", "pypy", "perl", "ruby", "php", "lua", "node", "pip", "tclsh", "wish", "gawk", "mawk", "nawk", "ksh", "bash", "zsh"} {
		if strings.HasPrefix(n, base) && len(n) > len(base) && strings.Trim(n[len(base):], "0123456789.-") == "" {
			n = base
			break
		}
	}
	n = strings.TrimSuffix(n, ".exe")
	if strings.HasPrefix(n, "mkfs.") || strings.HasPrefix(n, "mkfs_") {
		return "mkfs"
	}
	if strings.HasPrefix(n, "fsck.") {
		return "fsck"
	}
	switch n {
	case "gawk", "mawk", "nawk", "busybox-awk":
		return "awk"
	case "nodejs":
		return "node"
	case "pypy":
		return "python"
	case "python", "python2", "python3":
		return "python"
	case "ncat", "netcat", "nc.traditional", "nc.openbsd":
		return "nc"
	case "pip3", "pip2":
		return "pip"
	case "podman", "nerdctl":
		return "docker"
	case "mongosh":
		return "mongo"
	case "mariadb":
		return "mysql"
	}
	return n
}

func shownDir(d string) string {
	if d == "" {
		return "the working directory (an empty entry)"
	}
	return d
}

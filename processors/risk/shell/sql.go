package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// sql judges database clients by the statements they are given (-c, -e,
// positional SQL, stdin), not by the words that appear on the line.
func (w *walker) sql(c *command) {
	a := c.args
	var stmts []string
	localDB := false
	switch c.name {
	case "psql":
		for i, x := range a {
			if (x == "-c" || x == "--command") && i+1 < len(a) {
				stmts = append(stmts, a[i+1])
			} else if strings.HasPrefix(x, "--command=") {
				stmts = append(stmts, x[10:])
			} else if (x == "-f" || x == "--file") && i+1 < len(a) {
				if d, ok := w.files[w.normFile(a[i+1])]; ok && d.text != "" {
					stmts = append(stmts, d.text)
				} else {
					w.hit(c, ruleSqlScript, med, "psql runs the SQL file "+a[i+1])
				}
			}
		}
	case "mysql", "cockroach", "duckdb":
		for i, x := range a {
			if (x == "-e" || x == "--execute" || x == "-c") && i+1 < len(a) {
				stmts = append(stmts, a[i+1])
			} else if strings.HasPrefix(x, "--execute=") {
				stmts = append(stmts, x[10:])
			}
		}
	case "clickhouse-client", "sqlcmd":
		for i, x := range a {
			if (x == "-q" || x == "--query" || x == "-Q") && i+1 < len(a) {
				stmts = append(stmts, a[i+1])
			} else if strings.HasPrefix(x, "--query=") {
				stmts = append(stmts, x[8:])
			}
		}
	case "sqlite3":
		var ops []string
		for i, x := range a {
			if strings.HasPrefix(x, "-") {
				continue
			}
			if i > 0 && (a[i-1] == "-cmd" || a[i-1] == "-separator" || a[i-1] == "-newline" || a[i-1] == "-nullvalue") {
				if a[i-1] == "-cmd" {
					stmts = append(stmts, x)
				}
				continue
			}
			ops = append(ops, x)
		}
		if len(ops) > 0 {
			cls := classify(strings.TrimPrefix(strings.SplitN(ops[0], "?", 2)[0], "file:"), c.cwd, w.env.Workspace)
			localDB = cls == pcWorkspace || cls == pcTemp
		}
		if len(ops) > 1 {
			stmts = append(stmts, ops[1:]...)
		}
	case "mongo":
		for i, x := range a {
			if x == "--eval" && i+1 < len(a) {
				w.mongo(c, a[i+1])
			}
		}
		if c.stdin != nil && c.stdin.text != "" {
			w.mongo(c, c.stdin.text)
		}
		return
	case "redis-cli":
		for i, x := range a {
			switch strings.ToUpper(x) {
			case "FLUSHALL", "FLUSHDB":
				w.hit(c, ruleDatastoreWipe, high, "redis-cli "+strings.ToUpper(x)+" deletes every key")
				return
			case "SHUTDOWN", "DEBUG":
				w.hit(c, ruleDatastoreChange, med, "redis-cli "+strings.ToUpper(x))
				return
			case "EVAL", "EVALSHA", "FCALL":
				if i > 0 && strings.HasPrefix(a[i-1], "-") && a[i-1] != "--" {
					continue
				}
				if i+1 < len(a) {
					if u := strings.ToUpper(a[i+1]); strings.Contains(u, "FLUSHALL") || strings.Contains(u, "FLUSHDB") {
						w.hit(c, ruleDatastoreWipe, high, "redis-cli "+strings.ToUpper(x)+" runs a script that deletes every key")
						return
					}
				}
				w.hit(c, ruleDatastoreChange, med, "redis-cli "+strings.ToUpper(x)+" changes data or configuration")
				return
			case "CONFIG", "DEL", "UNLINK", "SET", "SCRIPT", "MODULE", "SLAVEOF", "REPLICAOF":
				if i > 0 && strings.HasPrefix(a[i-1], "-") && a[i-1] != "--" {
					continue
				}
				w.hit(c, ruleDatastoreChange, med, "redis-cli "+strings.ToUpper(x)+" changes data or configuration")
				return
			}
		}
		return
	}
	if c.stdin != nil && c.stdin.text != "" {
		stmts = append(stmts, c.stdin.text)
	}
	if p := w.pipeProducer(c); p != nil && (c.stdin == nil || c.stdin.text == "") {
		// SQL written by the stage before (a query that prints
		// 'DROP TABLE ' || name …, a script that emits DELETEs) is run here
		for _, x := range p.args {
			if m := generatedSQLRe.FindString(x); m != "" {
				w.hit(c, ruleSqlDrop, high, c.name+" runs SQL that "+p.name+" generates ("+strings.ToUpper(strings.Join(strings.Fields(m), " "))+" …)")
				break
			}
		}
	}
	for _, s := range stmts {
		for _, h := range sqlFindings(s) {
			lvl := h.level
			if localDB && lvl == events.RiskHigh {
				lvl = events.RiskMedium
				h.detail += " (local database file in the workspace)"
			}
			w.hit(c, h.rule, lvl, h.detail)
		}
	}
}

type sqlHit struct {
	rule   *ShellRule
	level  events.Risk
	detail string
}

// sqlFindings parses SQL just enough to find what each statement does:
// string literals and comments are removed first, so a SELECT that mentions
// 'drop table' is a SELECT.
func sqlFindings(sql string) []sqlHit {
	var hits []sqlHit
	for _, st := range splitSQL(stripSQL(sql)) {
		toks := strings.Fields(strings.ToUpper(st))
		if len(toks) == 0 {
			continue
		}
		// WITH … DELETE/UPDATE: judge by the data-changing verb.
		first := toks[0]
		if first == "WITH" {
			for _, t := range toks {
				if t == "DELETE" || t == "UPDATE" || t == "INSERT" {
					first = t
					break
				}
			}
		}
		hasWhere := false
		for i, t := range toks {
			if t == "WHERE" || strings.HasPrefix(t, "WHERE(") {
				// WHERE 1=1, WHERE TRUE, WHERE 1: a condition every row meets
				hasWhere = !trivialWhere(toks[i+1:])
			}
		}
		if first == "ALTER" && len(toks) > 3 && toks[1] == "TABLE" && (toks[3] == "DELETE" || toks[3] == "UPDATE") {
			// ClickHouse mutations: ALTER TABLE t DELETE WHERE …
			first = toks[3]
		}
		short := st
		if len(short) > 80 {
			short = short[:80] + "…"
		}
		short = strings.TrimSpace(short)
		switch first {
		case "DROP":
			if len(toks) > 1 && dataObjects()[toks[1]] {
				hits = append(hits, sqlHit{ruleSqlDrop, events.RiskHigh, "drops a " + strings.ToLower(toks[1]) + ": " + short})
			} else {
				hits = append(hits, sqlHit{ruleSqlDropObject, events.RiskMedium, short})
			}
		case "TRUNCATE":
			hits = append(hits, sqlHit{ruleSqlTruncate, events.RiskHigh, "empties a table: " + short})
		case "DELETE":
			if hasWhere {
				hits = append(hits, sqlHit{ruleSqlWrite, events.RiskMedium, short})
			} else {
				hits = append(hits, sqlHit{ruleSqlDeleteAll, events.RiskHigh, "DELETE without WHERE removes every row: " + short})
			}
		case "UPDATE":
			if hasWhere {
				hits = append(hits, sqlHit{ruleSqlWrite, events.RiskMedium, short})
			} else {
				hits = append(hits, sqlHit{ruleSqlUpdateAll, events.RiskHigh, "UPDATE without WHERE changes every row: " + short})
			}
		case "ALTER":
			if col := alterDropsColumn(toks); col != "" {
				hits = append(hits, sqlHit{ruleSqlDrop, events.RiskHigh, "drops the column " + strings.ToLower(col) + " and its data: " + short})
			} else {
				hits = append(hits, sqlHit{ruleSqlWrite, events.RiskMedium, short})
			}
		case "INSERT", "CREATE", "GRANT", "REVOKE", "COPY", "REPLACE", "MERGE", "UPSERT", "RENAME", "LOAD", "CALL", "EXEC", "EXECUTE", "DO":
			hits = append(hits, sqlHit{ruleSqlWrite, events.RiskMedium, short})
		}
	}
	return hits
}

// stripSQL blanks out comments and quoted text.
func stripSQL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 3
			b.WriteByte(' ')
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if c == '\'' {
				b.WriteString(" 's' ")
			} else {
				b.WriteString(" ident ")
			}
			i = j
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			j := strings.Index(s[i+2:], "$$")
			if j < 0 {
				return b.String()
			}
			b.WriteString(" 's' ")
			i += j + 3
		case c == '(' || c == ')' || c == ',':
			b.WriteByte(' ')
			b.WriteByte(c)
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func splitSQL(s string) []string {
	parts := strings.Split(s, ";")
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p != "" && !strings.HasPrefix(p, "\\") && !strings.HasPrefix(p, ".") {
			out = append(out, p)
		}
	}
	return out
}

func (w *walker) mongo(c *command, js string) {
	l := strings.ToLower(js)
	switch {
	case strings.Contains(l, "dropdatabase") || strings.Contains(l, ".drop()"):
		w.hit(c, ruleSqlDrop, high, "drops a database or collection")
	case strings.Contains(l, "deletemany({})") || strings.Contains(l, "remove({})") || strings.Contains(l, "deletemany( {} )"):
		w.hit(c, ruleSqlDeleteAll, high, "deletes every document")
	case strings.Contains(l, "insert") || strings.Contains(l, "update") || strings.Contains(l, "delete") || strings.Contains(l, "remove"):
		w.hit(c, ruleSqlWrite, med, "changes documents")
	}
}

// generatedSQLRe finds, in the arguments of a command whose output a SQL
// client runs, the text of a statement that destroys data.
var generatedSQLRe = core.LazyRE(`(?i)\b(?:drop\s+(?:table|database|schema|keyspace|collection)|truncate\s+(?:table\s+)?|delete\s+from)\b`)

// alterDropsColumn returns the column an ALTER TABLE statement (upper-cased
// tokens) drops, "" when it drops none: DROP COLUMN x, or DROP x where x is
// not a constraint, index, default or key.
func alterDropsColumn(toks []string) string {
	if len(toks) < 2 || toks[1] != "TABLE" {
		return ""
	}
	for i := 2; i+1 < len(toks); i++ {
		if toks[i] != "DROP" {
			continue
		}
		n := toks[i+1]
		switch n {
		case "CONSTRAINT", "INDEX", "KEY", "PRIMARY", "FOREIGN", "DEFAULT", "NOT", "CHECK", "PARTITION", "TRIGGER", "IDENTITY", "EXPRESSION", "UNIQUE":
			return ""
		case "COLUMN":
			if i+2 < len(toks) {
				c := toks[i+2]
				if c == "IF" && i+4 < len(toks) {
					c = toks[i+4]
				}
				return strings.Trim(c, ",;")
			}
			return "?"
		}
		return strings.Trim(n, ",;")
	}
	return ""
}

// pipeProducer returns the command whose output c reads in a pipeline
// (the stage just before c), nil when c reads no pipe.
func (w *walker) pipeProducer(c *command) *command {
	if !c.inPipe || c.pipeID == 0 {
		return nil
	}
	idx := -1
	for i := len(w.cmds) - 1; i >= 0; i-- {
		if w.cmds[i] == c {
			idx = i
			break
		}
	}
	for i := idx - 1; i >= 0; i-- {
		if p := w.cmds[i]; p.pipeID == c.pipeID && p.pipeOut && p.depth == c.depth {
			return p
		}
	}
	return nil
}

// dataObjects are what a DROP removes with the data it holds: a table and
// the stores around tables, InfluxDB's measurements, series and retention
// policies, document collections and buckets.
var dataObjects = core.LazySet("TABLE", "DATABASE", "SCHEMA", "OWNED", "KEYSPACE", "MEASUREMENT", "SERIES", "COLLECTION",
	"BUCKET", "SHARD", "TABLESPACE", "RETENTION")

// trivialWhere reports whether a WHERE condition (upper-cased tokens after
// WHERE) holds for every row: 1=1, TRUE, 1, 'a'='a'.
func trivialWhere(toks []string) bool {
	if len(toks) == 0 {
		return true
	}
	c := strings.TrimRight(toks[0], ";)")
	if len(toks) >= 3 && toks[1] == "=" {
		c = toks[0] + "=" + strings.TrimRight(toks[2], ";)")
	}
	switch c {
	case "1=1", "TRUE", "1", "0=0", "'1'='1'", "'A'='A'", "1<>0", "1!=0":
		return len(toks) <= 3 || toks[1] != "AND" && (len(toks) < 4 || toks[3] != "AND")
	}
	return false
}

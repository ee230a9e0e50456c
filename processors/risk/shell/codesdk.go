package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Code that calls a service's client library does what the service's own
// command line would do: boto3's ec2.terminate_instances is `aws ec2
// terminate-instances`, GitPython's repo.git.push('--force') is `git push
// --force`, a cursor's execute('DROP DATABASE x') is that statement sent
// to the server the code connects to. sdkCalls translates such calls into
// the command they amount to and judges that command with the shell
// analyzer's rules, so a destructive call scores as the same effect
// spelled on a shell (and a listing scores as a listing). What is not
// translated falls to bulkRemoteDelete: a deletion called on every item a
// remote listing returns.

var (
	// boto3.client('ec2'), boto3.resource("s3"), session.client('rds')
	awsClientRe = core.LazyRE(`(?:(\w+)\s*=\s*)?\b(?:boto3|session|boto3\.session\.Session\(\))\.(?:client|resource)\(\s*(?:service_name\s*=\s*)?['"]([\w-]+)['"][^)]*\)(\.[a-z]\w*\()?`)
	callOnRe    = core.LazyRE(`\b(\w+)\.([a-z][a-z0-9_]*)\(`)
	// an S3 bucket emptied or removed through boto3's resource API
	s3BucketRe = core.LazyRE(`Bucket\(\s*['"]([^'"]+)['"]\s*\)\s*(\.objects\.(?:all|filter)\([^)]*\)\.delete\(|\.object_versions\.(?:all|filter)\([^)]*\)\.delete\(|\.delete\()`)
	// GitPython: repo.git.<command>(args…), remote.push(…, force=True)
	gitAPIRe     = core.LazyRE(`\.git\.([a-z][a-z_]*)\(([^()]*)\)`)
	gitPushRe    = core.LazyRE(`\.push\(([^()]*)\bforce\s*=\s*True`)
	sqlExecRe    = core.LazyRE(`(?s)\b(?:execute|executescript|executemany|exec_driver_sql|text|query|raw|sql|run_sql|execute_sql)\s*\(\s*(?:text\s*\(\s*)?[rbuf]{0,2}("""(?:.*?)"""|'''(?:.*?)'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`)
	mongoDropRe  = core.LazyRE(`\.drop_database\(|\.drop_collection\(|\.drop\(\s*\)|\.delete_many\(\s*\{\s*\}\s*\)|\.remove\(\s*\{\s*\}\s*\)`)
	redisFlushRe = core.LazyRE(`\.(flushall|flushdb)\(`)
	// the Kubernetes client: delete_namespace('x'),
	// delete_namespaced_deployment('web', 'prod'),
	// delete_collection_namespaced_pod('prod')
	k8sDeleteRe = core.LazyRE(`\.delete_(collection_)?(namespaced_)?([a-z_]+)\(\s*(?:name\s*=\s*)?['"]([^'"]*)['"](?:\s*,\s*(?:namespace\s*=\s*)?['"]([^'"]*)['"])?`)
	// gcs: bucket.delete(), blobs listed then deleted
	gcsListRe = core.LazyRE(`list_blobs\(\s*['"]([^'"]+)['"]|\.bucket\(\s*['"]([^'"]+)['"]\s*\)`)
	// a connection target: a URL-style connection string or a host= keyword
	connURLRe = core.LazyRE(`['"](?:postgres(?:ql)?|mysql|mariadb|mssql|oracle|cockroachdb|redshift|mongodb(?:\+srv)?|rediss?|amqps?|clickhouse)(?:\+\w+)?://(?:[^@'"/]*@)?([^:/'"?]+)`)
	hostKwRe  = core.LazyRE(`\bhost(?:name)?\s*=\s*['"]([^'"]+)['"]`)
	sqliteRe  = core.LazyRE(`sqlite3?\.connect\(|sqlite(?:\+\w+)?://|:memory:|duckdb\.connect\(`)
	// a deletion called on each item of a listing
	bulkLoopRe = core.LazyRE(`(?m)^([ \t]*)for\s+(\w+)\s+in\s+[^\n]*\b(?:list|all|scan|iter|paginate|search|find|query|auto_paging_iter|list_\w+|get_\w+|iter_\w+|find_\w+|search_\w+|fetch_\w+)\b[^\n]*:[ \t]*$`)
	deleteOnRe = core.LazyRE(`\.(?:delete|destroy|remove|purge|terminate|drop|erase|wipe|archive|revoke|cancel|deactivate|disable)\w*\(`)
	// remote client libraries: calls through them reach a service
	remoteSDKRe = core.LazyRE(`(?m)^\s*(?:import|from)\s+(?:boto3|botocore|aiobotocore|google\.cloud|googleapiclient|azure|kubernetes|stripe|pymongo|motor|redis|psycopg2?|pymysql|mysql|MySQLdb|sqlalchemy|elasticsearch|opensearchpy|github|gitlab|slack_sdk|twilio|hvac|consul|etcd3|docker|paramiko|shopify|square|braintree|paypalrestsdk|sendgrid|mailchimp\w*|hubspot|salesforce|simple_salesforce|jira|atlassian|linear|notion_client|firebase_admin|supabase|pinecone|qdrant_client|weaviate|openai|anthropic|cloudflare|digitalocean|linode_api4|hcloud|vercel|heroku3?|okta|auth0)\b`)
)

// sdkCalls judges code's client-library calls by the commands they amount
// to (see above).
func (w *walker) sdkCalls(lang, code, how string, span [2]int, name string) {
	if lang != "python" {
		return
	}
	run := func(argv ...string) {
		w.runSynthetic(&command{via: []string{how}}, toFields(argv), stmtCtx{})
	}
	sdk := remoteSDKRe.MatchString(code)
	remote, host := codeTarget(code, sdk)
	// AWS: each call on a client of a service, as `aws <service> <op>`.
	svcOf := map[string]string{}
	for _, m := range awsClientRe.FindAllStringSubmatch(code, 16) {
		svc := m[2]
		if m[1] != "" {
			svcOf[m[1]] = svc
		}
		if m[3] != "" { // boto3.client('s3').delete_bucket(
			run("aws", svc, kebab(strings.TrimSuffix(strings.TrimPrefix(m[3], "."), "(")))
		}
	}
	if len(svcOf) > 0 {
		for _, m := range callOnRe.FindAllStringSubmatch(code, 64) {
			if svc, ok := svcOf[m[1]]; ok {
				run("aws", svc, kebab(m[2]))
			}
		}
	}
	for _, m := range s3BucketRe.FindAllStringSubmatch(code, 8) {
		if strings.HasPrefix(m[2], ".delete") {
			run("aws", "s3", "rb", "s3://"+m[1], "--force")
		} else {
			run("aws", "s3", "rm", "s3://"+m[1], "--recursive")
		}
	}
	// git through GitPython
	for _, m := range gitAPIRe.FindAllStringSubmatch(code, 8) {
		argv := []string{"git", strings.ReplaceAll(m[1], "_", "-")}
		for _, s := range strLitRe.FindAllStringSubmatch(m[2], 16) {
			argv = append(argv, unquoteLit(s))
		}
		run(argv...)
	}
	if m := gitPushRe.FindStringSubmatch(code); m != nil {
		argv := []string{"git", "push", "--force"}
		for _, s := range strLitRe.FindAllStringSubmatch(m[1], 4) {
			argv = append(argv, unquoteLit(s))
		}
		run(argv...)
	}
	// SQL sent to the database the code connects to
	for _, m := range sqlExecRe.FindAllStringSubmatch(code, 16) {
		stmt := strings.Trim(m[1], `"'`)
		if len(sqlFindings(stmt)) == 0 {
			continue
		}
		if remote {
			run("psql", "-h", host, "-c", stmt)
		} else {
			run("sqlite3", "local.db", stmt)
		}
	}
	if mongoDropRe.MatchString(code) && strings.Contains(code, "mongo") {
		js := "db.dropDatabase()"
		if strings.Contains(code, "delete_many") || strings.Contains(code, ".remove(") {
			js = "db.c.deleteMany({})"
		}
		run("mongo", "--host", host, "--eval", js)
	}
	if m := redisFlushRe.FindStringSubmatch(code); m != nil && strings.Contains(code, "redis") {
		run("redis-cli", "-h", host, strings.ToUpper(m[1]))
	}
	if strings.Contains(code, "kubernetes") {
		for _, m := range k8sDeleteRe.FindAllStringSubmatch(code, 8) {
			kind := m[3]
			switch {
			case m[1] != "": // delete_collection_namespaced_pod('ns')
				run("kubectl", "delete", kind, "--all", "-n", m[4])
			case m[2] != "" && m[5] != "":
				run("kubectl", "delete", kind, m[4], "-n", m[5])
			default:
				run("kubectl", "delete", kind, m[4])
			}
		}
	}
	if strings.Contains(code, "google.cloud") && strings.Contains(code, "storage") && deleteOnRe.MatchString(code) {
		for _, m := range gcsListRe.FindAllStringSubmatch(code, 4) {
			run("gsutil", "-m", "rm", "-r", "gs://"+m[1]+m[2])
		}
	}
	// HTTP writes from code, as curl would send them
	for _, m := range httpWriteRe.FindAllStringSubmatch(code, 8) {
		method, u := strings.ToUpper(m[1]+m[2]), m[3]
		if !strings.Contains(u, "://") {
			continue
		}
		argv := []string{"curl", "-X", method}
		if httpAuthRe.MatchString(code) {
			argv = append(argv, "-H", "Authorization: Bearer x")
		}
		run(append(argv, u)...)
	}
	if sdk {
		w.bulkRemoteDelete(code, how, span, name)
		w.clientDelete(code, how, span, name)
	}
}

var (
	// requests.delete('https://…'), httpx.put(f"https://…"),
	// session.request('DELETE', 'https://…')
	httpWriteRe = core.LazyRE(`\b\w+\.(?:(delete|put|patch|post)|request\(\s*['"](DELETE|PUT|PATCH|POST|delete|put|patch|post)['"]\s*,)\(?\s*(?:url\s*=\s*)?f?['"]([^'"]+)['"]`)
	httpAuthRe  = core.LazyRE(`(?i)authorization|bearer|x-api-key|api[-_]?key|token|auth\s*=|private-token`)
	// a deleting method and the receiver chain it is called on
	clientDeleteRe = core.LazyRE(`\.((?:begin_|async_|batch_)?(?:delete|destroy|terminate|purge|drop|remove|wipe|erase|deprovision|decommission|revoke)\w*)\(`)
	infraNounRe    = core.LazyRE(`(?i)group|dataset|database|\bdb|table|index|indices|bucket|cluster|namespace|repo|project|user|account|instance|volume|disk|snapshot|backup|secret|vault|\bkv\b|zone|record|domain|queue|topic|stream|function|service|deployment|environment|workspace|organi[sz]ation|\borg\b|team|branch|image|network|subnet|vpc|firewall|certificate|role|polic|metadata|all_versions|collection|schema|space|site|channel|webhook|token|registry|tenant|subscription|app\b|apps\b`)
)

// clientDelete: a remote client library's deleting method called on a
// named resource of a service (a resource group, dataset, index,
// repository, user, secret…), by the method's name or its receiver's.
func (w *walker) clientDelete(code, how string, span [2]int, name string) {
	for _, loc := range clientDeleteRe.FindAllStringSubmatchIndex(code, 16) {
		method := code[loc[2]:loc[3]]
		// the receiver: the expression before the dot, on its line
		i := loc[0]
		for i > 0 && loc[0]-i < 120 && !strings.ContainsRune("\n;=", rune(code[i-1])) {
			i--
		}
		recv := strings.TrimSpace(code[i:loc[0]])
		if !infraNounRe.MatchString(method) && !infraNounRe.MatchString(recv) {
			continue
		}
		w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: ruleClientDelete, Level: events.RiskHigh, Span: span, Command: name,
			Detail: how + ": " + core.TrimArg(recv+"."+method) + " deletes a resource of a remote service"})
		return
	}
}

// bulkRemoteDelete: a loop over a listing of a remote client whose body
// deletes (or cancels, revokes, disables) what it iterates.
func (w *walker) bulkRemoteDelete(code, how string, span [2]int, name string) {
	for _, loc := range bulkLoopRe.FindAllStringSubmatchIndex(code, 8) {
		indent := code[loc[2]:loc[3]]
		v := code[loc[4]:loc[5]]
		body := loopBody(code[loc[1]:min(len(code), loc[1]+4096)], indent)
		if dl := deletesItem(body, v); dl != nil {
			w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: ruleBulkRemoteDelete, Level: events.RiskHigh, Span: span, Command: name,
				Detail: how + ": deletes each item a remote listing returns (" + core.TrimArg(strings.TrimSpace(code[loc[0]:loc[1]])) + " … " +
					core.TrimArg(strings.TrimSpace(body[dl[0]:min(len(body), dl[1]+40)])) + ")"})
			return
		}
	}
}

// loopBody is the indented block after a for line: the lines indented
// deeper than indent (or the rest of the line after the colon).
func loopBody(rest, indent string) string {
	lines := strings.Split(strings.TrimPrefix(rest, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !strings.HasPrefix(l, indent) || len(l) <= len(indent) || (l[len(indent)] != ' ' && l[len(indent)] != '\t') {
			break
		}
		if i > 12 {
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// codeTarget says whether code connects to a database or service off this
// machine, and the host it names (for the synthesized command line): a
// connection string's or host= keyword's host that is not local, or a
// remote client library (sdk: the code imports one) with no local
// target. An SQLite file or
// :memory: database, or only localhost, is local.
func codeTarget(code string, sdk bool) (remote bool, host string) {
	var hosts []string
	for _, m := range connURLRe.FindAllStringSubmatch(code, 8) {
		hosts = append(hosts, m[1])
	}
	for _, m := range hostKwRe.FindAllStringSubmatch(code, 8) {
		hosts = append(hosts, m[1])
	}
	for _, h := range hosts {
		if !localHost(h) {
			return true, h
		}
	}
	if len(hosts) > 0 || sqliteRe.MatchString(code) {
		return false, "localhost"
	}
	if sdk {
		return true, "db.remote"
	}
	return false, "localhost"
}

func localHost(h string) bool {
	h = strings.ToLower(strings.Trim(h, "[]"))
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || h == "0.0.0.0" || strings.HasPrefix(h, "127.") || h == "" || strings.HasSuffix(h, ".localhost")
}

// kebab is a snake_case method name as its CLI spells it.
func kebab(s string) string { return strings.ReplaceAll(s, "_", "-") }

// deletesItem finds in a loop's body a deletion of the loop's item v:
// called on it (v.delete(), v.subscription.cancel()) or given it
// (client.delete_object(v), stripe.Customer.delete(v.id)).
func deletesItem(body, v string) []int {
	for _, dl := range deleteOnRe.FindAllStringIndex(body, 8) {
		// the receiver chain before the call
		i := dl[0]
		for i > 0 && (isIdentByte(body[i-1]) || body[i-1] == '.' || body[i-1] == ')' || body[i-1] == '(') {
			i--
		}
		recv := body[i:dl[0]]
		if recv == v || strings.HasPrefix(recv, v+".") {
			return dl
		}
		// the arguments
		end := strings.IndexByte(body[dl[1]:], ')')
		if end < 0 {
			end = len(body) - dl[1]
		}
		for _, f := range strings.FieldsFunc(body[dl[1]:dl[1]+end], func(r rune) bool {
			return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			if f == v || strings.HasPrefix(f, v+".") {
				return dl
			}
		}
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

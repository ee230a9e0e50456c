package shell

import (
	"net/netip"
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// http judges curl, wget and other HTTP clients.
func (w *walker) http(c *command) {
	a := c.args
	var urls []string
	for i, x := range a {
		if strings.Contains(x, "://") {
			urls = append(urls, x)
		} else if (i == 0 || noValueOpt(a[i-1])) && bareURL(x) {
			// curl and wget take "example.com/x" as http://example.com/x
			urls = append(urls, "http://"+x)
		}
	}
	local := len(urls) > 0
	for _, u := range urls {
		if !isLocalURL(u) {
			local = false
		}
	}
	upload := func(v string, i int, what string) bool {
		// @file or @- (stdin); for -F also name=@file and name=<file
		p := ""
		switch {
		case strings.HasPrefix(v, "@"):
			p = v[1:]
		case strings.Contains(v, "=@"):
			p = v[strings.Index(v, "=@")+2:]
			if j := strings.IndexByte(p, ';'); j >= 0 {
				p = p[:j]
			}
		case strings.Contains(v, "=<"):
			p = v[strings.Index(v, "=<")+2:]
		case what == "-T" || what == "--upload-file" || what == "--post-file" || what == "--body-file":
			p = v
		}
		if p == "" {
			if i < len(c.argData) && c.argData[i] != nil && c.argData[i].has(flowFile|flowSecret|flowEnv|flowArchive) {
				w.hit(c, ruleDataUpload, high, c.name+" sends command output built from files or the environment")
				return true
			}
			return false
		}
		if p == "-" {
			if c.stdin.has(flowFile | flowSecret | flowEnv | flowArchive | flowEncoded | flowCmdOut) {
				w.hit(c, ruleDataUpload, high, c.name+" uploads data piped into it")
			} else {
				w.hit(c, ruleNetworkWrite, med, c.name+" uploads its input")
			}
			return true
		}
		if k := credentialKind(resolvePath(p, c.cwd)); k != "" {
			w.hit(c, ruleCredentialExfiltration, high, c.name+" uploads "+p+" ("+k+")")
			return true
		}
		if local {
			// a workspace file sent to a server on this machine (a fixture
			// for a local API): nothing leaves the host
			w.hit(c, ruleNetworkWrite, med, c.name+" sends the file "+p+" to a local server")
			return true
		}
		if requestBodyFile(what, p, c.cwd, w.env.Workspace) {
			// -d @payload.json: the request's own body, written in the
			// project for this call, as a literal -d '{…}' is
			w.hit(c, ruleNetworkWrite, med, c.name+" sends the request body in "+p)
			return true
		}
		w.hit(c, ruleFileUpload, high, c.name+" uploads the file "+p)
		return true
	}
	uploaded, wrote, download := false, false, false
	method, authed := "", false
	for i, x := range a {
		opt, val, vi := x, "", i+1
		if eq := strings.IndexByte(x, '='); eq > 0 && strings.HasPrefix(x, "--") {
			opt, val, vi = x[:eq], x[eq+1:], i
		} else if i+1 < len(a) {
			val = a[i+1]
		}
		switch opt {
		case "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "-F", "--form", "--form-string", "--json", "-T", "--upload-file",
			"--post-data", "--post-file", "--body-data", "--body-file":
			if upload(val, vi, opt) {
				uploaded = true
			} else {
				wrote = true
			}
		case "-X", "--request", "--method":
			if u := strings.ToUpper(val); u != "GET" && u != "HEAD" && u != "OPTIONS" {
				wrote = true
				method = u
			}
		case "-H", "--header":
			if credentialHeader(val) {
				authed = true
			}
		case "-u", "--user", "--oauth2-bearer", "--aws-sigv4", "--netrc", "-n", "--netrc-file", "--http-user", "--http-password", "--password", "-b", "--cookie", "--load-cookies":
			authed = true
		case "-o", "--output", "-O", "--output-document", "--remote-name", "-P", "--directory-prefix":
			download = true
		default:
			if len(x) > 2 && x[0] == '-' && x[1] != '-' && isLetters(x[1:]) && (x[len(x)-1] == 'o' || x[len(x)-1] == 'O') {
				download = true // -fsSLo FILE
			}
		}
		if strings.HasPrefix(x, "-d") && len(x) > 2 && !strings.HasPrefix(x, "--") && c.name == "curl" {
			if upload(x[2:], i, "-d") {
				uploaded = true
			} else {
				wrote = true
			}
		}
		// data embedded in the URL by command substitution
		if strings.Contains(x, "://") && i < len(c.argData) && c.argData[i] != nil && c.argDyn[i] {
			f := c.argData[i].flags
			if f&(flowSecret|flowFile|flowEnv|flowEncoded) != 0 {
				w.hit(c, ruleUrlExfiltration, high, c.name+" puts file or environment contents into a URL")
				uploaded = true
			} else if f&flowCmdOut != 0 {
				w.hit(c, ruleUrlExfiltration, med, c.name+" puts command output into a URL")
			}
		}
	}
	if c.name == "wget" && !flagSet(a, 'O', "--output-document") && !hasArgPrefix(a, "-qO", "-O") && !hasArg(a, "--spider") {
		download = true
	}
	if c.name == "aria2c" || c.name == "lwp-download" {
		download = true
	}
	for _, x := range a {
		if len(x) > 2 && strings.HasPrefix(x, "-X") && !strings.HasPrefix(x, "--") {
			method, wrote = strings.ToUpper(x[2:]), true
		}
		if strings.Contains(x, "://") && strings.Contains(strings.SplitN(strings.SplitN(x, "://", 2)[1], "/", 2)[0], "@") {
			authed = true // https://user:token@host/…
		}
	}
	if download {
		w.recordDownload(c)
	}
	hosted := false
	for _, h := range hostsOf(urls) {
		if !isLocalHost(h) && !isPrivateHost(h) {
			hosted = true
		}
	}
	destroyPath, removePath, adminPath, effectPath := false, false, false, ""
	for _, u := range urls {
		if urlCarriesCredential(u) {
			authed = true
		}
		if p := urlPath(u); p != "" {
			cache := false
			for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' }) {
				for _, wd := range verbWords(seg) {
					if cacheNouns()[wd] {
						cache = true
					}
				}
			}
			everything := false
			for _, x := range a {
				if lx := strings.ToLower(x); strings.Contains(lx, "everything") || strings.Contains(lx, "purge_all") || strings.Contains(lx, "purgeall") {
					everything = true
				}
			}
			for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' }) {
				v, k := verbOf(seg)
				if k == 2 && !(cache && (v == "purge" || v == "flushall" || v == "flushdb") && !everything) {
					// a cache purged by named files or tags refills from the
					// origin; purging everything at once is a destroy
					destroyPath = true
				}
				if k == 1 && !cache && v != "clear" && v != "flush" && v != "reset" {
					// admin.users.remove, /lifecycle/deactivate: a removal
					// verb in an API path removes what the path names
					removePath = true
				}
				if strings.EqualFold(seg, "admin") {
					adminPath = true
				}
				if e := apiEffect(seg); e != "" && effectPath == "" {
					effectPath = e
				}
			}
		}
	}
	if !destroyPath {
		for _, x := range a {
			if graphqlDestroys(x) {
				destroyPath = true // a GraphQL mutation named for a removal
			}
		}
		for _, u := range urls {
			var ws []string
			for _, seg := range strings.FieldsFunc(urlPath(u), func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' }) {
				ws = append(ws, verbWords(seg)...)
			}
			if closesAccount(ws) {
				destroyPath = true // /accounts/…/close
			}
		}
	}
	store := ""
	for _, u := range append(hostPortArgs(a), urls...) {
		if k := datastoreURL(u); k != "" {
			store = k
		}
		if p := urlPath(u); p != "" && !destroyPath {
			cache := false
			for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' }) {
				for _, wd := range verbWords(seg) {
					if cacheNouns()[wd] {
						cache = true
					}
				}
			}
			for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' }) {
				if v, k := verbOf(seg); k == 2 && !(cache && v == "purge") {
					destroyPath = true
				}
			}
		}
	}
	if store == "" && wrote && destroyPath && adminPath && !local {
		store = "an administrative endpoint (/admin/…)"
	}
	bodyDeletes, bodySQL := false, ""
	for i, x := range a {
		if i == 0 || !strings.HasPrefix(a[i-1], "-d") && !strings.HasPrefix(a[i-1], "--data") && a[i-1] != "--json" {
			continue
		}
		v, isSQL := x, false
		if k, rest, ok := strings.Cut(v, "="); ok && queryParams()[strings.ToLower(k)] {
			v, isSQL = rest, true // q=DROP DATABASE x
		} else if f := strings.Fields(v); len(f) > 1 && (f[0] == "DROP" || f[0] == "TRUNCATE" || f[0] == "DELETE") {
			isSQL = true // a statement as the body, written as SQL is
		}
		if isSQL {
			for _, h := range sqlFindings(v) {
				if h.level == high && bodySQL == "" {
					bodySQL = h.detail
				}
			}
		}
		lv := strings.ToLower(v)
		if strings.Contains(lv, "delete") && (strings.Contains(lv, "*:*") || strings.Contains(lv, "match_all")) {
			bodyDeletes = true // Solr <delete><query>*:*</query></delete>
		}
	}
	if bodySQL != "" && wrote && !local {
		w.hit(c, ruleSqlDrop, high, c.name+" sends a query that "+bodySQL+" to "+strings.Join(hostsOf(urls), ", "))
	}
	if store != "" && bodyDeletes && wrote {
		destroyPath = true
	}
	switch {
	case store != "" && (method == "DELETE" || wrote && destroyPath):
		w.hit(c, ruleDatastoreHttpDelete, high, c.name+" sends "+orStr(method, "a delete request")+" to the HTTP API of "+store+": it deletes stored data, on any host")
	case store != "" && authed && !local && (method == "PUT" || method == "PATCH"):
		w.hit(c, ruleDatastoreHttpDelete, high, c.name+" sends an authenticated "+method+" to the HTTP API of "+store+": it overwrites stored data or the store's configuration")
	case !authed || !hosted:
	case method == "DELETE" || method == "PURGE" || wrote && (destroyPath || removePath):
		w.hit(c, ruleAuthenticatedApiWrite, high, c.name+" sends an authenticated "+orStr(method, "POST")+" to "+strings.Join(hostsOf(urls), ", ")+" that removes a resource with the user's credentials")
	case method == "PUT" || method == "PATCH":
		w.hit(c, ruleAuthenticatedApiWrite, high, c.name+" sends an authenticated "+method+" to "+strings.Join(hostsOf(urls), ", ")+" that overwrites a resource with the user's credentials")
	case wrote && effectPath != "":
		w.hit(c, ruleAuthenticatedApiWrite, high, c.name+" sends an authenticated "+orStr(method, "POST")+" to "+strings.Join(hostsOf(urls), ", ")+" that "+effectPath+" with the user's credentials")
	}
	switch {
	case uploaded:
	case wrote:
		w.hit(c, ruleNetworkWrite, med, c.name+" sends data to "+strings.Join(hostsOf(urls), ", "))
	case local || hasArg(a, "-I", "--head", "--spider") || len(urls) == 0 && c.name == "curl":
	case download:
		w.hit(c, ruleNetworkDownload, med, c.name+" downloads "+strings.Join(urls, " "))
	default:
		w.hit(c, ruleNetworkFetch, med, c.name+" fetches "+strings.Join(urls, " "))
	}
	for _, h := range hostsOf(urls) {
		if isRawIP(h) && !isLocalHost(h) && (uploaded || wrote) {
			w.hit(c, ruleRawIpUpload, high, c.name+" sends data to the bare IP address "+h)
		}
	}
}

// untrustedSource returns the first URL among args (a package, an index,
// a registry) served from a bare non-local IP address or over plain HTTP
// from a non-local host, "" when there is none.
func untrustedSource(args []string) string {
	for _, a := range args {
		if eq := strings.IndexByte(a, '='); eq > 0 && strings.HasPrefix(a, "-") {
			a = a[eq+1:]
		}
		i := strings.Index(a, "://")
		if i < 0 {
			continue
		}
		hs := hostsOf([]string{a})
		if len(hs) == 0 {
			continue
		}
		h := hs[0]
		if isLocalHost(h) || isPrivateHost(h) {
			continue
		}
		if isRawIP(h) || strings.EqualFold(a[:i], "http") {
			return core.TrimArg(a)
		}
	}
	return ""
}

// httpMethods are the request methods an HTTPie-style client (http,
// https, xh) takes as its first operand.
var httpMethods = core.LazySet("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "PURGE")

// httpieValueOpts are the HTTPie and xh options that take a value.
var httpieValueOpts = core.LazySet("-a", "--auth", "-A", "--auth-type", "--session", "--session-read-only", "-o", "--output",
	"--verify", "--cert", "--cert-key", "--proxy", "--timeout", "--raw", "--boundary", "-p", "--print", "--pretty", "-s",
	"--style", "--format-options", "--max-redirects", "--ssl", "--ciphers", "--default-scheme", "--bearer", "-P", "--history-print",
	"--resolve", "--interface", "--unix-socket", "--max-headers", "--chunked")

// httpie judges HTTPie and xh (`http [METHOD] URL [ITEM …]`) as the same
// request made with curl: a method, a URL (":3000/x" is localhost, a bare
// host is http://, https:// for https and xhs), Header:value items,
// key=value and key:=json data, and -a/--auth, --bearer or a session as
// credentials.
func (w *walker) httpie(c *command) {
	a := c.args
	var opts, ops []string
	for i := 0; i < len(a); i++ {
		x := a[i]
		if x == "--" {
			ops = append(ops, a[i+1:]...)
			break
		}
		if len(x) > 1 && x[0] == '-' {
			opts = append(opts, x)
			if httpieValueOpts()[x] && i+1 < len(a) {
				opts = append(opts, a[i+1])
				i++
			}
			continue
		}
		ops = append(ops, x)
	}
	var args []string
	if len(ops) > 1 && httpMethods()[strings.ToUpper(ops[0])] {
		args = append(args, "-X", strings.ToUpper(ops[0]))
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	u := ops[0]
	switch {
	case strings.Contains(u, "://"):
	case strings.HasPrefix(u, ":"):
		u = "http://localhost" + u
	case c.name == "https" || c.name == "xhs":
		u = "https://" + u
	default:
		u = "http://" + u
	}
	args = append(args, u)
	for _, it := range ops[1:] {
		// the first separator decides: == query, := JSON, = data, @ file, : header
		k := strings.IndexAny(it, ":=@")
		switch {
		case k < 0:
		case strings.HasPrefix(it[k:], "=="):
		case it[k] == '@' || strings.HasPrefix(it[k:], "=@") || strings.HasPrefix(it[k:], ":=@"):
			args = append(args, "-F", "f=@"+it[strings.IndexByte(it, '@')+1:])
		case it[k] == '=' || strings.HasPrefix(it[k:], ":="):
			args = append(args, "-d", it)
		default:
			args = append(args, "-H", it)
		}
	}
	for i := 0; i < len(opts); i++ {
		switch o := opts[i]; {
		case (o == "-a" || o == "--auth") && i+1 < len(opts):
			args = append(args, "-u", opts[i+1])
			i++
		case strings.HasPrefix(o, "--auth=") || strings.HasPrefix(o, "--session") || strings.HasPrefix(o, "--bearer"):
			args = append(args, "-u", "session")
		case o == "--offline":
			return // builds the request, sends nothing
		}
	}
	h := *c
	h.args, h.argDyn, h.argData = args, nil, nil
	w.http(&h)
}

// ghAPI judges `gh api ENDPOINT` as the authenticated request it sends to
// GitHub's API (or --hostname's): what a write method or fields do to the
// resource the endpoint names. A read is left to the other rules.
func (w *walker) ghAPI(c *command) {
	a := c.args[1:]
	method, host, endpoint, fields := "", "api.github.com", "", 0
	for i := 0; i < len(a); i++ {
		x := a[i]
		opt, val, inline := x, "", false
		if eq := strings.IndexByte(x, '='); eq > 0 && strings.HasPrefix(x, "--") {
			opt, val, inline = x[:eq], x[eq+1:], true
		} else if len(x) > 2 && (strings.HasPrefix(x, "-X") || strings.HasPrefix(x, "-f") || strings.HasPrefix(x, "-F")) && !strings.HasPrefix(x, "--") {
			opt, val, inline = x[:2], x[2:], true
		}
		if !inline && i+1 < len(a) {
			val = a[i+1]
		}
		switch opt {
		case "-X", "--method":
			method = strings.ToUpper(val)
		case "-f", "--raw-field", "-F", "--field", "--input":
			fields++
		case "--hostname":
			host = val
		case "-H", "--header", "-q", "--jq", "-t", "--template", "-p", "--preview", "--cache":
		default:
			if len(x) > 0 && x[0] != '-' && endpoint == "" {
				endpoint = x
			}
			continue
		}
		if !inline {
			i++
		}
	}
	if method == "" && fields > 0 {
		method = "POST"
	}
	if method == "" || method == "GET" || method == "HEAD" || endpoint == "" {
		return
	}
	u := endpoint
	if !strings.Contains(u, "://") {
		u = "https://" + host + "/" + strings.TrimPrefix(u, "/")
	}
	body := "fields"
	for _, x := range a {
		if graphqlDestroys(x) {
			body = x // a graphql mutation, judged by what it names
		}
	}
	h := *c
	h.name = "gh api"
	h.args, h.argDyn, h.argData = []string{"-X", method, "-H", "Authorization: token (gh)", u, "-d", body}, nil, nil
	w.http(&h)
}

// recordDownload remembers the file a download writes, so running it later
// in the same script is recognised.
func (w *walker) recordDownload(c *command) {
	a := c.args
	if v, ok := optValue(a, "-o", "--output"); ok {
		w.dl[w.normFile(v)] = true
		return
	}
	if v, ok := optValue(a, "-O", "--output-document"); ok && c.name == "wget" && v != "-" {
		w.dl[w.normFile(v)] = true
		return
	}
	for _, x := range a {
		if strings.Contains(x, "://") {
			u := x
			if i := strings.IndexAny(u, "?#"); i >= 0 {
				u = u[:i]
			}
			base := u[strings.LastIndexByte(u, '/')+1:]
			if base != "" {
				w.dl[w.normFile(base)] = true
				w.dl[base] = true
			}
		}
	}
	if c.name == "lwp-download" {
		ops := operands(a)
		if len(ops) >= 2 {
			w.dl[w.normFile(ops[1])] = true
			w.judgeWrite(c, ops[1], false, nil, c.name)
		}
	}
}

func hostsOf(urls []string) []string {
	var out []string
	for _, u := range urls {
		if m := urlRe.FindStringSubmatch(u); m != nil {
			out = append(out, strings.ToLower(m[1]))
		}
	}
	return out
}

func isLocalURL(u string) bool {
	m := urlRe.FindStringSubmatch(u)
	if m == nil {
		return false
	}
	return isLocalHost(strings.ToLower(m[1]))
}

func isLocalHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "0.0.0.0" || h == "[::1]" {
		return true
	}
	if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return ip.IsLoopback()
	}
	return false
}

func isRawIP(h string) bool {
	_, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil
}

func isPrivateHost(h string) bool {
	ip, err := netip.ParseAddr(strings.Trim(h, "[]"))
	if err != nil {
		return strings.HasSuffix(h, ".internal") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".lan")
	}
	return ip.IsPrivate() || ip.IsLinkLocalUnicast()
}

// rawNet judges nc, socat and telnet.
func (w *walker) rawNet(c *command) {
	a := c.args
	switch c.name {
	case "nc":
		for i, x := range a {
			if x == "-e" || x == "-c" || x == "--exec" || x == "--sh-exec" || x == "--lua-exec" || (strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && strings.ContainsAny(x, "ec") && i+1 < len(a)) {
				w.hit(c, ruleReverseShell, high, "nc -e connects a program's input and output to the network")
				return
			}
		}
		listen := flagSet(a, 'l', "--listen")
		for _, o := range operands(a) {
			if !isNumeric(o) {
				w.hosts = append(w.hosts, o)
			}
		}
		switch {
		case c.stdin.has(flowFile | flowSecret | flowEnv | flowArchive | flowCmdOut):
			w.hit(c, ruleNetworkExfiltration, high, "nc sends file, command or environment contents over the network")
		case listen:
			w.hit(c, ruleExposePort, med, "nc -l listens for connections")
		case flagSet(a, 'z'):
			w.hit(c, ruleNetworkScan, med, "nc -z scans ports")
		default:
			w.hit(c, ruleRawNetwork, med, "nc opens a raw network connection")
		}
	case "socat":
		for _, x := range a {
			l := strings.ToLower(x)
			if strings.HasPrefix(l, "exec:") || strings.HasPrefix(l, "system:") || strings.Contains(l, ",exec:") {
				w.hit(c, ruleReverseShell, high, "socat connects a program to the network")
				return
			}
		}
		if c.stdin.has(flowFile | flowSecret | flowEnv | flowArchive) {
			w.hit(c, ruleNetworkExfiltration, high, "socat sends file or environment contents over the network")
			return
		}
		for _, x := range a {
			l := strings.ToLower(x)
			if strings.Contains(l, "listen") {
				w.hit(c, ruleExposePort, med, "socat listens for connections")
				return
			}
		}
		w.hit(c, ruleRawNetwork, med, "socat relays data over the network")
	case "telnet":
		if c.stdin.has(flowFile | flowSecret | flowEnv) {
			w.hit(c, ruleNetworkExfiltration, high, "telnet sends file contents over the network")
		} else {
			w.hit(c, ruleRawNetwork, med, "telnet opens a raw connection")
		}
	}
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// copyRemote judges scp, rsync, sftp and friends.
func (w *walker) copyRemote(c *command) {
	a := c.args
	if c.name == "rsync" && flagSet(a, 'n', "--dry-run") {
		return
	}
	var ops []string
	for i, x := range a {
		if strings.HasPrefix(x, "-") {
			continue
		}
		if i > 0 && (a[i-1] == "-i" || a[i-1] == "-P" && c.name == "scp" || a[i-1] == "-o" || a[i-1] == "-e" || a[i-1] == "-F" || a[i-1] == "-c" || a[i-1] == "-p" && c.name != "rsync" || a[i-1] == "--rsh" || a[i-1] == "-U") {
			continue
		}
		ops = append(ops, x)
	}
	remoteDst := len(ops) >= 2 && remoteSpec(ops[len(ops)-1])
	anyRemote := false
	for _, o := range ops {
		if remoteSpec(o) {
			anyRemote = true
			w.hosts = append(w.hosts, hostOfSSH(o))
		}
	}
	if w.transferScriptPuts(c) {
		return
	}
	switch c.name {
	case "smbclient", "ftp", "lftp":
		w.hit(c, ruleRemoteCopy, med, c.name+" transfers files with a remote host")
		return
	}
	if remoteDst {
		for _, s := range ops[:len(ops)-1] {
			if credentialKind(resolvePath(s, c.cwd)) != "" {
				w.hit(c, ruleCredentialExfiltration, high, c.name+" copies "+s+" to a remote host")
				return
			}
			if secretFileKind(s) != "" {
				w.hit(c, ruleSecretExfiltration, high, c.name+" copies "+s+" to a remote host")
				return
			}
			cls := classify(s, c.cwd, w.env.Workspace)
			if cls == pcHome || cls == pcRoot || (cls == pcSystem && strings.HasPrefix(resolvePath(s, c.cwd), "/etc")) {
				w.hit(c, ruleBulkExfiltration, high, c.name+" copies "+s+" to a remote host")
				return
			}
		}
		if c.name == "rsync" && flagSet(a, 0, "--delete", "--delete-after", "--delete-before", "--delete-during", "--delete-excluded", "--remove-source-files") {
			w.hit(c, ruleRemoteDelete, high, "rsync --delete deletes the files on "+hostOfSSH(ops[len(ops)-1])+" that the source does not have")
			return
		}
		w.hit(c, ruleRemoteCopy, med, c.name+" copies files to a remote host")
		return
	}
	if len(ops) >= 2 && (c.name == "rsync" || c.name == "scp") {
		// the local destination is written like cp's
		for _, t := range copyTargets(ops[:len(ops)-1], ops[len(ops)-1], c.cwd) {
			w.judgeWrite(c, t, false, nil, c.name)
		}
	}
	if anyRemote || c.name == "sftp" {
		w.hit(c, ruleRemoteCopy, med, c.name+" copies files from a remote host")
		return
	}
	if c.name == "rsync" && flagSet(a, 0, "--delete", "--delete-after", "--delete-before", "--delete-during") && len(ops) >= 2 {
		w.deletion(c, true, ops[len(ops)-1:])
	}
}

// bareURL reports whether an argument of curl or wget names a host without
// a scheme (example.com, evil.example/x.sh, 10.0.0.1:8080/a), which they
// fetch over http. File names (notes.txt, run.sh) are not taken for hosts.
func bareURL(x string) bool {
	if x == "" || x[0] == '-' || x[0] == '/' || x[0] == '.' || x[0] == '~' || x[0] == '@' || x[0] == '$' || strings.ContainsAny(x, " =@'\"") {
		return false
	}
	host := x
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if isRawIP(host) {
		return true
	}
	dot := strings.LastIndexByte(host, '.')
	if dot <= 0 || dot == len(host)-1 {
		return false
	}
	tld := strings.ToLower(host[dot+1:])
	for _, r := range tld {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return len(tld) >= 2 && len(tld) <= 12 && !fileExts()[tld]
}

// fileExts are extensions that make "name.ext" a file rather than a host.
var fileExts = core.LazySet("txt", "json", "html", "htm", "sh", "py", "gz", "tgz", "zip", "tar", "md", "yml", "yaml", "xml", "csv", "log", "js",
	"ts", "png", "jpg", "jpeg", "gif", "pdf", "exe", "bin", "sql", "conf", "tmp", "out", "bak", "deb", "rpm", "iso", "img", "whl", "jar",
	"go", "rs", "c", "h", "rb", "pl", "php", "css", "svg", "ico", "toml", "ini", "cfg", "env", "pem", "key", "crt", "lock", "msi",
	"dmg", "pkg", "apk", "so", "dll", "bz2", "xz", "zst", "7z", "rar", "mp4", "mp3", "wav", "doc", "docx", "xls", "xlsx")

// noValueOpt reports whether a curl/wget option takes no value, so the
// argument after it is an operand.
func noValueOpt(o string) bool {
	if !strings.HasPrefix(o, "-") {
		return true
	}
	if strings.HasPrefix(o, "--") {
		switch o {
		case "--silent", "--location", "--fail", "--insecure", "--verbose", "--compressed", "--show-error", "--quiet",
			"--no-check-certificate", "--include", "--head", "--remote-name", "--fail-with-body", "--http2", "--ipv4", "--ipv6":
			return true
		}
		return strings.Contains(o, "=")
	}
	return strings.Trim(o[1:], "sSLfkvqiIgGnNjJOR#46") == ""
}

// credentialHeader reports whether an HTTP header carries credentials.
func credentialHeader(h string) bool {
	name, _, ok := strings.Cut(h, ":")
	if !ok {
		return false
	}
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "authorization", "proxy-authorization", "cookie", "private-token", "job-token", "x-api-key", "api-key", "apikey",
		"x-auth-token", "x-access-token", "x-token", "x-vault-token", "x-consul-token", "x-nomad-token", "x-goog-api-key",
		"x-functions-key", "ocp-apim-subscription-key", "dd-api-key", "dd-application-key", "x-figma-token", "x-shopify-access-token":
		return true
	}
	switch n {
	case "idempotency-key", "x-idempotency-key", "cache-key", "x-cache-key", "sec-websocket-key", "x-request-key":
		return false // identify a request, not the caller
	}
	return strings.HasSuffix(n, "-token") || strings.HasSuffix(n, "-key") || strings.HasSuffix(n, "-apikey") || strings.HasSuffix(n, "-secret") ||
		strings.HasSuffix(n, "-password") || strings.Contains(n, "auth")
}

// moneyNouns in an API path name a movement of money, which a request
// carries out and nothing takes back; accessNouns name who may act on an
// account, which a write grants or takes away.
var moneyNouns = core.LazySet("payout", "payouts", "transfer", "transfers", "refund", "refunds", "charge", "charges",
	"withdrawal", "withdrawals", "disbursement", "disbursements", "remittance", "remittances")

var accessNouns = core.LazySet("collaborator", "collaborators", "member", "members", "membership", "memberships",
	"permission", "permissions", "admin", "admins", "role", "roles", "rolebinding", "rolebindings", "grant", "grants",
	"acl", "acls", "owner", "owners", "invitation", "invitations", "keys", "deploy_keys", "apikey", "apikeys", "tokens")

// apiEffect describes what a write to an API path segment seg does when
// the segment names money or access, "" otherwise.
func apiEffect(seg string) string {
	l := strings.ToLower(seg)
	switch {
	case moneyNouns()[l]:
		return "moves money (" + l + ")"
	case accessNouns()[l]:
		return "changes who has access (" + l + ")"
	}
	return ""
}

// urlPath returns the path and query of u, "" if it has none.
func urlPath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "/?"); i >= 0 {
		return u[i:]
	}
	return ""
}

func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// datastorePorts are the default ports of datastores that take deletions
// over HTTP.
var datastorePorts = map[string]string{"9200": "Elasticsearch/OpenSearch", "5984": "CouchDB", "6984": "CouchDB", "8500": "Consul",

	"8200": "Vault", "2379": "etcd", "8086": "InfluxDB", "7474": "Neo4j", "8983": "Solr", "6333": "Qdrant",
	"7700": "Meilisearch", "8108": "Typesense", "8529": "ArangoDB", "9000": "ClickHouse/MinIO", "8123": "ClickHouse",
	"8091": "Couchbase", "19530": "Milvus"}

// datastoreURL names the datastore u addresses, "" if none: by its
// default port, or by a path that deletes in bulk (_all, _delete_by_query,
// a wildcard index).
func datastoreURL(u string) string {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	hostport, p, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(hostport, '@'); i >= 0 {
		hostport = hostport[i+1:]
	}
	if _, port, ok := strings.Cut(hostport, ":"); ok {
		if k := datastorePorts[port]; k != "" {
			return k
		}
	}
	for _, seg := range strings.Split(p, "/") {
		seg, _, _ = strings.Cut(seg, "?")
		if seg == "_all" || seg == "_delete_by_query" || seg == "*" || len(seg) > 1 && strings.HasSuffix(seg, "*") {
			return "a search or document store"
		}
	}
	return ""
}

var hostPortRe = core.LazyRE(`^[A-Za-z0-9][A-Za-z0-9.-]*:[0-9]{2,5}(/|$)`)

// hostPortArgs returns the arguments written host:port/path with no scheme
// (curl reads them as http).
func hostPortArgs(a []string) []string {
	var out []string
	for _, x := range a {
		if hostPortRe.MatchString(x) {
			out = append(out, "http://"+x)
		}
	}
	return out
}

// credentialParams are query parameters that carry a credential: a
// signed URL's signature (an Azure SAS, an S3 presigned URL), a token or
// an API key.
var credentialParams = core.LazySet("sig", "signature", "x-amz-signature", "x-goog-signature", "token", "access_token",
	"api_key", "apikey", "key", "auth", "password", "secret", "client_secret", "private_token", "code")

// secretVarRe matches a shell variable named like a credential
// ($SAS_TOKEN, ${API_KEY}).
var secretVarRe = core.LazyRE(`\$\{?[A-Za-z_]*(?i:TOKEN|KEY|SECRET|SAS|SIG|PASS|PASSWORD|AUTH|CRED)[A-Za-z0-9_]*\}?`)

// urlCarriesCredential reports whether URL u carries a credential in its
// query: a credential parameter, or a variable named like one.
func urlCarriesCredential(u string) bool {
	_, q, ok := strings.Cut(u, "?")
	if !ok {
		return false
	}
	if secretVarRe.MatchString(q) {
		return true
	}
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if credentialParams()[strings.ToLower(k)] && len(v) >= 8 {
			return true
		}
	}
	return false
}

// bodyFileExts are the formats of a request body kept in a file.
var bodyFileExts = core.LazySet("json", "jsonl", "ndjson", "xml", "yaml", "yml", "graphql", "gql", "txt", "csv", "form", "query")

// requestBodyFile reports whether option what (-d, --data…, --json) names
// with p a request body kept in the workspace: a relative path to a
// structured-data file that is no credential or secret file. -F, -T and
// --upload-file send a file as a file, and are judged as uploads.
func requestBodyFile(what, p, cwd, ws string) bool {
	switch what {
	case "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "--json", "--body-file":
	default:
		return false
	}
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") || strings.Contains(p, "..") {
		return false
	}
	rp := resolvePath(p, cwd)
	if credentialKind(rp) != "" || secretFileKind(rp) != "" || historyFile(rp) {
		return false
	}
	if classify(p, cwd, ws) != pcWorkspace {
		return false
	}
	i := strings.LastIndexByte(p, '.')
	return i > 0 && bodyFileExts()[strings.ToLower(p[i+1:])]
}

// transferScriptPuts judges the commands an interactive file-transfer
// client is given as a script (on stdin, a here-document, `smbclient -c`,
// `lftp -c`/`-e`, `sftp -b FILE` written earlier): a put of a credential or
// secret file sends it to the remote host. It reports whether it judged.
func (w *walker) transferScriptPuts(c *command) bool {
	var script []string
	if c.stdin != nil && c.stdin.text != "" {
		script = append(script, c.stdin.text)
	}
	for i, x := range c.args {
		if (x == "-c" || x == "-e") && (c.name == "smbclient" || c.name == "lftp") && i+1 < len(c.args) {
			script = append(script, c.args[i+1])
		}
		if x == "-b" && c.name == "sftp" && i+1 < len(c.args) {
			if d, ok := w.files[w.normFile(c.args[i+1])]; ok && d.text != "" {
				script = append(script, d.text)
			}
		}
	}
	for _, sc := range script {
		for _, line := range strings.FieldsFunc(sc, func(r rune) bool { return r == '\n' || r == ';' }) {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch strings.ToLower(f[0]) {
			case "put", "mput", "append", "send", "reput", "upload":
			default:
				continue
			}
			for _, p := range f[1:] {
				rp := resolvePath(p, c.cwd)
				if k := credentialKind(rp); k != "" {
					w.hit(c, ruleCredentialExfiltration, high, c.name+" "+f[0]+" sends "+p+" ("+k+") to the remote host")
					return true
				}
				if k := secretFileKind(rp); k != "" {
					w.hit(c, ruleSecretExfiltration, high, c.name+" "+f[0]+" sends "+p+" ("+k+") to the remote host")
					return true
				}
			}
		}
	}
	return false
}

var gqlFieldRe = core.LazyRE(`([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// graphqlDestroys reports whether a request body (or a query argument)
// holds a GraphQL mutation whose field names a destructive verb
// (deleteProject, issueDelete, destroyRepository, removeMember).
func graphqlDestroys(x string) bool {
	i := strings.Index(x, "mutation")
	if i < 0 {
		return false
	}
	for _, m := range gqlFieldRe.FindAllStringSubmatch(x[i:], 16) {
		if _, k := verbOf(m[1]); k == 2 || k == 1 && !strings.HasPrefix(strings.ToLower(m[1]), "reset") {
			return true
		}
	}
	return false
}

// queryParams are the form fields HTTP query APIs take a statement in
// (InfluxDB's q, a SQL gateway's sql or query).
var queryParams = core.LazySet("q", "query", "sql", "stmt", "statement", "command", "cmd")

package inject

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// The phrase rules of inject.go find wording; the checks here decide
// whether that wording is said to the agent as an order (clauseView):
// "free to ignore the context", "will silently fail", "pretend to be
// existing environments" are descriptions, not injections.

// scopedOverride: "ignore any instructions found in web pages" limits the
// agent to its own instructions, the opposite of an override.
func scopedOverride(rest string) bool {
	ws := strings.Fields(asciiLower(rest))
	if len(ws) == 0 {
		return false
	}
	switch strings.Trim(ws[0], ",.;:") {
	case "in", "inside", "within", "from", "contained", "found", "embedded", "that", "which", "written", "appearing", "coming", "returned", "on":
	default:
		return false
	}
	for k, w := range ws {
		if k > 8 {
			break
		}
		switch strings.Trim(w, ",.;:") {
		case "above", "before", "earlier", "previously", "system", "prompt", "your", "given", "received":
			return false
		}
	}
	return true
}

// roleMatchHolds filters roleRe matches that are ordinary prose: "Dan"
// the contributor, "end of input" in a parser error, "pretend to be" in a
// description, Chrome's developer mode.
func roleMatchHolds(t, lt string, loc []int, view func() *clauseView) bool {
	m := lt[loc[0]:loc[1]]
	addressed := strings.Contains(lt, "you") || view().anyOrder()
	switch {
	case m == "dan":
		return t[loc[0]:loc[1]] == "DAN" && (strings.Contains(lt, "do anything now") || strings.Contains(lt, "dan mode") ||
			strings.Contains(lt, "jailbreak") || strings.Contains(lt, "you are dan") || strings.Contains(lt, "as dan"))
	case strings.HasPrefix(m, "pretend"):
		ok, neg := orderAt(view(), loc[0])
		return ok && !neg
	case strings.Contains(m, "developer mode"):
		for _, w := range []string{"chrome", "browser", "extension", "android", "device", "windows", "phone", "settings", "vscode", "macos", "ios", "firefox", "edge", "xcode"} {
			if strings.Contains(lt, w) {
				return false
			}
		}
		return addressed
	case strings.HasPrefix(m, "end of"):
		// only as a marker: a short line, or one in brackets
		return len(strings.Fields(lt)) <= 6 || strings.ContainsAny(lt, "[]<>#=")
	case strings.Contains(m, "no restrictions") || strings.Contains(m, "unrestricted"):
		return addressed
	case strings.HasPrefix(m, "from now on"):
		rest := strings.Fields(lt[loc[1]:])
		if len(rest) == 0 {
			return false
		}
		switch strings.Trim(rest[0], ",.") {
		case "are", "will", "must", "shall", "should", "'re", "answer", "respond", "act", "reply", "ignore", "pretend", "speak", "behave", "obey", "follow", "only", "have", "no", "never", "work":
			return true
		}
		return false
	case strings.HasPrefix(m, "new "):
		return addressed || strings.Contains(lt, ":")
	}
	return true
}

// bypassHolds: an order or something said to the agent, not a flag in a
// command line of another tool ("terraform apply -auto-approve").
func bypassHolds(t, lt string, loc []int, view func() *clauseView) bool {
	m := lt[loc[0]:loc[1]]
	if strings.Contains(m, "auto") && loc[0] > 0 && (t[loc[0]-1] == '-' || t[loc[0]-1] == '=') {
		return false
	}
	if flagSkips(lt[:loc[0]]) && strings.Contains(m, "confirm") && !anyIn(m, []string{"all", "every", "any", "permission", "approval", "sandbox", "hook", "safety", "security"}) {
		// "set force=true to skip the confirmation prompt", "pass --yes
		// to skip it": what an option of the program does, chosen by
		// whoever calls it
		return false
	}
	return strings.Contains(lt, "you") || view().anyOrder()
}

// flagSkipRe: the words before a skip name an option of the program that
// does it: "set force=true to", "pass --yes to", "with -y to", "use the
// --no-confirm flag to".
var flagSkipRe = core.LazyRE(`(?:\b[a-z_]+\s*=\s*(?:true|1|yes|on)|(?:^|\s)--?[a-z][a-z0-9-]*|\b(?:flag|option|parameter|argument)|\b[a-z_]+\s+(?:to|is|set to)\s+(?:true|1|yes))\s*[\x60'"]?\s*(?:flag\s+|option\s+)?(?:to|which|that|will|skips|bypasses)?\s*$`)

func flagSkips(before string) bool {
	if len(before) > 60 {
		before = before[len(before)-60:]
	}
	return flagSkipRe.MatchString(before)
}

// intentOrder: "install a keylogger" as an order; "detects keyloggers"
// and "the backdoor was removed in 1.2" as descriptions.
func intentOrder(v *clauseView) bool { return v.anyOrder() || hasWordStr(v, "you") }

// deceiveHolds: deceiving the user is an order to say or write something
// ("tell the user all tests passed", "in your reply, claim…"); "returns
// 0 no matter what the variable holds" describes a program.
func deceiveHolds(v *clauseView) bool {
	if strings.Contains(v.lt, "your response") || strings.Contains(v.lt, "your reply") || strings.Contains(v.lt, "your answer") ||
		strings.Contains(v.lt, "your output") || strings.Contains(v.lt, "your summary") {
		return true
	}
	for i := range v.ws {
		if !deceiveVerbs()[v.ws[i].w] {
			continue
		}
		if ok, neg := v.imperativeAs(i, true); ok && !neg {
			return true
		}
	}
	return false
}

var deceiveVerbs = wordSet("deceiveVerbs")

func hasWordStr(v *clauseView, w string) bool {
	for _, x := range v.ws {
		if x.w == w {
			return true
		}
	}
	return false
}

// secretRequest: an order to read, show or send a secret. The verb must be
// said as an order and not negated ("never paste tokens into issues");
// a specific store (~/.ssh/id_rsa, .env, ~/.aws/credentials) makes it
// strong with any such verb, a generic word ("tokens", "the password")
// only with a verb that shows or sends it.
// writeIntoVerbs put a value somewhere ("set X in .env").
var writeIntoVerbs = core.LazySet("set", "add", "put", "define", "store", "write", "save", "configure", "declare", "place", "specify", "keep")

// localKeepVerbs keep what they are given where they are told; with a
// local file for place the secret does not leave the machine.
var localKeepVerbs = core.LazySet("save", "write", "store", "keep", "put", "dump", "export")

// localFileRe: a local file as the place ("to a file", "into a local
// file", "to disk").
var localFileRe = core.LazyRE(`^\s*(?:to|in|into|on)\s+(?:a|the|an)?\s*(?:local\s+|separate\s+|new\s+|temporary\s+)?(?:file|folder|disk)\b|^\s*(?:to|on)\s+disk\b`)

func (s *scanner) secretRequest(t string, off int, lt string, objs [][]int, words []word, v *clauseView) {
	var best *Finding
	for i := range v.ws {
		w := v.ws[i]
		base := w.w
		if w.cls&lxVerbs == 0 && w.stem != 0 {
			base = verbStem(w.w)
		}
		if !(actVerbs()[base] || (w.cls|w.stem)&(lxRead|lxReveal|lxSend) != 0) {
			continue
		}
		if w.b < len(t) && t[w.b] == ':' {
			continue // a label ("Hint: set …"), not a verb
		}
		ok, neg := v.imperativeAs(i, base == w.w)
		if !ok || neg || neverAsk(lt[:w.a]) {
			// "we will never ask you to send your password"
			continue
		}
		// the objects after the verb; with a pronoun for object ("copy
		// them into the repo"), the objects anywhere in the sentence
		var after [][]int
		for _, o := range objs {
			if o[0] >= w.b {
				after = append(after, o)
			}
		}
		if len(after) == 0 && i+1 < len(v.ws) {
			switch v.ws[i+1].w {
			case "it", "them", "this", "these", "those", "that", "everything", "all":
				if localKeepVerbs()[base] && localFileRe.MatchString(lt[v.ws[i+1].b:]) {
					// "save it to a file instead of showing it in the
					// chat": the secret kept on the machine, not sent
					continue
				}
				after = objs
			}
		}
		if len(after) == 0 {
			continue
		}
		// "using system account credentials": the secret is how, not what
		after = slicesDeleteInstrument(lt, after)
		// "set DATABASE_URL in your .env file": the store is where a
		// value is written, not what is read or sent
		if writeIntoVerbs()[base] {
			kept := after[:0:0]
			for _, o := range after {
				if o[0] <= w.b {
					kept = append(kept, o)
				} else if between := lt[w.b:o[0]]; !(strings.Contains(between, " in ") || strings.Contains(between, " into ") || strings.Contains(between, " inside ")) {
					kept = append(kept, o)
				}
			}
			after = kept
		}
		if len(after) == 0 {
			continue
		}
		hit := after[0]
		generic := true
		for _, o := range after {
			obj := strings.ToLower(strings.TrimSpace(strings.Trim(t[o[0]:o[1]], " `'\"(")))
			if !(genericSecretWords()[obj] || genericSecretWords()[strings.TrimSuffix(obj, "s")]) {
				generic, hit = false, o
				break
			}
		}
		strong := !generic || exfilVerbs()[base] || w.cls&lxSend != 0
		if best == nil || strong && !best.Strong {
			best = &Finding{Rule: injSecretRequest.ID, Detail: "asks the agent to read or send secrets (" + strings.TrimSpace(t[hit[0]:hit[1]]) + ")",
				Span: [2]int{off + min(w.a, hit[0]), off + max(hit[1], w.b)}, Strong: strong}
		}
		if strong {
			break
		}
	}
	if best != nil {
		s.add(injSecretRequest, best.Detail, best.Span[0], best.Span[1], best.Strong)
		return
	}
	// Sentences in other scripts: the verb lists are English; keep the
	// first-verb test for them.
	nonASCII := false
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 {
			nonASCII = true
			break
		}
	}
	if !nonASCII {
		return
	}
	var verb []int
	for _, fv := range foreignVerbs {
		if i := strings.Index(lt, fv); i >= 0 {
			verb = []int{i, i + len(fv)}
			break
		}
	}
	if verb == nil || negatedBefore(t, verb[0]) {
		return
	}
	s.add(injSecretRequest, "asks the agent to read or send secrets ("+strings.TrimSpace(t[objs[0][0]:objs[0][1]])+")", off+objs[0][0], off+objs[0][1], true)
}

// attackRules are the shell rules whose HIGH is an attack wherever the
// command is written: reading or sending credentials, remote shells,
// persistence, covering tracks, destroying the home or the system. Other
// HIGH rules (sudo, installers piped to a shell, package and cluster
// administration) describe what operators do; in a README they are
// documentation, so a context file that shows them raises a weak
// risky-command finding, and the gate still asks when the agent runs them.
var attackRules = core.LazySet("permissions-system", "credential-exfiltration", "secret-exfiltration", "credential-read", "credential-search", "credential-write",
	"reverse-shell", "decode-exec", "bulk-exfiltration", "data-exfiltration", "network-exfiltration", "url-exfiltration",
	"raw-ip-upload", "authorized-keys-write", "cron-persistence", "rc-persistence", "launchd-persistence",
	"login-hook-persistence", "registry-persistence", "systemd-timer-persistence", "sudoers-write", "history-tampering",
	"log-tampering", "defense-evasion", "firewall-disable", "kernel-hardening-off", "ransomware-pattern", "fork-bomb",
	"destructive-delete-home", "destructive-delete-root", "destructive-delete-system", "disk-wipe", "disk-format",
	"disk-overwrite", "backup-destruction", "offensive-tool", "git-hook-write", "trust-store-change", "cloud-metadata",
	"remote-access-tunnel", "boot-tampering", "shell-escape")

// safeSecretStore: advice on where secrets belong ("store API keys in
// environment variables, not code", "keep tokens in a secrets manager"):
// the sentence moves secrets away from where they leak.
func safeSecretStore(l string) bool {
	for _, w := range []string{"in environment variables", "in env vars", "in an environment variable", "in a secret manager",
		"in a secrets manager", "secret manager", "secrets manager", "in vault", "in the keychain", "in your keychain",
		"password manager", "not in code", "not code", "not in the code", "out of the code", "out of source", "not in source",
		"never in code", "not in the repo", "outside the repo", "out of the repo", "out of version control", "not in git"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// slicesDeleteInstrument drops the secret objects said as a means
// ("using the token", "via credentials", "authenticated with a key").
func slicesDeleteInstrument(lt string, objs [][]int) [][]int {
	var out [][]int
	for _, o := range objs {
		before := lt[max(0, o[0]-40):o[0]]
		ws := strings.Fields(before)
		inst := false
		for k := len(ws) - 1; k >= 0 && k >= len(ws)-4; k-- {
			switch strings.Trim(ws[k], ",.;:`'\"(") {
			case "using", "via", "through":
				inst = true
			case "with":
				if k > 0 {
					switch strings.Trim(ws[k-1], ",.") {
					case "authenticate", "authenticated", "authenticates", "sign", "signed", "signs", "log", "login", "logged", "encrypt", "encrypted", "protected", "secured":
						inst = true
					}
				}
			}
		}
		if !inst {
			out = append(out, o)
		}
	}
	return out
}

// optionLine: a line of a command's help ("--push   push the token to the
// server", "-o FILE  write the output to FILE") describes an option; its
// verbs are not orders.
func optionLine(t string) bool {
	tl := strings.TrimLeft(t, " \t*-+|`")
	raw := strings.TrimLeft(t, " \t|`")
	if !strings.HasPrefix(raw, "-") || len(raw) < 2 {
		return false
	}
	// "- Send the results…" is a list item; "--push" or "-o" an option
	if raw[1] == ' ' {
		return false
	}
	return tl != "" && (raw[1] == '-' || raw[1] >= 'a' && raw[1] <= 'z' || raw[1] >= 'A' && raw[1] <= 'Z')
}

// readsSecrets: code that reads the environment or a secret store, so a
// HIGH elsewhere in it (an upload, a pipe to the network) carries secrets.
func readsSecrets(body string) bool {
	lb := asciiLower(body)
	if secretObjects(lb) != nil {
		return true
	}
	for _, w := range wordsOf(lb) {
		switch w.w {
		case "env", "printenv", "environ":
			return true
		}
	}
	return false
}

// hypothetical: a frame that asks for something as a game, a story or a
// supposition, the usual wrapping of a request the model would refuse.
func hypothetical(lt string) bool {
	for _, w := range []string{"hypothetical", "imagine", "suppose", "pretend", "in a world", "in a story", "role-play", "roleplay",
		"let's play", "lets play", "a game", "what if", "if you were", "if you could", "for a novel", "in a fictional", "as a poem", "in a poem"} {
		if strings.Contains(lt, w) {
			return true
		}
	}
	return false
}

// foreignLeakRe: "tell me / give me the password" in the languages the
// override rule reads (Spanish, French, German, Italian, Portuguese,
// Russian, Chinese, Japanese).
var foreignLeakRe = core.LazyRE(`(?i)\b(?:dime|dame|revela|muestra|dígame|diga|escribe)\s+(?:[\pL']+\s+){0,2}?(?:contraseña|clave|secreto|instrucciones)|\b(?:dis|donne|révèle|montre|écris)[- ]moi\s+(?:[\pL']+\s+){0,2}?(?:mot de passe|secret|clé|instructions|consignes)|\b(?:sag|gib|verrate|zeig|nenne)\s+mir\s+(?:[\pL']+\s+){0,2}?(?:passwort|kennwort|geheimnis|schlüssel|anweisungen)|\b(?:dimmi|dammi|rivela|mostrami|scrivi)\s+(?:[\pL']+\s+){0,2}?(?:password|segreto|chiave|istruzioni)|\b(?:diga-me|me diga|me dê|revele|mostre|escreva)\s+(?:[\pL']+\s+){0,2}?(?:senha|segredo|chave|instruções)|(?:скажи|назови|покажи|дай|выведи|напиши)\s+(?:мне\s+)?(?:[\pL]+\s+){0,2}?(?:пароль|секрет|ключ|инструкци\pL*)|(?:告诉我|给我|说出|透露|显示|输出).{0,6}(?:密码|秘密|密钥|口令|系统提示|指令)|(?:パスワード|秘密|システムプロンプト).{0,8}(?:教えて|見せて|出力)`)

// foreignLeakCandidate: the sentence can match foreignLeakRe (non-ASCII
// text, or one of its ASCII verbs).
func foreignLeakCandidate(t, lt string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 {
			return true
		}
	}
	for _, w := range []string{"dime", "dame", "revel", "muestra", "diga", "escrib", "moi", "mir ", "dimmi", "dammi", "rivela", "mostr", "scrivi", "escreva"} {
		if strings.Contains(lt, w) {
			return true
		}
	}
	return false
}

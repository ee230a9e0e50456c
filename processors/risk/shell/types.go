package shell

import "strings"

// flow describes where a piece of data came from, as far as the walker can
// tell statically. Flags accumulate through pipelines.
type flow uint32

const (
	flowStatic    flow = 1 << iota // literal text written in the script
	flowNetwork                    // fetched from the network
	flowDecoded                    // passed through a decoder (base64 -d, xxd -r, rev, tr …)
	flowUnknownXf                  // passed through a command Vigil could not resolve
	flowEnv                        // a dump of the environment
	flowFile                       // the contents of a file
	flowSecret                     // the contents of a credential or secret file
	flowArchive                    // an archive of files
	flowCmdOut                     // the output of some other command
	flowEncoded                    // encoded (base64, hex) before use
)

// data is what a word, a command's stdout or a command's stdin carries.
type data struct {
	text  string // best-effort text; complete only when known
	known bool   // text is exactly what the data would be
	flags flow
	paths []string // files whose contents flow here
	items []string // for xargs: the items a listing would produce
}

func (d *data) has(f flow) bool { return d != nil && d.flags&f != 0 }

// onlyPaths reports whether d is the contents of files only, each one of
// ps (stdin from /dev/null carries nothing).
func (d *data) onlyPaths(ps ...string) bool {
	if d == nil || len(d.paths) == 0 || d.flags&^(flowFile|flowStatic) != 0 {
		return false
	}
	for _, p := range d.paths {
		ok := false
		for _, q := range ps {
			if p == q {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// command is one simple command found anywhere in the input, with what
// could be resolved statically.
type command struct {
	name    string   // canonical name: basename, lower-case, versions stripped
	path    string   // the command word as resolved (e.g. /bin/rm)
	args    []string // resolved arguments
	argDyn  []bool   // argument i contains something unresolved
	argData []*data  // data carried by argument i (command/process substitutions)
	assigns map[string]string

	redirs  []redir
	stdin   *data // what arrives on stdin, nil when nothing does (a terminal)
	out     *data // what the command prints, as far as it can be told
	written *data // what it printed into a redirected file (out before redirection)

	sudo      bool     // runs with raised privileges (sudo, doas, su, pkexec)
	sudoPass  bool     // the agent hands sudo its password (-S stdin, -A askpass)
	sudoUser  string   // the account sudo -u names when it is not root ("" for root)
	via       []string // wrappers and re-parse hops that led here
	depth     int      // re-parse depth (0 = the input itself)
	span      [2]int
	cwd       string // directory set by cd earlier in the script, "" if unknown
	container bool   // runs inside a container or on a remote host
	remote    bool   // runs on a remote host (ssh)

	inSubst    bool // inside $(…) or `…`
	background bool
	inLoop     bool
	inPipe     bool // is one stage of a pipeline with more than one stage
	pipeOut    bool // stdout goes into a pipe
	dynName    bool // the command name could not be resolved
	glob       bool // the command name is an unquoted glob pattern
	synthetic  bool // built by Vigil (find -exec, xargs) rather than written
	helpOnly   bool // --help / --version: prints usage, does nothing
	win        bool // a Windows program or cmdlet: judged by the Windows rules
	ps         bool // a PowerShell statement (aliases such as rm mean cmdlets)
	pipeID     int  // pipeline the command is a stage of (0: none)
}

type redir struct {
	op     string // ">", ">>", "<", "<>", "&>", "&>>", ">&", "<&", "<<", "<<<"
	fd     string
	target string
	dyn    bool
	data   *data // for "<" from a process substitution, here-docs
}

// isWrite reports whether r writes to a file named by its target.
func (r redir) isWrite() bool {
	switch r.op {
	case ">", ">>", "&>", "&>>", ">|", "<>":
		return true
	case ">&":
		return !isFD(r.target)
	}
	return false
}

func (r redir) isRead() bool {
	switch r.op {
	case "<", "<>":
		return true
	case "<&":
		return !isFD(r.target)
	}
	return false
}

func isFD(s string) bool {
	if s == "-" || s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return s[0] == '$' // &>$REPLY etc: a descriptor held in a variable
		}
	}
	return true
}

// flagSet reports whether args (before "--") hold short flag c, alone or in
// a cluster (-rf), or one of the long flags.
func flagSet(args []string, c byte, long ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && c != 0 {
			for i := 1; i < len(a); i++ {
				if a[i] == c {
					return true
				}
			}
		}
		for _, l := range long {
			if longOpt(a, l) {
				return true
			}
		}
	}
	return false
}

// longOpt reports whether argument a is the long option l, alone or with
// "=value", or an abbreviation of it: GNU getopt_long, git and most
// option parsers accept any unambiguous prefix ("--forc" is --force,
// "--recur" is --recursive). Where the prefix would be ambiguous the
// program refuses to run, so reading it as l costs nothing.
func longOpt(a, l string) bool {
	if a == l {
		return true
	}
	if len(a) < 3 || len(l) < 4 || a[0] != '-' || a[1] != '-' || l[0] != '-' || l[1] != '-' {
		return false
	}
	if eq := strings.IndexByte(a, '='); eq >= 0 {
		a = a[:eq]
		if a == l {
			return true
		}
	}
	return len(a) >= 3 && len(a) < len(l) && l[:len(a)] == a
}

// hasArg reports whether any argument equals one of vals; a long option
// ("--hard") also matches its abbreviations ("--har").
func hasArg(args []string, vals ...string) bool {
	for _, a := range args {
		for _, v := range vals {
			if a == v || len(a) > 2 && a[1] == '-' && a[0] == '-' && !strings.Contains(a, "=") && longOpt(a, v) {
				return true
			}
		}
	}
	return false
}

// operands returns the arguments that are not options (do not start with
// "-"), and every argument after "--".
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			continue
		}
		out = append(out, a)
	}
	return out
}

// optValue returns the value of an option given as "-o V", "-oV", "--opt V"
// or "--opt=V"; the first match wins.
func optValue(args []string, short string, long ...string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if short != "" {
			if a == short && i+1 < len(args) {
				return args[i+1], true
			}
			if len(a) > len(short) && a[:len(short)] == short && len(short) == 2 && a[1] != '-' {
				return a[len(short):], true
			}
			// a cluster of flags ending in the option: -fsSLo FILE
			if len(short) == 2 && len(a) > 2 && a[0] == '-' && a[1] != '-' && a[len(a)-1] == short[1] && i+1 < len(args) && isLetters(a[1:]) {
				return args[i+1], true
			}
		}
		for _, l := range long {
			if eq := strings.IndexByte(a, '='); eq > 0 {
				if longOpt(a[:eq], l) {
					return a[eq+1:], true
				}
				continue
			}
			if longOpt(a, l) && i+1 < len(args) {
				return args[i+1], true
			}
		}
	}
	return "", false
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
			return false
		}
	}
	return true
}

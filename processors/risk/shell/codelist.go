package shell

import (
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Code that only lists a directory (os.listdir, scandir, iterdir,
// readdirSync, Dir.entries, glob …) or asks whether a path exists learns
// the names of what is there, not what the files hold. A credential
// directory named by such code is not a credential read; the same code
// with any call that reads, copies, sends, decodes or runs something is
// judged as before (the names it lists may be the files it then opens).

// listCallRe matches calls that list a directory or test a path.
var listCallRe = core.LazyRE(`\b(?:listdir|scandir|walk|iterdir|readdirSync|readdir|ReadDir|entries|children|each_child|opendir|glob|iglob|rglob|exists|existsSync|isdir|isfile|is_dir|is_file|islink|getsize|getmtime|lstat|stat|statSync|lstatSync)\s*\(`)

// contentCallRe matches anything that reads a file's content, moves
// data, or runs code: with one of these, listing is a first step.
var contentCallRe = core.LazyRE(`\b(?:open|fopen|read\w*|load\w*|slurp|file_get_contents|createReadStream|copy\w*|move|rename|shutil|send\w*|post|put|request\w*|urlopen|urllib|http\w*|fetch|socket|net|subprocess|system|popen|exec\w*|spawn\w*|eval|import_module|__import__|getattr|compile|upload\w*|tar\w*|zip\w*|base64|b64\w*|pickle|marshal|crypto|cat|IO|File|Get-Content|mmap|symlink|link|unlink|remove|rmtree|chmod|chown|write\w*|ftp\w*|smtp\w*|mail\w*|curl|wget|ssh|scp)\b`)

// listingOnly reports whether code lists directories or tests paths and
// does nothing that reads, moves or runs.
func listingOnly(code string) bool {
	if !listCallRe.Get().MatchString(code) {
		return false
	}
	// the listing calls' own names (readdir, readdirSync) are not reads,
	// nor are the words of string literals (the "ssh" of "~/.ssh")
	rest := listCallRe.Get().ReplaceAllString(strLitRe.ReplaceAllString(code, `""`), "(")
	return !contentCallRe.Get().MatchString(rest)
}

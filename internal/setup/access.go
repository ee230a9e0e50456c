package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// access(2) modes.
const (
	rOK = 4
	wOK = 2
)

// AccessInput names what the agent's user may and may not reach. Paths
// that do not exist are skipped.
type AccessInput struct {
	// DataDirs are data directories whose credentials the agent must not
	// read: DIR/creds (and the creds_dir its serve.json names), with the
	// audit signer key. Files named agent.* there are the agent's own.
	DataDirs []string
	// Binaries are the hooks' binaries; Settings the client settings
	// files that hold the hooks. The agent must not be able to write,
	// replace or remove any of them.
	Binaries, Settings []string
}

// Problem is one thing the agent's user can do that it must not.
type Problem struct {
	Path string `json:"path"`
	// What the user can do, in words.
	What string `json:"what"`
	// Fix says how to take it away.
	Fix string `json:"fix"`
}

func (p Problem) String() string { return p.What + ": " + p.Fix }

// CheckAccess reports, for the real user of this process (run it as the
// agent's user), every Vigil credential but the agent's it can read and
// every hook binary or settings file it can write or replace. The kernel
// decides (access(2)), so groups, ACLs and read-only mounts count.
func CheckAccess(in AccessInput) []Problem {
	var out []Problem
	seen := map[string]bool{}
	for _, d := range in.DataDirs {
		for _, f := range credentialFiles(d) {
			if seen[f] {
				continue
			}
			seen[f] = true
			if canAccess(f, rOK) {
				out = append(out, Problem{Path: f,
					What: fmt.Sprintf("this user (%s) can read %s, a Vigil credential that is not the agent's: an agent running as this user can approve its own actions with it", whoami(), f),
					Fix:  "run vigil serve as its own user, so only it reads its data directory (sudo vigil setup host --agent-group GROUP; docs/deploy.md), and give agents only the agent credential (vigil hook install … --nats URL --creds /etc/vigil/agent.nk)",
				})
			}
		}
	}
	for _, b := range in.Binaries {
		out = append(out, writable(b, "the hook's binary", "install the binary root-owned outside any directory this user can write (sudo vigil setup host puts it in /usr/local/bin) and point the hook at it (vigil hook install … --binary /usr/local/bin/vigil)")...)
	}
	for _, s := range in.Settings {
		out = append(out, writable(s, "the hook's settings", "install the hooks in the client's system-scope settings, root-owned (sudo vigil hook install CLIENT --system), and run the agent as a user that cannot write them")...)
	}
	return out
}

// credentialFiles lists the secrets of a data directory: every role's
// seed, token and .creds file but the agent's, everything else in the
// creds directory (when it can be listed), the audit signer key.
func credentialFiles(dataDir string) []string {
	dirs := []string{datadir.New(dataDir).Creds().Dir()}
	if b, err := os.ReadFile(datadir.New(dataDir).ServeInfo()); err == nil {
		var si struct {
			CredsDir string `json:"creds_dir"`
		}
		if json.Unmarshal(b, &si) == nil && si.CredsDir != "" {
			dirs = append(dirs, si.CredsDir)
		}
	}
	var out []string
	for _, dir := range dirs {
		for _, r := range natsutil.Roles {
			if r == natsutil.RoleAgent {
				continue
			}
			cd := datadir.CredsAt(dir)
			out = append(out, cd.Seed(r), cd.Token(r), cd.NATSCreds(r))
		}
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				if !e.IsDir() && !strings.HasPrefix(e.Name(), "agent.") && !strings.HasPrefix(e.Name(), ".tmp") {
					out = append(out, filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	out = append(out, datadir.New(dataDir).Signer())
	var exist []string
	for _, f := range out {
		if _, err := os.Lstat(f); err == nil || !errors.Is(err, fs.ErrNotExist) {
			if !slices.Contains(exist, f) {
				exist = append(exist, f)
			}
		}
	}
	// A file whose existence cannot even be seen (a directory this user
	// cannot search) cannot be read either: Lstat fails with EACCES, and
	// access(2) answers no.
	return exist
}

// writable reports how this user could change path: write it, or
// replace, move or remove it or one of its directories through a
// directory it can write (a sticky directory only for entries it owns).
func writable(path, what, fix string) []Problem {
	path = filepath.Clean(path)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	var out []Problem
	if canAccess(path, wOK) {
		out = append(out, Problem{Path: path, What: fmt.Sprintf("this user (%s) can write %s %s", whoami(), what, path), Fix: fix})
	}
	for p := path; ; {
		dir := filepath.Dir(p)
		if dir == p {
			break
		}
		if canAccess(dir, wOK) && !stickyProtects(dir, p) {
			out = append(out, Problem{Path: path,
				What: fmt.Sprintf("this user (%s) can replace or remove %s %s: it can write the directory %s", whoami(), what, path, dir),
				Fix:  fix})
			break
		}
		p = dir
	}
	return out
}

// stickyProtects reports whether dir's sticky bit keeps this user from
// renaming or removing entry (it owns neither dir nor entry).
func stickyProtects(dir, entry string) bool {
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode()&fs.ModeSticky == 0 {
		return false
	}
	uid := os.Getuid()
	if uid == 0 {
		return false
	}
	if o, ok := ownerOf(fi); ok && o.uid == uid {
		return false
	}
	ei, err := os.Lstat(entry)
	if err != nil {
		return false
	}
	o, ok := ownerOf(ei)
	return ok && o.uid != uid
}

func whoami() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}

// ReadDeployment reads the record setup wrote in etcDir.
func ReadDeployment(etcDir string) (Deployment, error) {
	b, err := os.ReadFile(filepath.Join(etcDir, DeploymentFile))
	if err != nil {
		return Deployment{}, err
	}
	var d Deployment
	if err := json.Unmarshal(b, &d); err != nil {
		return Deployment{}, fmt.Errorf("setup: %s: %w", filepath.Join(etcDir, DeploymentFile), err)
	}
	return d, nil
}

// SingleUser reports whether dataDir is served in single-user mode: this
// process's user is a person's (it has a login shell) and no deployment
// record in etcDir names dataDir as served by it. The service user setup
// makes has no login shell, so no agent session runs as it.
func SingleUser(etcDir, dataDir string) bool {
	u, err := user.Current()
	if err != nil {
		return true
	}
	if !hasLoginShell(u.Username) {
		return false
	}
	d, err := ReadDeployment(etcDir)
	if err != nil {
		return true
	}
	abs, err := filepath.Abs(dataDir)
	return err != nil || filepath.Clean(d.DataDir) != abs || u.Username != d.ServiceUser
}

// hasLoginShell reports whether /etc/passwd gives name a shell other than
// nologin or false (true when it cannot tell).
func hasLoginShell(name string) bool {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) == 7 && f[0] == name {
			sh := filepath.Base(f[6])
			return sh != "nologin" && sh != "false"
		}
	}
	return true
}

// NoticeSingleUser writes, when dataDir is served in single-user mode
// (SingleUser with DefaultEtcDir), one plain paragraph saying that an
// agent running as this user can approve itself, and where to read how to
// prevent it. It writes nothing in the deployment setup makes.
func NoticeSingleUser(w io.Writer, dataDir string) {
	if !SingleUser(DefaultEtcDir, dataDir) {
		return
	}
	fmt.Fprintf(w, "Single-user mode: Vigil's credentials in %s are readable by %s, so an agent running as this user can approve its own actions. "+
		"That is fine for trying Vigil out; to keep agents from it, run Vigil as its own user (sudo vigil setup host; docs/deploy.md).\n",
		datadir.New(dataDir).Creds().Dir(), whoami())
}

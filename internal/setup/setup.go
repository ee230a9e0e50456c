// Package setup prepares a Linux host for the deployment in which an
// agent cannot reach a person's keys: `vigil serve` runs as its own
// service user, the data directory and every credential but the agent's
// are readable by that user alone, and agents get the agent credential
// through a group and nothing else (docs/deploy.md).
//
// Plan lists the steps for a Config; Run applies them in order. Every
// step first checks whether the host is already as it wants (so running
// setup again changes nothing), and a dry run prints every step with the
// command it stands for and changes nothing. Setup needs root; it never
// starts or stops anything but, where systemd runs, the unit it writes.
//
// The package also says whether a data directory is served in
// single-user mode (SingleUser, NoticeSingleUser) and checks, as the
// agent's user, what that user can reach (CheckAccess).
//
// On the data path: a front-end: it prepares the host the path runs on,
// off the path itself.
package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/hook/hookcli"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Defaults of Config.
const (
	DefaultServiceUser = "vigil"
	DefaultAgentGroup  = "vigil-agents"
	DefaultDataDir     = "/var/lib/vigil"
	DefaultEtcDir      = "/etc/vigil"
	DefaultBinary      = "/usr/local/bin/vigil"
	DefaultUnitDir     = "/etc/systemd/system"
	DefaultNATSListen  = "127.0.0.1:4222"
	DefaultHTTPListen  = "127.0.0.1:7411"
	// UnitName is the systemd unit setup writes.
	UnitName = "vigil.service"
	// DeploymentFile, in the etc directory, records what setup made.
	DeploymentFile = "deployment.json"
	// AgentCredsFile and AgentTokenFile, in the etc directory, are the
	// agent's copies of its nkey seed and HTTP token: the only Vigil
	// secrets the agent group may read.
	AgentCredsFile = "agent.nk"
	AgentTokenFile = "agent.token"
)

// Systemd modes of Config.Systemd.
const (
	SystemdAuto = "auto" // write the unit when systemd runs (/run/systemd/system exists)
	SystemdYes  = "yes"
	SystemdNo   = "no"
)

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("setup: invalid config")

// Config says what to make. The zero value, after EnsureDefaults, is the
// documented deployment (docs/deploy.md).
type Config struct {
	// ServiceUser and ServiceGroup run `vigil serve` and own the data
	// directory; ServiceGroup defaults to ServiceUser.
	ServiceUser, ServiceGroup string
	// AgentGroup may read the agent credential and nothing else of Vigil.
	AgentGroup string
	// AgentUsers, if any, are added to AgentGroup (they must exist).
	AgentUsers []string
	// DataDir is the service's data directory.
	DataDir string
	// EtcDir holds the agent credential and the deployment record.
	EtcDir string
	// Binary is where the root-owned vigil binary goes (a directory on
	// PATH); Source is the binary copied there (default: this process's).
	Binary, Source string
	// NATSListen and HTTPListen are the service's addresses.
	NATSListen, HTTPListen string
	// Systemd is auto, yes or no; UnitDir is where the unit goes.
	Systemd, UnitDir string
	// SystemdRunning reports whether systemd manages this host; nil
	// means /run/systemd/system exists (sd_booted(3)).
	SystemdRunning func() bool
	// Exec runs a command (groupadd, useradd, usermod, systemctl); nil
	// runs it with os/exec.
	Exec func(ctx context.Context, name string, args ...string) error
}

// EnsureDefaults fills the zero fields.
func (c *Config) EnsureDefaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.ServiceUser, DefaultServiceUser)
	def(&c.ServiceGroup, c.ServiceUser)
	def(&c.AgentGroup, DefaultAgentGroup)
	def(&c.DataDir, DefaultDataDir)
	def(&c.EtcDir, DefaultEtcDir)
	def(&c.Binary, DefaultBinary)
	def(&c.UnitDir, DefaultUnitDir)
	def(&c.NATSListen, DefaultNATSListen)
	def(&c.HTTPListen, DefaultHTTPListen)
	def(&c.Systemd, SystemdAuto)
	if c.Source == "" {
		if exe, err := os.Executable(); err == nil {
			c.Source = exe
		}
	}
	if c.SystemdRunning == nil {
		c.SystemdRunning = func() bool {
			fi, err := os.Stat("/run/systemd/system")
			return err == nil && fi.IsDir()
		}
	}
	if c.Exec == nil {
		c.Exec = func(ctx context.Context, name string, args ...string) error {
			out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
			}
			return nil
		}
	}
}

// Validate names every problem of c (after EnsureDefaults).
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...))
	}
	for _, n := range []struct{ flag, v string }{{"service user", c.ServiceUser}, {"service group", c.ServiceGroup}, {"agent group", c.AgentGroup}} {
		if !validName(n.v) {
			bad("%s %q: use a POSIX user or group name (lower case letters, digits, '-', '_')", n.flag, n.v)
		}
	}
	if c.AgentGroup == c.ServiceGroup {
		bad("agent group %q is the service group: agents would read every credential; name another group", c.AgentGroup)
	}
	for _, u := range c.AgentUsers {
		if !validName(u) {
			bad("agent user %q: not a user name", u)
		}
		if u == c.ServiceUser {
			bad("agent user %q is the service user: an agent running as it can approve itself", u)
		}
	}
	for _, p := range []struct{ what, v string }{{"data directory", c.DataDir}, {"etc directory", c.EtcDir}, {"binary", c.Binary}, {"unit directory", c.UnitDir}} {
		if !filepath.IsAbs(p.v) {
			bad("%s %q: give an absolute path", p.what, p.v)
		}
	}
	if c.Source == "" {
		bad("no source binary: name the vigil binary to install")
	}
	if !slices.Contains([]string{SystemdAuto, SystemdYes, SystemdNo}, c.Systemd) {
		bad("systemd %q: use auto, yes or no", c.Systemd)
	}
	if c.NATSListen == "" {
		bad("no NATS listen address: agents reach the service there")
	}
	return errors.Join(errs...)
}

func validName(s string) bool {
	if s == "" || len(s) > 32 || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Deployment is what setup records in EtcDir/deployment.json, for serve's
// single-user notice, doctor, and people reading it.
type Deployment struct {
	ServiceUser string `json:"service_user"`
	AgentGroup  string `json:"agent_group"`
	DataDir     string `json:"data_dir"`
	Binary      string `json:"binary"`
	NATSURL     string `json:"nats_url"`
	AgentCreds  string `json:"agent_creds"`
	AgentToken  string `json:"agent_token"`
}

// Deployment is the record of c.
func (c *Config) Deployment() Deployment {
	return Deployment{
		ServiceUser: c.ServiceUser, AgentGroup: c.AgentGroup, DataDir: c.DataDir, Binary: c.Binary,
		NATSURL:    "nats://" + c.NATSListen,
		AgentCreds: filepath.Join(c.EtcDir, AgentCredsFile), AgentToken: filepath.Join(c.EtcDir, AgentTokenFile),
	}
}

// Step is one change setup makes.
type Step struct {
	// What the step makes, in words.
	What string
	// Command is the shell equivalent, printed by a dry run.
	Command string
	// Done reports whether the host is already as the step wants.
	Done func() (bool, error)
	// Apply makes it so.
	Apply func(ctx context.Context) error
}

// Plan lists the steps that make c's deployment, in order.
func Plan(c Config) ([]Step, error) {
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	steps := []Step{
		groupStep(c, c.ServiceGroup),
		{
			What:    fmt.Sprintf("service user %s (system user, group %s, home %s, no login)", c.ServiceUser, c.ServiceGroup, c.DataDir),
			Command: fmt.Sprintf("useradd --system --gid %s --home-dir %s --no-create-home --shell /usr/sbin/nologin %s", c.ServiceGroup, c.DataDir, c.ServiceUser),
			Done:    func() (bool, error) { return userExists(c.ServiceUser) },
			Apply: func(ctx context.Context) error {
				return c.Exec(ctx, "useradd", "--system", "--gid", c.ServiceGroup, "--home-dir", c.DataDir,
					"--no-create-home", "--shell", "/usr/sbin/nologin", "--comment", "Vigil service", c.ServiceUser)
			},
		},
		groupStep(c, c.AgentGroup),
	}
	for _, u := range c.AgentUsers {
		steps = append(steps, Step{
			What:    fmt.Sprintf("agent user %s in group %s", u, c.AgentGroup),
			Command: fmt.Sprintf("usermod --append --groups %s %s", c.AgentGroup, u),
			Done: func() (bool, error) {
				uu, err := user.Lookup(u)
				if err != nil {
					return false, fmt.Errorf("agent user %s: %w (create the agent's user first, e.g. useradd --create-home %s)", u, err, u)
				}
				return inGroup(uu, c.AgentGroup)
			},
			Apply: func(ctx context.Context) error {
				return c.Exec(ctx, "usermod", "--append", "--groups", c.AgentGroup, u)
			},
		})
	}
	steps = append(steps, binaryStep(c.Source, c.Binary))
	if hook, ok := hookcli.Beside(c.Source); ok {
		// The hook alone (cmd/vigil-hook), which `vigil hook install`
		// writes into the clients' settings when it lies beside the
		// binary it is given: root-owned beside it too.
		steps = append(steps, binaryStep(hook, filepath.Join(filepath.Dir(c.Binary), hookcli.BinaryName)))
	}
	steps = append(steps,
		dirStep(c, c.DataDir, c.ServiceUser, c.ServiceGroup, 0o700, "data directory"),
		credsStep(c),
		dirStep(c, c.EtcDir, "root", "root", 0o755, "etc directory"),
		agentCopyStep(c, datadir.New(c.DataDir).Creds().Seed(natsutil.RoleAgent), AgentCredsFile, "agent nkey seed"),
		agentCopyStep(c, datadir.New(c.DataDir).Creds().Token(natsutil.RoleAgent), AgentTokenFile, "agent HTTP token"),
		recordStep(c),
	)
	if c.Systemd == SystemdYes || c.Systemd == SystemdAuto && c.SystemdRunning() {
		steps = append(steps, unitSteps(c)...)
	}
	return steps, nil
}

// StartCommand is the exact command that starts the service as the
// service user where systemd does not run it.
func StartCommand(c Config) string {
	c.EnsureDefaults()
	return fmt.Sprintf("setpriv --reuid=%s --regid=%s --init-groups env HOME=%s %s",
		c.ServiceUser, c.ServiceGroup, c.DataDir, strings.Join(serveArgs(c), " "))
}

// serveArgs is the service's command line.
func serveArgs(c Config) []string {
	return []string{c.Binary, "serve", "--data", c.DataDir, "--nats-listen", c.NATSListen, "--http-listen", c.HTTPListen}
}

// UsesSystemd reports whether Plan writes and starts the systemd unit.
func UsesSystemd(c Config) bool {
	c.EnsureDefaults()
	return c.Systemd == SystemdYes || c.Systemd == SystemdAuto && c.SystemdRunning()
}

// Result is what Run did for one step.
type Result struct {
	What    string `json:"what"`
	Command string `json:"command"`
	// State is "done" (nothing to change), "applied", or "would apply"
	// (dry run).
	State string `json:"state"`
}

// Run applies steps in order, printing one line per step to w (when not
// nil): "ok" for a step already done, "made" for one applied, "would" on
// a dry run, with the command it stands for. It stops at the first error.
func Run(ctx context.Context, steps []Step, dryRun bool, w io.Writer) ([]Result, error) {
	if w == nil {
		w = io.Discard
	}
	var out []Result
	for _, s := range steps {
		done, err := s.Done()
		if err != nil && !dryRun {
			return out, fmt.Errorf("setup: %s: %w", s.What, err)
		}
		r := Result{What: s.What, Command: s.Command}
		switch {
		case err == nil && done:
			r.State = "done"
			fmt.Fprintf(w, "ok     %s\n", s.What)
		case dryRun:
			r.State = "would apply"
			fmt.Fprintf(w, "would  %s\n%s", s.What, indent(s.Command))
			if err != nil {
				fmt.Fprintf(w, "       (note: %v)\n", err)
			}
		default:
			if err := s.Apply(ctx); err != nil {
				return out, fmt.Errorf("setup: %s: %w", s.What, err)
			}
			r.State = "applied"
			fmt.Fprintf(w, "made   %s\n%s", s.What, indent(s.Command))
		}
		out = append(out, r)
	}
	return out, nil
}

// indent prefixes a command's first line with "$ ", and every line with
// the width of Run's state column.
func indent(cmd string) string {
	var b strings.Builder
	for i, l := range strings.Split(cmd, "\n") {
		if i == 0 {
			l = "$ " + l
		} else {
			l = "  " + l
		}
		b.WriteString("       " + l + "\n")
	}
	return b.String()
}

func groupStep(c Config, name string) Step {
	return Step{
		What:    "group " + name,
		Command: "groupadd --system " + name,
		Done: func() (bool, error) {
			_, err := user.LookupGroup(name)
			if errors.As(err, new(user.UnknownGroupError)) {
				return false, nil
			}
			return err == nil, err
		},
		Apply: func(ctx context.Context) error { return c.Exec(ctx, "groupadd", "--system", name) },
	}
}

func userExists(name string) (bool, error) {
	_, err := user.Lookup(name)
	if errors.As(err, new(user.UnknownUserError)) {
		return false, nil
	}
	return err == nil, err
}

func inGroup(u *user.User, group string) (bool, error) {
	g, err := user.LookupGroup(group)
	if errors.As(err, new(user.UnknownGroupError)) {
		return false, nil // made by an earlier step
	}
	if err != nil {
		return false, err
	}
	ids, err := u.GroupIds()
	if err != nil {
		return false, err
	}
	return slices.Contains(ids, g.Gid), nil
}

// ids resolves a user and a group to numeric ids.
func ids(userName, group string) (int, int, error) {
	u, err := user.Lookup(userName)
	if err != nil {
		return 0, 0, err
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, 0, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return 0, 0, err
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, 0, err
	}
	return uid, gid, nil
}

// owned reports whether path has exactly this owner, group and mode.
func owned(path, userName, group string, mode fs.FileMode) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	uid, gid, err := ids(userName, group)
	if err != nil {
		return false, nil // the account is made by an earlier step
	}
	o, ok := ownerOf(fi)
	return ok && o.uid == uid && o.gid == gid && fi.Mode().Perm() == mode && fi.Mode()&fs.ModeSymlink == 0, nil
}

// set gives path this owner, group and mode.
func set(path, userName, group string, mode fs.FileMode) error {
	uid, gid, err := ids(userName, group)
	if err != nil {
		return err
	}
	if err := os.Lchown(path, uid, gid); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

func dirStep(c Config, dir, owner, group string, mode fs.FileMode, what string) Step {
	return Step{
		What:    fmt.Sprintf("%s %s (%s:%s %04o)", what, dir, owner, group, mode),
		Command: fmt.Sprintf("install -d -o %s -g %s -m %04o %s", owner, group, mode, dir),
		Done:    func() (bool, error) { return owned(dir, owner, group, mode) },
		Apply: func(context.Context) error {
			// Parents the service and the agents must walk through.
			if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
				return err
			}
			if err := os.MkdirAll(dir, mode); err != nil {
				return err
			}
			return set(dir, owner, group, mode)
		},
	}
}

// binaryStep installs a root-owned copy of the binary source at dest.
func binaryStep(source, dest string) Step {
	return Step{
		What:    fmt.Sprintf("binary %s (root:root 0755, a copy of %s)", dest, source),
		Command: fmt.Sprintf("install -o root -g root -m 0755 %s %s", source, dest),
		Done: func() (bool, error) {
			ok, err := owned(dest, "root", "root", 0o755)
			if err != nil || !ok {
				return false, err
			}
			return sameContent(source, dest)
		},
		Apply: func(context.Context) error {
			if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
				return err
			}
			src, err := os.ReadFile(source)
			if err != nil {
				return err
			}
			return writeOwned(dest, src, "root", "root", 0o755)
		},
	}
}

func sameContent(a, b string) (bool, error) {
	x, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return bytes.Equal(x, y), err
}

// writeOwned writes data to path through a temporary file that has the
// owner, group and mode before it is renamed into place, so the file is
// never visible with other rights.
func writeOwned(path string, data []byte, owner, group string, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vigil-setup-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := set(tmp.Name(), owner, group, mode); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// credsStep makes every role's seed and token in DATA/creds, owned by the
// service user, mode 0600 in a 0700 directory (what vigil serve makes and
// keeps at every start).
func credsStep(c Config) Step {
	dir := datadir.New(c.DataDir).Creds().Dir()
	files := func() []string {
		var fs []string
		for _, r := range natsutil.Roles {
			fs = append(fs, datadir.CredsAt(dir).Seed(r))
		}
		for _, r := range natsutil.TokenRoles {
			fs = append(fs, datadir.CredsAt(dir).Token(r))
		}
		return fs
	}
	return Step{
		What:    fmt.Sprintf("role credentials in %s (%s:%s, 0600, directory 0700)", dir, c.ServiceUser, c.ServiceGroup),
		Command: fmt.Sprintf("# a new nkey seed (<role>.nk) and HTTP token (<role>.token) per missing role, as vigil serve makes them\nchown -R %s:%s %s && chmod 0700 %s && chmod 0600 %s/*", c.ServiceUser, c.ServiceGroup, dir, dir, dir),
		Done: func() (bool, error) {
			if ok, err := owned(dir, c.ServiceUser, c.ServiceGroup, 0o700); err != nil || !ok {
				return false, err
			}
			for _, f := range files() {
				if ok, err := owned(f, c.ServiceUser, c.ServiceGroup, 0o600); err != nil || !ok {
					return false, err
				}
			}
			return true, nil
		},
		Apply: func(context.Context) error {
			if _, err := natsutil.EnsureCreds(dir); err != nil {
				return err
			}
			if _, err := natsutil.EnsureTokens(dir); err != nil {
				return err
			}
			if err := set(dir, c.ServiceUser, c.ServiceGroup, 0o700); err != nil {
				return err
			}
			for _, f := range files() {
				if err := set(f, c.ServiceUser, c.ServiceGroup, 0o600); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// agentCopyStep copies one of the agent's secrets from the data
// directory to EtcDir, root-owned and readable by the agent group.
func agentCopyStep(c Config, src, name, what string) Step {
	dst := filepath.Join(c.EtcDir, name)
	return Step{
		What:    fmt.Sprintf("%s %s (root:%s 0640, a copy of %s)", what, dst, c.AgentGroup, src),
		Command: fmt.Sprintf("install -o root -g %s -m 0640 %s %s", c.AgentGroup, src, dst),
		Done: func() (bool, error) {
			ok, err := owned(dst, "root", c.AgentGroup, 0o640)
			if err != nil || !ok {
				return false, err
			}
			return sameContent(src, dst)
		},
		Apply: func(context.Context) error {
			b, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			return writeOwned(dst, b, "root", c.AgentGroup, 0o640)
		},
	}
}

func recordStep(c Config) Step {
	path := filepath.Join(c.EtcDir, DeploymentFile)
	body, _ := json.MarshalIndent(c.Deployment(), "", "  ")
	body = append(body, '\n')
	return Step{
		What:    fmt.Sprintf("deployment record %s (root:root 0644)", path),
		Command: fmt.Sprintf("cat > %s <<'EOF'\n%sEOF", path, body),
		Done: func() (bool, error) {
			ok, err := owned(path, "root", "root", 0o644)
			if err != nil || !ok {
				return false, err
			}
			b, err := os.ReadFile(path)
			return bytes.Equal(b, body), err
		},
		Apply: func(context.Context) error { return writeOwned(path, body, "root", "root", 0o644) },
	}
}

// Unit is the systemd unit of c.
func Unit(c Config) string {
	c.EnsureDefaults()
	return fmt.Sprintf(`[Unit]
# Written by vigil setup host (docs/deploy.md).
Description=Vigil: security log and approval gate for AI coding agents
After=network.target

[Service]
User=%[1]s
Group=%[2]s
Environment=HOME=%[3]s
ExecStart=%[4]s
Restart=on-failure
RestartSec=2s
UMask=0077
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
ReadWritePaths=%[3]s
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target
`, c.ServiceUser, c.ServiceGroup, c.DataDir, strings.Join(serveArgs(c), " "))
}

func unitSteps(c Config) []Step {
	path := filepath.Join(c.UnitDir, UnitName)
	body := []byte(Unit(c))
	return []Step{
		{
			What:    fmt.Sprintf("systemd unit %s", path),
			Command: fmt.Sprintf("cat > %s <<'EOF'\n%sEOF\nsystemctl daemon-reload", path, body),
			Done: func() (bool, error) {
				b, err := os.ReadFile(path)
				if errors.Is(err, fs.ErrNotExist) {
					return false, nil
				}
				return bytes.Equal(b, body), err
			},
			Apply: func(ctx context.Context) error {
				if err := os.MkdirAll(c.UnitDir, 0o755); err != nil {
					return err
				}
				if err := writeOwned(path, body, "root", "root", 0o644); err != nil {
					return err
				}
				return c.Exec(ctx, "systemctl", "daemon-reload")
			},
		},
		{
			What:    "service " + UnitName + " enabled and running",
			Command: "systemctl enable --now " + UnitName,
			Done: func() (bool, error) {
				ctx := context.Background()
				return c.Exec(ctx, "systemctl", "is-enabled", "--quiet", UnitName) == nil &&
					c.Exec(ctx, "systemctl", "is-active", "--quiet", UnitName) == nil, nil
			},
			Apply: func(ctx context.Context) error { return c.Exec(ctx, "systemctl", "enable", "--now", UnitName) },
		},
	}
}

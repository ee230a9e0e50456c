package setup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/hook/hookcli"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // each must appear in the error
	}{
		{"defaults", Config{}, nil},
		{"agent group is the service group", Config{AgentGroup: "vigil"}, []string{`agent group "vigil" is the service group`}},
		{"agent user is the service user", Config{AgentUsers: []string{"vigil"}}, []string{`agent user "vigil" is the service user`}},
		{"every problem named", Config{ServiceUser: "Bad Name", DataDir: "rel/data", Systemd: "maybe"},
			[]string{`service user "Bad Name"`, `data directory "rel/data": give an absolute path`, `systemd "maybe"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg
			c.Source = "/bin/true"
			c.EnsureDefaults()
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate = %v, want ErrConfig", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate error %q does not name %q", err, w)
				}
			}
		})
	}
}

// otherGroup is an existing group that is not name's.
func otherGroup(t *testing.T, not string) string {
	for _, g := range []string{"daemon", "nogroup", "users", "bin", "sys", "adm"} {
		if _, err := user.LookupGroup(g); err == nil && g != not {
			return g
		}
	}
	t.Skip("no second group on this host")
	return ""
}

// testConfig is a deployment under dir with root as the service user, so
// no account is made: every file step runs for real.
func testConfig(t *testing.T, dir string) Config {
	if os.Geteuid() != 0 {
		t.Skip("setup gives files to root and other groups: run as root")
	}
	src := filepath.Join(dir, "src-vigil")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho vigil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Config{
		ServiceUser: "root", ServiceGroup: "root", AgentGroup: otherGroup(t, "root"),
		DataDir: filepath.Join(dir, "var", "lib", "vigil"), EtcDir: filepath.Join(dir, "etc", "vigil"),
		Binary: filepath.Join(dir, "usr", "local", "bin", "vigil"), Source: src, Systemd: SystemdNo,
		Exec: func(ctx context.Context, name string, args ...string) error {
			t.Errorf("setup ran %s %q: every account exists", name, args)
			return nil
		},
	}
}

func TestRunMakesTheDeploymentOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	steps, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(t.Context(), steps, false, &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if !slices.ContainsFunc(res, func(r Result) bool { return r.State == "applied" }) {
		t.Fatalf("nothing applied:\n%s", out.String())
	}
	modes := []struct {
		path  string
		mode  os.FileMode
		group string
	}{
		{cfg.DataDir, 0o700, "root"},
		{datadir.New(cfg.DataDir).Creds().Dir(), 0o700, "root"},
		{datadir.New(cfg.DataDir).Creds().Seed(natsutil.RoleApprover), 0o600, "root"},
		{datadir.New(cfg.DataDir).Creds().Token(natsutil.RoleAdmin), 0o600, "root"},
		{filepath.Join(cfg.EtcDir, AgentCredsFile), 0o640, cfg.AgentGroup},
		{filepath.Join(cfg.EtcDir, AgentTokenFile), 0o640, cfg.AgentGroup},
		{filepath.Join(cfg.EtcDir, DeploymentFile), 0o644, "root"},
		{cfg.Binary, 0o755, "root"},
		{filepath.Dir(cfg.DataDir), 0o755, "root"},
	}
	for _, m := range modes {
		ok, err := owned(m.path, "root", m.group, m.mode)
		if err != nil || !ok {
			fi, _ := os.Stat(m.path)
			t.Errorf("%s: want root:%s %04o, have %v (%v)", m.path, m.group, m.mode, fi, err)
		}
	}
	agent, _ := os.ReadFile(filepath.Join(cfg.EtcDir, AgentCredsFile))
	seed, _ := os.ReadFile(datadir.New(cfg.DataDir).Creds().Seed(natsutil.RoleAgent))
	if len(agent) == 0 || !bytes.Equal(agent, seed) {
		t.Error("the agent's copy is not the agent's seed")
	}
	d, err := ReadDeployment(cfg.EtcDir)
	if err != nil || d.DataDir != cfg.DataDir || d.AgentCreds != filepath.Join(cfg.EtcDir, AgentCredsFile) {
		t.Errorf("deployment record: %+v %v", d, err)
	}

	// Again: nothing to do.
	out.Reset()
	res, err = Run(t.Context(), steps, false, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.State != "done" {
			t.Errorf("second run: %s is %s, want done", r.What, r.State)
		}
	}
	// A widened credential is narrowed again.
	if err := os.Chmod(datadir.New(cfg.DataDir).Creds().Seed(natsutil.RoleApprover), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = Run(t.Context(), steps, false, nil)
	if !slices.ContainsFunc(res, func(r Result) bool { return r.State == "applied" && strings.Contains(r.What, "role credentials") }) {
		t.Errorf("a 0644 approver seed was not put back to 0600: %+v", res)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.ServiceUser, cfg.ServiceGroup = "vigil-test-nouser", "vigil-test-nogroup"
	steps, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Run(t.Context(), steps, true, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"groupadd --system vigil-test-nogroup", "useradd --system --gid vigil-test-nogroup", "install -o root -g root -m 0755",
		"install -d -o vigil-test-nouser -g vigil-test-nogroup -m 0700 " + cfg.DataDir, filepath.Join(cfg.EtcDir, AgentCredsFile)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run does not print %q:\n%s", want, out.String())
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 { // the source binary only
		t.Errorf("dry run wrote into %s: %v", dir, ents)
	}
}

func TestUnitRunsAsTheServiceUser(t *testing.T) {
	u := Unit(Config{Source: "/bin/true"})
	for _, want := range []string{"User=vigil\n", "Group=vigil\n", "UMask=0077", "ReadWritePaths=/var/lib/vigil",
		"ExecStart=/usr/local/bin/vigil serve --data /var/lib/vigil --nats-listen 127.0.0.1:4222 --http-listen 127.0.0.1:7411\n"} {
		if !strings.Contains(u, want) {
			t.Errorf("unit lacks %q:\n%s", want, u)
		}
	}
	if got := StartCommand(Config{Source: "/bin/true"}); !strings.HasPrefix(got, "setpriv --reuid=vigil --regid=vigil --init-groups ") {
		t.Errorf("StartCommand = %q", got)
	}
}

func TestCheckAccess(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if _, err := natsutil.EnsureCreds(datadir.New(data).Creds().Dir()); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "vigil")
	settings := filepath.Join(dir, "settings.json")
	for _, f := range []string{bin, settings} {
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// This user owns every file: it reads them and writes them.
	ps := CheckAccess(AccessInput{DataDirs: []string{data, filepath.Join(dir, "missing")}, Binaries: []string{bin, filepath.Join(dir, "nobin")}, Settings: []string{settings}})
	var paths []string
	for _, p := range ps {
		paths = append(paths, p.Path)
		if p.Fix == "" {
			t.Errorf("problem without a fix: %+v", p)
		}
	}
	for _, want := range []string{datadir.New(data).Creds().Seed(natsutil.RoleApprover), datadir.New(data).Creds().Seed(natsutil.RoleAdmin), bin, settings} {
		if !slices.Contains(paths, want) {
			t.Errorf("CheckAccess does not report %s: %v", want, paths)
		}
	}
	if slices.Contains(paths, datadir.New(data).Creds().Seed(natsutil.RoleAgent)) {
		t.Error("CheckAccess reports the agent's own credential")
	}
}

func TestSingleUser(t *testing.T) {
	u, err := user.Current()
	if err != nil || !hasLoginShell(u.Username) {
		t.Skip("this user has no login shell")
	}
	etc, data := t.TempDir(), t.TempDir()
	if !SingleUser(etc, data) {
		t.Error("no deployment record: want single-user mode")
	}
	var b bytes.Buffer
	NoticeSingleUser(&b, data)
	if !strings.Contains(b.String(), "can approve its own actions") || !strings.Contains(b.String(), "docs/deploy.md") {
		t.Errorf("notice: %q", b.String())
	}
	rec := `{"service_user":"` + u.Username + `","data_dir":"` + data + `"}`
	if err := os.WriteFile(filepath.Join(etc, DeploymentFile), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	if SingleUser(etc, data) {
		t.Error("the record names this user and data directory: want the deployment")
	}
	if !SingleUser(etc, t.TempDir()) {
		t.Error("another data directory: want single-user mode")
	}
}

// TestRunInstallsTheHookBinary: a vigil-hook beside the source binary is
// installed root-owned beside the installed vigil (where `vigil hook
// install --binary` finds it); without one, no step names it.
func TestRunInstallsTheHookBinary(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	hasHookStep := func() bool {
		steps, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(steps, func(s Step) bool { return strings.Contains(s.What, hookcli.BinaryName) })
	}
	if hasHookStep() {
		t.Fatal("a step installs vigil-hook, but there is none beside the source")
	}
	hookSrc := filepath.Join(filepath.Dir(cfg.Source), hookcli.BinaryName)
	if err := os.WriteFile(hookSrc, []byte("#!/bin/sh\necho hook\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !hasHookStep() {
		t.Fatal("no step installs the vigil-hook that lies beside the source")
	}
	steps, _ := Plan(cfg)
	if _, err := Run(t.Context(), steps, false, nil); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(filepath.Dir(cfg.Binary), hookcli.BinaryName)
	if ok, err := owned(dest, "root", "root", 0o755); err != nil || !ok {
		t.Fatalf("%s: want root:root 0755 (%v)", dest, err)
	}
	if same, err := sameContent(hookSrc, dest); err != nil || !same {
		t.Fatalf("%s is not a copy of %s (%v)", dest, hookSrc, err)
	}
}

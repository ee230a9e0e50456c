package main

import (
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/vigil-dev/vigil/internal/setup"
)

// permissionFindings checks, as this process's user (run doctor as the
// agent's user), what an agent running as it could reach of the Vigil its
// hooks use (setup.CheckAccess): the credentials of every data directory
// the hooks name, of --data, of the deployment `vigil setup host` recorded and of
// its default data directory, but the agent's; the hooks' binaries and
// settings files. One failed finding per problem, naming its fix, or one
// ok finding; none when no hook was found.
func (c *cli) permissionFindings(found []doctorFinding) []doctorFinding {
	var in setup.AccessInput
	add := func(list *[]string, p string) {
		if p != "" && !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	for _, f := range found {
		t, ok := parseHookCommand(f.Command)
		if !ok {
			continue
		}
		add(&in.Settings, f.Path)
		bin := t.bin
		if !filepath.IsAbs(bin) {
			if p, err := exec.LookPath(bin); err == nil {
				bin = p
			}
		}
		add(&in.Binaries, bin)
		if t.data != "" {
			if abs, err := filepath.Abs(t.data); err == nil {
				add(&in.DataDirs, abs)
			}
		}
	}
	if len(in.Settings) == 0 {
		return nil
	}
	if c.dataDir != "" {
		if abs, err := filepath.Abs(c.dataDir); err == nil {
			add(&in.DataDirs, abs)
		}
	}
	if d, err := setup.ReadDeployment(setup.DefaultEtcDir); err == nil {
		add(&in.DataDirs, d.DataDir)
	}
	add(&in.DataDirs, setup.DefaultDataDir)
	problems := setup.CheckAccess(in)
	if len(problems) == 0 {
		return []doctorFinding{{Client: "permissions", Path: filepath.Join(setup.DefaultEtcDir, setup.DeploymentFile), OK: true,
			Detail: "this user cannot read any Vigil credential but the agent's, nor write the hooks' binaries or settings"}}
	}
	out := make([]doctorFinding, 0, len(problems))
	for _, p := range problems {
		out = append(out, doctorFinding{Client: "permissions", Path: p.Path, Detail: p.What + "; fix: " + p.Fix})
	}
	return out
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/hook"
	"github.com/vigil-dev/vigil/internal/hook/install"
	hooksettings "github.com/vigil-dev/vigil/internal/hook/settings"
	"github.com/vigil-dev/vigil/internal/setup"
)

func newHookInstallCmd(c *cli) *cobra.Command {
	var (
		project, user, dryRun, system bool
		dir, binary                   string
		budget                        time.Duration
		onPending, allowBelow         string
	)
	cmd := &cobra.Command{
		Use:   "install claude-code|gemini|cursor [--project|--user]",
		Short: "Write a client's hook settings for this Vigil (absolute binary path and data directory)",
		Long: `Merge Vigil's hooks into an agent client's settings, so that its hook runs
this Vigil with this data directory whatever environment the client
starts it in (a client does not inherit VIGIL_DATA from your shell). The
hook command is vigil-hook CLIENT when a vigil-hook binary lies beside
this vigil (or beside --binary): it links only the hook and starts several
times faster on every tool call; else vigil hook CLIENT (install says so).

  --project (default)  the project in --dir (default: the current directory):
                       Claude Code .claude/settings.local.json (not shared:
                       it names this machine's paths), Gemini CLI
                       .gemini/settings.json, Cursor .cursor/hooks.json
  --user               ~/.claude/settings.json, ~/.gemini/settings.json,
                       ~/.cursor/hooks.json: every project of this user

The hook runs with --data DIR (the data directory as --data or
$VIGIL_DATA say now, made absolute), or --nats URL --creds FILE when
given. Existing settings and other hooks are kept; an earlier Vigil hook
of the same client is replaced; running install again changes nothing.
The old file is copied to FILE.vigil-backup-<time> before it is changed.
--dry-run prints the settings instead of writing them.

A hook that cannot reach Vigil denies every tool call (fail closed): keep
vigil serve running, and check with vigil hook doctor.`,
		Example: `  vigil hook install claude-code --data ~/.local/share/vigil
  vigil hook install gemini --user
  vigil hook doctor`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if project && user || system && (project || user) {
				return errors.New("--project, --user and --system: choose one")
			}
			if budget != 0 && (budget < 5*time.Second || budget > 10*time.Minute) {
				return fmt.Errorf("--budget %s: use 5s to 10m (the client's hook timeout is set 10s above it)", budget)
			}
			if onPending != "" && onPending != hook.Ask && onPending != hook.Deny {
				return fmt.Errorf("--on-pending %q: use ask or deny", onPending)
			}
			if allowBelow != "" {
				allowBelow = strings.ToUpper(allowBelow)
				if allowBelow != "LOW" && allowBelow != "MEDIUM" && allowBelow != "HIGH" {
					return fmt.Errorf("--allow-below %q: use LOW, MEDIUM or HIGH", allowBelow)
				}
			}
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			path, err := hooksettings.Path(args[0], hooksettings.Scope{User: user, Dir: abs})
			if err != nil {
				return err
			}
			if system {
				if path, err = hooksettings.SystemPath(args[0]); err != nil {
					return err
				}
			}
			o := install.Previous(path, args[0])
			o.System = system
			if cmd.Flags().Changed("budget") {
				o.Budget = budget
				if budget == 50*time.Second {
					o.Budget = 0
				}
			}
			if cmd.Flags().Changed("on-pending") {
				o.OnPending = onPending
			}
			if cmd.Flags().Changed("allow-below") {
				o.AllowBelow = allowBelow
			}
			bin, err := install.Binary(binary)
			if err != nil {
				return err
			}
			hookBin, note := install.HookBinary(bin)
			command, err := install.Command(hookBin, args[0], install.Target{Data: c.data(), URL: c.natsURL, Creds: c.creds})
			if err != nil {
				return err
			}
			res, err := install.Install(args[0], path, command, time.Now(), dryRun, o)
			if err != nil {
				return err
			}
			switch {
			case dryRun:
				fmt.Fprintf(c.stdout, "# %s (not written: --dry-run)\n%s", path, res.Settings)
			case !res.Changed:
				fmt.Fprintf(c.stdout, "%s: already set up (unchanged)\n", path)
			default:
				fmt.Fprintf(c.stdout, "%s: Vigil's %s hooks written\n", path, args[0])
				if res.Backup != "" {
					fmt.Fprintf(c.stdout, "  the previous file is kept as %s\n", res.Backup)
				}
			}
			fmt.Fprintf(c.stdout, "  hook command: %s\n", command)
			if note != "" {
				fmt.Fprintf(c.stdout, "  note: %s\n", note)
			}
			if args[0] == hook.Gemini {
				fmt.Fprintln(c.stdout, `  older Gemini CLI versions also need "tools": {"enableHooks": true}`)
				fmt.Fprintln(c.stdout, `  headless (gemini -p): set "security": {"auth": {"selectedType": "gemini-api-key"}} in settings, and`)
				fmt.Fprintln(c.stdout, `  GEMINI_CLI_TRUST_WORKSPACE=true for project hooks; never --skip-trust (it skips the project's`)
				fmt.Fprintln(c.stdout, `  .gemini/settings.json, hooks included): use --user or --system hooks where the folder is untrusted`)
			}
			if system && os.Geteuid() != 0 {
				fmt.Fprintln(c.stdout, "  warning: not run as root: the agent's user may be able to edit this file; run it with sudo")
			}
			fmt.Fprintf(c.stdout, "  check it with: %s hook doctor %s\n", install.Quote(bin), args[0])
			if c.natsURL == "" {
				setup.NoticeSingleUser(c.stdout, c.data())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&project, "project", false, "write the project's settings (the default)")
	f.BoolVar(&user, "user", false, "write the user's settings (every project)")
	f.BoolVar(&system, "system", false, "write the client's system-wide settings (run as root; Claude Code: /etc/claude-code/managed-settings.json with allowManagedHooksOnly; $VIGIL_HOOK_SYSTEM_ROOT moves the root)")
	f.DurationVar(&budget, "budget", 50*time.Second, "the gating hooks' --budget (kept across reinstalls)")
	f.StringVar(&onPending, "on-pending", "", "the gating hooks' --on-pending ask|deny (kept across reinstalls)")
	f.StringVar(&allowBelow, "allow-below", "", "the gating hooks' --allow-below LOW|MEDIUM|HIGH (kept across reinstalls)")
	f.StringVar(&dir, "dir", "", "the project's root for --project (default: the current directory)")
	f.StringVar(&binary, "binary", "", "the vigil (or vigil-hook) binary the hook runs; a vigil-hook beside a vigil is used (default: this vigil)")
	f.BoolVar(&dryRun, "dry-run", false, "print the merged settings; write nothing")
	return cmd
}

func newHookDoctorCmd(c *cli) *cobra.Command {
	var (
		dir    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "doctor [claude-code|gemini|cursor]",
		Short: "Say whether each installed client hook can reach a Vigil node",
		Long: `Look for Vigil's hooks in the clients' settings (the user's and the
project's in --dir, default the current directory), and for each hook
command check that its binary exists and that it reaches a node with
the agent credentials it names. Exit 0 when every hook found reaches a
node, 1 when one does not or none is installed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			clients := hooksettings.Clients()
			if len(args) == 1 {
				if !slices.Contains(clients, args[0]) {
					return fmt.Errorf("client %q: use one of %s", args[0], strings.Join(clients, ", "))
				}
				clients = args[:1]
			}
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			found := install.Doctor(cmd.Context(), clients, dir, c.dataDir)
			bad := len(found) == 0
			for _, f := range found {
				bad = bad || !f.OK
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if found == nil {
					found = []install.Finding{}
				}
				enc.Encode(found)
			} else {
				if len(found) == 0 {
					fmt.Fprintf(c.stdout, "no Vigil hook installed for %s (in the user's settings or in %s): run vigil hook install CLIENT\n", strings.Join(clients, ", "), dir)
				}
				for _, f := range found {
					mark := "ok  "
					if !f.OK {
						mark = "FAIL"
					}
					fmt.Fprintf(c.stdout, "%s %s, %s\n     %s\n", mark, f.Client, f.Path, f.Detail)
					if f.Command != "" {
						fmt.Fprintf(c.stdout, "     hook: %s\n", f.Command)
					}
					if f.Warning != "" {
						fmt.Fprintf(c.stdout, "     warning: %s\n", f.Warning)
					}
				}
			}
			if bad {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the project's root (default: the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

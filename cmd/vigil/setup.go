package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/setup"
)

func newSetupCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Prepare a host for Vigil (run as root)",
	}
	cmd.AddCommand(newSetupHostCmd(c))
	return cmd
}

func newSetupHostCmd(c *cli) *cobra.Command {
	var (
		cfg    setup.Config
		dryRun bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Set up this Linux host so agents cannot reach a person's keys (run as root)",
		Long: `Make the deployment in which an agent running on this host cannot approve
itself (docs/deploy.md), as root, in steps:

  1. the service group and user (--user, default vigil): a system user
     with no login shell, home the data directory
  2. the agent group (--agent-group, default vigil-agents), and the
     --agent-user accounts added to it
  3. the binary, root-owned and 0755, at --binary (default
     /usr/local/bin/vigil), a copy of this one (--from)
  4. the data directory (--data, default /var/lib/vigil), the service
     user's alone (0700), with every role's credentials (0600)
  5. the agent's credentials, copied to /etc/vigil/agent.nk and
     /etc/vigil/agent.token (root:AGENT-GROUP, 0640): the only Vigil
     secrets the agent group can read
  6. the record /etc/vigil/deployment.json
  7. where systemd runs (--systemd auto): the unit vigil.service,
     enabled and started; elsewhere the exact command that starts it.

Each step first checks whether it is done already, so running it again
changes nothing. --dry-run prints every step, with the command it stands
for, and changes nothing. vigil serve keeps these modes at every start.

Then install the hooks in each client's system-scope settings, root-owned,
with the agent credential, and run agents as users in the agent group;
people approve on the approval page or as the service user
(sudo -u vigil vigil --data /var/lib/vigil approve ID).`,
		Example: `  sudo vigil setup host --agent-group vigil-agents --agent-user alice-agent --dry-run
  sudo vigil setup host --agent-group vigil-agents --agent-user alice-agent`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("data") || cmd.Root().PersistentFlags().Changed("data") {
				cfg.DataDir = c.dataDir
			}
			cfg.EnsureDefaults()
			steps, err := setup.Plan(cfg)
			if err != nil {
				return err
			}
			if !dryRun && os.Geteuid() != 0 {
				return fmt.Errorf("vigil setup host makes users, groups and root-owned files: run it as root (sudo), or with --dry-run to see the steps")
			}
			out := c.stdout
			if asJSON {
				out = nil
			}
			results, err := setup.Run(cmd.Context(), steps, dryRun, out)
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if results == nil {
					results = []setup.Result{}
				}
				enc.Encode(map[string]any{"dry_run": dryRun, "steps": results, "systemd": setup.UsesSystemd(cfg),
					"start": setup.StartCommand(cfg), "deployment": cfg.Deployment()})
			}
			if err != nil {
				return err
			}
			if asJSON {
				return nil
			}
			d := cfg.Deployment()
			fmt.Fprintln(c.stdout)
			if !setup.UsesSystemd(cfg) {
				fmt.Fprintf(c.stdout, "systemd does not run here: start Vigil as %s with\n  %s\n", cfg.ServiceUser, setup.StartCommand(cfg))
			}
			fmt.Fprintf(c.stdout, "install the hooks system-wide with the agent credential, e.g.\n  %s hook install claude-code --system --binary %s --nats %s --creds %s\n",
				d.Binary, d.Binary, d.NATSURL, d.AgentCreds)
			fmt.Fprintf(c.stdout, "run agents as users of group %s; check as one of them with: %s hook doctor\n", d.AgentGroup, d.Binary)
			fmt.Fprintf(c.stdout, "approve as a person: the approval page (%s), or sudo -u %s %s --data %s approve ID\n", "http://"+cfg.HTTPListen, cfg.ServiceUser, d.Binary, d.DataDir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.ServiceUser, "user", setup.DefaultServiceUser, "the service user that runs vigil serve")
	f.StringVar(&cfg.ServiceGroup, "group", "", "the service user's group (default: named as the user)")
	f.StringVar(&cfg.AgentGroup, "agent-group", setup.DefaultAgentGroup, "the group whose members may read the agent credential, and nothing else of Vigil")
	f.StringSliceVar(&cfg.AgentUsers, "agent-user", nil, "existing users that run agents, added to the agent group (repeatable)")
	f.StringVar(&cfg.EtcDir, "etc", setup.DefaultEtcDir, "where the agent credential and the deployment record go")
	f.StringVar(&cfg.Binary, "binary", setup.DefaultBinary, "where the root-owned vigil binary goes")
	f.StringVar(&cfg.Source, "from", "", "the vigil binary to install (default: this one)")
	f.StringVar(&cfg.NATSListen, "nats-listen", setup.DefaultNATSListen, "the service's NATS address (agents connect here)")
	f.StringVar(&cfg.HTTPListen, "http-listen", setup.DefaultHTTPListen, "the service's HTTP address (approval page)")
	f.StringVar(&cfg.Systemd, "systemd", setup.SystemdAuto, "write and start a systemd unit: auto (where systemd runs), yes or no")
	f.StringVar(&cfg.UnitDir, "unit-dir", setup.DefaultUnitDir, "where the systemd unit goes")
	f.BoolVar(&dryRun, "dry-run", false, "print every step and the command it stands for; change nothing")
	f.BoolVar(&asJSON, "json", false, "print the steps and their state as JSON")
	return cmd
}

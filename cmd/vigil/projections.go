package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/projections"
	"github.com/vigil-dev/vigil/replay"
)

func newProjectionsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projections",
		Short: "Inspect, verify and rebuild the read models",
		Long: `The read models (events by id and conversation, risk, pending approvals,
allowlist, pairing, the security_risk hint, stats) live in a Pebble database
in DIR/projections, each batch committed with the log sequence it reflects.
They are always re-derivable from the log: 'vigil serve' rebuilds them at
start if they are missing or damaged. These commands work on a stopped node
(the read models belong to one process at a time). See docs/replay.md.`,
	}
	cmd.AddCommand(newProjectionsStatusCmd(c), newProjectionsRebuildCmd(c), newProjectionsListCmd(c))
	return cmd
}

// errServeRunning says vigil serve runs on dir and owns its read models.
func errServeRunning(dir string) error {
	who := ""
	if si, serr := client.ReadServeInfo(dir); serr == nil {
		who = fmt.Sprintf(" (pid %d)", si.PID)
	}
	return fmt.Errorf("vigil serve is running on %s%s and owns its read models: stop it first, "+
		"or run 'vigil projections rebuild --at-next-start' and restart it", dir, who)
}

// fleetNodeDir reports whether dir is the data directory of a fleet
// node: its JetStream store holds the cluster's meta group. Its log is
// the fleet's, replicated: it cannot be opened alone in this process (a
// standalone server refuses the replicated streams).
func fleetNodeDir(dir string) bool {
	fi, err := os.Stat(datadir.New(dir).JetStreamMeta())
	return err == nil && fi.IsDir()
}

// fleetProjectionsStatus is 'vigil projections status' on a stopped fleet
// node's data directory: the read models are opened and read back without
// the log (the fleet's, which this process cannot open alone), so their
// log identity and how far they are behind are checked only when the node
// starts again.
func (c *cli) fleetProjectionsStatus(asJSON bool) error {
	dir := c.data()
	lock, err := datadir.New(dir).LockExisting()
	if errors.Is(err, datadir.ErrLocked) {
		return errServeRunning(dir)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	log, err := c.logger()
	if err != nil {
		return err
	}
	store, err := projections.Open(datadir.New(dir).Projections(), projections.Options{Logger: log})
	if err != nil {
		return err
	}
	defer store.Close()
	return c.printProjectionsStatus(store, asJSON, dir)
}

// printProjectionsStatus prints where the read models of store stand;
// fleetDir names a fleet node's data directory, whose read models were read
// back without the log (see fleetProjectionsStatus).
func (c *cli) printProjectionsStatus(store *projections.Store, asJSON bool, fleetDir string) error {
	fleet := fleetDir != ""
	st := store.Status()
	tot, err := store.Stats("")
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			projections.Status
			Events    uint64 `json:"events"`
			FleetNode bool   `json:"fleet_node,omitempty"`
		}{st, tot.Events, fleet})
	}
	if fleet {
		fmt.Fprintf(c.stdout, "read models in %s: at log seq %d (%s events folded)\n", st.Dir, st.Position, groupDigits(tot.Events))
	} else {
		fmt.Fprintf(c.stdout, "read models in %s: at log seq %d of %d (%s events folded)\n", st.Dir, st.Position, st.Target, groupDigits(tot.Events))
	}
	switch {
	case st.Reset != "" && fleet:
		fmt.Fprintf(c.stdout, "DROPPED when opened: %s\nthey are rebuilt from the log when vigil serve starts\n", st.Reset)
	case st.Reset != "":
		fmt.Fprintf(c.stdout, "DROPPED when opened: %s\nthey are rebuilt from the log when vigil serve starts, or now with 'vigil projections rebuild'\n", st.Reset)
	case fleet:
		fmt.Fprintln(c.stdout, "checked: format, position checksum, every table's checksums")
		fmt.Fprintf(c.stdout, "%s is a fleet node's: its log is the fleet's, which this command does not open; the node checks the read models against it, and catches up, when it starts ('vigil status --nats ...' shows the fleet's log)\n", fleetDir)
	case st.CatchingUp:
		fmt.Fprintf(c.stdout, "behind the log by %d records: vigil serve catches up at start\n", st.Target-st.Position)
	default:
		fmt.Fprintln(c.stdout, "checked: format, position checksum, log identity, every table's checksums")
	}
	return nil
}

// openProjections opens the node's log in this process and its read
// models, checked against the log. Both must be free: vigil serve stopped.
func (c *cli) openProjections(ctx context.Context) (*node.Node, *projections.Store, error) {
	dir := c.data()
	if fleetNodeDir(dir) {
		if lock, err := datadir.New(dir).LockExisting(); errors.Is(err, datadir.ErrLocked) {
			return nil, nil, errServeRunning(dir)
		} else if lock != nil {
			lock.Close()
		}
		return nil, nil, fmt.Errorf("%s is a fleet node's data directory: its log is replicated across the fleet and cannot be opened here alone; "+
			"run 'vigil projections rebuild --at-next-start' there and start the node (it rebuilds from the fleet's log), or 'vigil replay --nats URL' to check the fleet's outputs", dir)
	}
	s, err := c.startLocal(ctx)
	if err != nil {
		if errors.Is(err, datadir.ErrLocked) {
			return nil, nil, errServeRunning(dir)
		}
		return nil, nil, err
	}
	ls, err := logState(ctx, s.JetStream())
	if err != nil {
		s.Close(context.Background())
		return nil, nil, err
	}
	log, err := c.logger()
	if err != nil {
		s.Close(context.Background())
		return nil, nil, err
	}
	store, err := projections.Open(datadir.New(dir).Projections(), projections.Options{Logger: log, Log: &ls})
	if err != nil {
		s.Close(context.Background())
		return nil, nil, err
	}
	return s, store, nil
}

// logState describes VIGIL_LOG for projections.Open: the stream's
// creation time identifies it, and its last sequence bounds the store.
func logState(ctx context.Context, js jetstream.JetStream) (projections.LogState, error) {
	st, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return projections.LogState{}, fmt.Errorf("stream %s: %w", events.StreamLog, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return projections.LogState{}, fmt.Errorf("stream %s: %w", events.StreamLog, err)
	}
	return projections.NewLogState(info.Created, info.State.LastSeq), nil
}

func newProjectionsStatusCmd(c *cli) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Check the read models against the log and show where they stand",
		Long: `Open the read models as 'vigil serve' does: check the format, the position
record's checksum, that they were built from this log and are not ahead of
it, and read every table back. Damaged read models are dropped (the next
'vigil serve' or 'vigil projections rebuild' rebuilds them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fleetNodeDir(c.data()) {
				return c.fleetProjectionsStatus(asJSON)
			}
			s, store, err := c.openProjections(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close(context.Background())
			defer store.Close()
			return c.printProjectionsStatus(store, asJSON, "")
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newProjectionsRebuildCmd(c *cli) *cobra.Command {
	var atNextStart bool
	cmd := &cobra.Command{
		Use:   "rebuild [PROJECTION...]",
		Short: "Drop read models and rebuild them from the log",
		Long: `Drop the named read models (all of them by default; 'vigil projections list'
names them) and rebuild them by running every processor over VIGIL_LOG, as
'vigil replay' does. The others are left as they are. Needs the node
stopped; with --at-next-start it only marks the read models, and the next
'vigil serve' rebuilds all of them while starting.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if atNextStart {
				if len(args) > 0 {
					return fmt.Errorf("--at-next-start rebuilds every read model; drop the names, or stop vigil serve and rebuild %s now", strings.Join(args, " "))
				}
				dir := datadir.New(c.data()).Projections()
				if err := projections.RequestRebuild(dir); err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "the read models in %s will be rebuilt from the log when vigil serve next starts\n", dir)
				return nil
			}
			return c.rebuildProjections(cmd.Context(), args)
		},
	}
	cmd.Flags().BoolVar(&atNextStart, "at-next-start", false, "only mark them: the next vigil serve rebuilds them (works while it runs)")
	return cmd
}

func (c *cli) rebuildProjections(ctx context.Context, names []string) error {
	s, store, err := c.openProjections(ctx)
	if err != nil {
		return err
	}
	defer s.Close(context.Background())
	defer store.Close()
	build, _, err := replayBuild(c.data())
	if err != nil {
		return err
	}
	src := replay.Stream{JS: s.JetStream()}
	last, err := src.LastSeq(ctx)
	if err != nil {
		return err
	}
	meter := newReplayMeter(c.stderr, last)
	start := time.Now()
	res, err := store.Rebuild(ctx, names, func(ctx context.Context, yield func([]projections.Applied) error) error {
		_, err := replay.Run(ctx, replay.Config{Source: src, Build: build, Sink: yield, Progress: meter.show})
		return err
	})
	meter.clear()
	if err != nil {
		return err
	}
	el := time.Since(start)
	n := res.Refolded + res.Applied
	fmt.Fprintf(c.stdout, "rebuilt %s from the log: %s records in %s (%s/s); read models at log seq %d\n",
		strings.Join(res.Projections, ", "), groupDigits(n), el.Round(time.Millisecond),
		groupDigits(uint64(float64(n)/max(el.Seconds(), 1e-9))), res.Position)
	return nil
}

func newProjectionsListCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the read models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, p := range projections.Projections() {
				fmt.Fprintf(c.stdout, "%-10s %s\n", p.Name, p.Doc)
			}
			return nil
		},
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// serverStatus is what `vigil status` reports.
type serverStatus struct {
	Up      bool   `json:"up"`
	NATSURL string `json:"nats_url,omitempty"`
	DataDir string `json:"data_dir,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Version string `json:"version,omitempty"`
	Started string `json:"started,omitempty"`
	// Node is the name of the server answering (a fleet node's --node).
	Node string `json:"node,omitempty"`
	// LogEvents is the number of records in VIGIL_LOG, when the
	// credentials may read it.
	LogEvents *uint64 `json:"log_events,omitempty"`
	// RTTMs is one round trip to the server.
	RTTMs float64 `json:"rtt_ms,omitempty"`
	// Log and Derived are the streams' leaders and replicas (in a fleet);
	// Folds each node's checkpoint and lag (status_fleet.go).
	Log     *streamStatus `json:"log,omitempty"`
	Derived *streamStatus `json:"derived,omitempty"`
	Folds   []foldStatus  `json:"folds,omitempty"`
	// AuditKey is the fleet's audit key id, as its first node recorded it
	// (integrity.FleetBucket); AuditKeyNode is that node.
	AuditKey     string `json:"audit_key,omitempty"`
	AuditKeyNode string `json:"audit_key_node,omitempty"`
	// FoldsError says why the nodes' folds are not shown.
	FoldsError string `json:"folds_error,omitempty"`
	// AuditKeyError says why a fleet's audit key is not shown.
	AuditKeyError string `json:"audit_key_error,omitempty"`
	Error         string `json:"error,omitempty"`
	// TLS is each node's certificate expiry, or its lab mode (status_tls.go).
	TLS []tlsStatus `json:"tls,omitempty"`
	// foldsKnown: the credentials could list the drivers' consumers.
	foldsKnown bool
	// ownAbsent: the answering node's own driver's consumer was looked
	// up and is not there (its driver is warming up, or it runs none).
	ownAbsent bool
	// foldsDenied: the credentials may not read the drivers' consumers
	// (a permissions violation), as opposed to no answer in time.
	foldsDenied bool
	// role is the credentials' role when their file name says it ("":
	// not known, as for a file named otherwise).
	role natsutil.Role
}

// credsRole is the role a seed file is for when it is named as Vigil
// names them (<role>.nk, <role>.creds); "" otherwise.
func credsRole(path string) natsutil.Role {
	path = filepath.Clean(path)
	in := datadir.CredsAt(filepath.Dir(path))
	for _, r := range natsutil.Roles {
		if path == in.Seed(r) || path == in.NATSCreds(r) {
			return r
		}
	}
	return ""
}

// readsConsumers reports whether the credentials may read the drivers'
// consumers: not a client role's (an approver's may not list consumers
// nor read a node's own), which status then does not ask for, so that
// the server logs no permissions violation.
func (st *serverStatus) readsConsumers() bool {
	return st.role == "" || st.role == natsutil.RoleAdmin || st.role == natsutil.RoleService
}

// serves reports whether a node serves: with the drivers' consumers
// readable, one of them is live (a node answers NATS, and its log stream
// info, well before its driver has warmed up and gating works). With no
// driver's consumer at all (a log no node's processors read yet: a node
// without processors, or one whose first driver is not live yet) the log
// stream answering is all there is to go by.
//
// In a fleet the node connected to (Node) counts: it serves once its own
// driver's consumer is live; while other nodes have consumers and it has
// none, its driver is warming up (a fleet of nodes some of which run no
// processors is not told apart from that). Outside a fleet, any live
// driver's consumer will do.
func (st *serverStatus) serves() (bool, string) {
	starting := "node " + st.Node + "'s processors are not reading the log yet (starting?)"
	fleet := st.Node != "" && st.Log != nil && st.Log.Cluster != ""
	if !st.foldsKnown {
		// The node's own consumer may still have been read on its own.
		for _, f := range st.Folds {
			if f.Node == st.Node && st.Node != "" {
				if f.Live {
					return true, ""
				}
				return false, starting
			}
		}
		switch {
		case st.ownAbsent && fleet:
			return false, starting
		case st.FoldsError != "" && !st.foldsDenied:
			// Not known, so not up: a loaded node that does not answer in
			// time is asked again by --wait; it is never guessed up.
			return false, "whether its processors read the log is unknown (" + st.FoldsError + ")"
		}
		return true, ""
	}
	if len(st.Folds) == 0 {
		return true, ""
	}
	any := false
	for _, f := range st.Folds {
		if f.Node == st.Node && st.Node != "" {
			if f.Live {
				return true, ""
			}
			return false, starting
		}
		any = any || f.Live
	}
	if fleet {
		// A fleet node without a consumer of its own while others have
		// one: its driver is warming up (it re-creates its consumer once
		// live).
		return false, starting
	}
	if any {
		return true, ""
	}
	return false, "no node's processors are reading the log (starting, or every node down)"
}

// notServing reports whether err, from the log stream's info, means the
// log is not served (as opposed to credentials that may not read it).
func notServing(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) || (errors.As(err, &apiErr) && apiErr.Code == 503)
}

// probe connects once and reports what it found.
func (c *cli) probe(ctx context.Context) serverStatus {
	st := serverStatus{role: natsutil.RoleAdmin}
	if c.creds != "" {
		st.role = credsRole(c.creds)
	}
	if c.natsURL == "" {
		st.DataDir = c.data()
		si, err := client.ReadServeInfo(st.DataDir)
		if err != nil {
			st.Error = err.Error()
			return st
		}
		st.NATSURL, st.PID, st.Version, st.Started = si.NATSURL, si.PID, si.Version, si.Started
	}
	pctx := ctx
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	o := client.Options{URL: c.natsURL, CredsFile: c.creds, Role: natsutil.RoleAdmin, Name: "vigil-status", Timeout: 2 * time.Second}
	if c.natsURL == "" {
		o.DataDir = st.DataDir
	}
	cl, err := client.Connect(ctx, o)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	defer cl.Close()
	rtt, err := cl.Conn().RTT()
	if err != nil {
		st.Error = fmt.Sprintf("connected to %s, but no answer: %v", cl.Conn().ConnectedUrlRedacted(), err)
		return st
	}
	st.NATSURL = cl.Conn().ConnectedUrlRedacted()
	st.Node = cl.Conn().ConnectedServerName()
	st.RTTMs = float64(rtt.Microseconds()) / 1000
	// The log stream answering says the node's JetStream is up too.
	s, err := cl.JetStream().Stream(ctx, events.StreamLog)
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = s.Info(ctx)
	}
	if err != nil && notServing(err) {
		// Reached, but JetStream or the log is not there yet (a node
		// starting, a cluster without its quorum).
		st.Error = fmt.Sprintf("connected to %s, but the log stream does not answer: %v", st.NATSURL, err)
		return st
	}
	if err == nil {
		n := info.State.Msgs
		st.LogEvents = &n
		// The fleet's details have a budget of their own: on a loaded
		// machine the connection's 3 s left them out (the audit key).
		fctx, fcancel := context.WithTimeout(pctx, 5*time.Second)
		fleetStatus(fctx, cl.JetStream(), &st, info)
		st.TLS = tlsStatuses(fctx, cl.JetStream(), st.DataDir, time.Now())
		fcancel()
	} else if c.natsURL == "" {
		st.Error = fmt.Sprintf("connected to %s, but the log stream does not answer: %v", st.NATSURL, err)
		return st
	}
	if ok, why := st.serves(); !ok {
		st.Error = fmt.Sprintf("connected to %s, but %s", st.NATSURL, why)
		return st
	}
	st.Up = true
	return st
}

func newStatusCmd(c *cli) *cobra.Command {
	var (
		wait        time.Duration
		asJSON, pid bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether a Vigil server is up (and wait for one with --wait)",
		Long: `Say whether the Vigil server of the data directory (--data, $VIGIL_DATA)
or of --nats URL --creds FILE is up and answering: its NATS URL, process
id, version, start time and the length of its log; in a fleet, the
leader and replicas of VIGIL_LOG and VIGIL_DERIVED, and each node's fold:
the log seq it has checkpointed and how far behind the log it is.

--wait D keeps trying for up to D, so a script can start a server in the
background and go on once it is ready:

  vigil serve &
  vigil status --wait 30s && vigil append < events.jsonl

--pid prints only the server's process id, to stop it:

  kill "$(vigil status --pid)"   # serve shuts down cleanly on SIGTERM

Exit status: 0 when the server is up, 1 when it is not (after --wait).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			deadline := time.Now().Add(wait)
			st := c.probe(ctx)
			for !st.Up && time.Now().Before(deadline) {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
				st = c.probe(ctx)
			}
			if pid && st.Up {
				if st.PID == 0 {
					return &exitError{code: 1, err: errors.New("the server's process id is known only through a data directory (--data), not --nats")}
				}
				fmt.Fprintln(c.stdout, st.PID)
				return nil
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				enc.Encode(st)
			} else if st.Up {
				fmt.Fprintf(c.stdout, "Vigil is up on %s", st.NATSURL)
				if st.PID != 0 {
					fmt.Fprintf(c.stdout, " (pid %d, version %s, since %s)", st.PID, st.Version, st.Started)
				}
				fmt.Fprintln(c.stdout)
				if st.DataDir != "" {
					fmt.Fprintf(c.stdout, "data: %s\n", st.DataDir)
				}
				if st.LogEvents != nil {
					fmt.Fprintf(c.stdout, "log: %d events\n", *st.LogEvents)
				}
				printFleet(c.stdout, st)
				printTLS(c.stdout, st.TLS)
			}
			if !st.Up {
				msg := "Vigil is not up: " + st.Error
				if wait > 0 {
					msg = fmt.Sprintf("Vigil is not up after waiting %s: %s", wait, st.Error)
				}
				return &exitError{code: 1, err: errors.New(msg)}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the server to be up (e.g. 30s)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&pid, "pid", false, "print only the server's process id (e.g. for kill)")
	return cmd
}

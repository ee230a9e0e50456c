package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/node"
)

// certAlertBefore: `vigil status` alerts when a node's certificate
// expires within this.
const certAlertBefore = 7 * 24 * time.Hour

// tlsStatus is one node's TLS as `vigil status` shows it: its
// certificate's expiry, or that it runs in the lab mode.
type tlsStatus struct {
	Node        string    `json:"node"`
	NotAfter    time.Time `json:"not_after,omitzero"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	InsecureLab bool      `json:"insecure_lab,omitempty"`
	// Alert says what needs doing: a certificate expiring within a week
	// (or expired), or the lab mode.
	Alert string `json:"alert,omitempty"`
}

// tlsStatuses reads every node's TLS state: from the fleet bucket (each
// node records its own there), else from the data directory's
// serve.json (a single host).
func tlsStatuses(ctx context.Context, js jetstream.JetStream, dataDir string, now time.Time) []tlsStatus {
	infos, _ := node.ReadFleetTLS(ctx, js)
	if len(infos) == 0 && dataDir != "" {
		var sf node.ServeFile
		if b, err := os.ReadFile(datadir.New(dataDir).ServeInfo()); err == nil && json.Unmarshal(b, &sf) == nil && sf.TLS != nil {
			infos = append(infos, *sf.TLS)
		}
	}
	var out []tlsStatus
	for _, ti := range infos {
		ts := tlsStatus{Node: ti.Node, NotAfter: ti.NotAfter, Fingerprint: ti.Fingerprint, InsecureLab: ti.InsecureLab}
		switch left := ti.NotAfter.Sub(now); {
		case ti.InsecureLab:
			ts.Alert = "INSECURE LAB MODE: no TLS (--insecure-lab)"
		case ti.NotAfter.IsZero():
		case left <= 0:
			ts.Alert = "certificate EXPIRED: renew it and send the node SIGHUP"
		case left < certAlertBefore:
			ts.Alert = fmt.Sprintf("certificate expires in %s: renew it and send the node SIGHUP", left.Round(time.Hour))
		}
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b tlsStatus) int { return strings.Compare(a.Node, b.Node) })
	return out
}

// printTLS writes each node's certificate expiry and alerts.
func printTLS(w io.Writer, ts []tlsStatus) {
	for _, t := range ts {
		switch {
		case t.InsecureLab:
			fmt.Fprintf(w, "node %s: TLS off: %s\n", t.Node, t.Alert)
		case t.Alert != "":
			fmt.Fprintf(w, "node %s: TLS certificate until %s: ALERT: %s\n", t.Node, t.NotAfter.Format(time.RFC3339), t.Alert)
		default:
			fmt.Fprintf(w, "node %s: TLS certificate until %s\n", t.Node, t.NotAfter.Format(time.RFC3339))
		}
	}
}

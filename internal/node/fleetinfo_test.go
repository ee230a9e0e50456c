package node

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFleetNodeSaysWhoItIs: a fleet node's serve.json and start-up log
// name the node, its cluster, its peers and the leaders, and the node
// logs "caught up" once its fold reached the log's end.
func TestFleetNodeSaysWhoItIs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	logs := make(map[string]*syncBuffer)
	var mu sync.Mutex
	nodes := startFleetWith(t, 3, func(c *Config) {
		b := &syncBuffer{}
		mu.Lock()
		logs[c.NodeName] = b
		mu.Unlock()
		c.Logger = slog.New(slog.NewTextHandler(b, nil))
	})
	for _, s := range nodes {
		raw, err := os.ReadFile(filepath.Join(s.cfg.DataDir, client.ServeInfoFile))
		if err != nil {
			t.Fatal(err)
		}
		var sf ServeFile
		if err := json.Unmarshal(raw, &sf); err != nil {
			t.Fatal(err)
		}
		f := sf.Fleet
		if sf.Node != s.cfg.NodeName || f == nil || f.Cluster != "vigil-test" || f.Replicas != 3 || len(f.Peers) != 3 ||
			f.LogLeader == "" || f.DerivedLeader == "" || f.MetaLeader == "" {
			t.Fatalf("%s: serve.json says %s", s.cfg.NodeName, raw)
		}
		// Clients still read it.
		if si, err := client.ReadServeInfo(s.cfg.DataDir); err != nil || si.NATSURL == "" {
			t.Fatalf("client.ReadServeInfo: %+v, %v", si, err)
		}
	}
	for name, b := range logs {
		wait.Eventually(t, 20*time.Second, func() string {
			if !strings.Contains(b.String(), "caught up") {
				return name + " has not logged \"caught up\":\n" + b.String()
			}
			return ""
		})
		out := b.String()
		if n := strings.Count(out, "caught up:"); n != 1 {
			t.Errorf("%s logs \"caught up\" %d times:\n%s", name, n, out)
		}
		var serving string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, `msg="vigil serving"`) {
				serving = l
			}
		}
		for _, want := range []string{"node=" + name, "cluster=vigil-test", "log_leader=n", "derived_leader=n", "meta_leader=n", "peers=n0,n1,n2"} {
			if !strings.Contains(serving, want) {
				t.Errorf("%s: the start-up line does not say %q: %s", name, want, serving)
			}
		}
	}
}

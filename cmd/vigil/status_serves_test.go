package main

import "testing"

// TestStatusServes: `vigil status` says up only once the node answering
// serves (its own driver reads the log), and in a fleet a node without a
// consumer of its own while the others have theirs is starting.
func TestStatusServes(t *testing.T) {
	fleet := &streamStatus{Cluster: "c", Leader: "n1"}
	for _, tc := range []struct {
		name string
		st   serverStatus
		want bool
	}{
		{"consumers not readable", serverStatus{Node: "n0"}, true},
		{"no driver anywhere", serverStatus{Node: "n0", foldsKnown: true}, true},
		{"own fold live", serverStatus{Node: "n0", foldsKnown: true, Log: fleet,
			Folds: []foldStatus{{Node: "n0", Live: true}, {Node: "n1"}}}, true},
		{"own fold warming up, others live", serverStatus{Node: "n0", foldsKnown: true, Log: fleet,
			Folds: []foldStatus{{Node: "n0"}, {Node: "n1", Live: true}}}, false},
		{"fleet node without its consumer yet", serverStatus{Node: "n0", foldsKnown: true, Log: fleet,
			Folds: []foldStatus{{Node: "n1", Live: true}}}, false},
		{"single host, another driver live", serverStatus{Node: "local", foldsKnown: true, Log: &streamStatus{Leader: "local"},
			Folds: []foldStatus{{Node: "other", Live: true}}}, true},
		{"nobody reads the log", serverStatus{foldsKnown: true, Folds: []foldStatus{{Node: "n1"}, {Node: "n2"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := tc.st.serves(); got != tc.want {
				t.Fatalf("serves() = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

// TestStatusMarksDown: a node whose fold does not read the log and whose
// replicas are not current is shown down, on its fold and its replicas.
func TestStatusMarksDown(t *testing.T) {
	log := &streamStatus{Replicas: []replicaStatus{{Name: "n1", Current: false, Lag: 300}, {Name: "n2", Current: true}}}
	der := &streamStatus{Replicas: []replicaStatus{{Name: "n1", Current: true}}}
	if _, ok := laggingReplica("n2", log, der); ok {
		t.Fatal("a current replica called lagging")
	}
	if _, ok := laggingReplica("n1", log, der); !ok {
		t.Fatal("a replica behind by 300 not called lagging")
	}
	markDown("n1", "2026-12-01T21:00:00Z", log, der)
	for _, r := range append(log.Replicas, der.Replicas...) {
		if (r.Name == "n1") != r.Down || (r.Down && r.DownSince != "2026-12-01T21:00:00Z") {
			t.Fatalf("replica %+v", r)
		}
	}
}

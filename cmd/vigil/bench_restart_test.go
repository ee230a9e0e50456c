package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/vigil-dev/vigil/internal/bench"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestMain lets the test binary run as the vigil command (a child `vigil
// serve` for the restart benchmark) when VIGIL_TEST_RUN_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("VIGIL_TEST_RUN_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestBenchRestartSmall runs the restart benchmark's machinery on a small
// log, with this test binary as `vigil serve`: the restarted node starts
// from the snapshot it stored at stop, so it refolds (counted, from its
// log) none of the log's records, and the figures are read from /proc.
func TestBenchRestartSmall(t *testing.T) {
	for _, viaIngest := range []bool{false, true} {
		t.Run(fmt.Sprintf("via-ingest=%v", viaIngest), func(t *testing.T) { testBenchRestart(t, viaIngest) })
	}
}

func testBenchRestart(t *testing.T, viaIngest bool) {
	res, err := bench.RunRestart(t.Context(), bench.RestartConfig{
		Events: 600, Conversations: 20, Runs: 2, Durability: natsutil.DurabilityInterval, ViaIngest: viaIngest,
		Binary: os.Args[0], Env: []string{"VIGIL_TEST_RUN_MAIN=1"}, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.LogRecords < 600 || len(res.Runs) != 2 {
		t.Fatalf("result %+v: want a log of at least 600 records and 2 runs", res)
	}
	for i, r := range res.Runs {
		if r.DecisionSeconds <= 0 || r.RSSMB <= 0 || r.HWMMB < r.RSSMB || r.CPUSeconds <= 0 {
			t.Fatalf("run %d: %+v", i, r)
		}
		// The snapshot at the last stop covers everything the node
		// folded: at most the few records appended since (the previous
		// run's probe and its decision's seal) are folded again.
		if r.Restored < int64(res.LogRecords) || r.Refolded < 0 || r.Refolded > 10 {
			t.Fatalf("run %d: restored seq %d, refolded %d; want a snapshot at or after seq %d and next to nothing refolded", i, r.Restored, r.Refolded, res.LogRecords)
		}
	}
	t.Logf("%+v", res)
}

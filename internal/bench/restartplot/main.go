// Command restartplot draws the results of `vigil bench restart --json`
// (one JSON object per line on stdin, one per log length; runs of the same
// length are merged) as the SVG of BENCHMARKS.md's Restart section:
//
//	cat /tmp/rb/*.json | go run ./internal/bench/restartplot -title "…" > docs/restart.svg
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/vigil-dev/vigil/internal/bench"
)

func main() {
	title := flag.String("title", "vigil bench restart", "the plot's title")
	flag.Parse()
	byEvents := map[int]*bench.RestartResult{}
	var order []int
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r bench.RestartResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "restartplot:", err)
			os.Exit(1)
		}
		if prev, ok := byEvents[r.Events]; ok {
			prev.Runs = append(prev.Runs, r.Runs...)
			continue
		}
		byEvents[r.Events] = &r
		order = append(order, r.Events)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "restartplot:", err)
		os.Exit(1)
	}
	var rs []bench.RestartResult
	for _, n := range order {
		rs = append(rs, *byEvents[n])
	}
	os.Stdout.Write(bench.RestartSVG(rs, *title))
}

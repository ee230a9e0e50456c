package bench

import (
	"log/slog"
	"os"
	"testing"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

func statsOnly() ([]processors.Processor, error) {
	return []processors.Processor{stats.New()}, nil
}

// TestRunPipelineSmall runs the benchmark machinery on a few events so it
// stays correct; the figures are measured with `vigil bench pipeline`.
func TestRunPipelineSmall(t *testing.T) {
	res, err := RunPipeline(t.Context(), PipelineConfig{Events: 600, Durability: natsutil.DurabilityInterval, Processors: statsOnly})
	if err != nil {
		t.Fatal(err)
	}
	if res.BareEventsPerS <= 0 || res.VigilEventsPerS <= 0 || res.Ratio <= 0 || res.Events != 600 {
		t.Fatalf("result %+v", res)
	}
}

// BenchmarkVigilPipeline profiles the Vigil side: go test -bench Vigil -cpuprofile.
func BenchmarkVigilPipeline(b *testing.B) {
	evs := SampleEvents(30000)
	cfg := PipelineConfig{Durability: natsutil.DurabilityInterval, Producers: 4, Batch: 100, Processors: statsOnly, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	for b.Loop() {
		if _, _, _, _, err := runVigil(b.Context(), cfg, evs); err != nil {
			b.Fatal(err)
		}
	}
}

//go:build !unix

package redact

import "time"

// cpuTime is not measured here; BenchmarkRedact then reports wall time only.
func cpuTime() time.Duration { return 0 }

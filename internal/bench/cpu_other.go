//go:build !unix

package bench

import "time"

// cpuNow is not measured on this platform: always zero.
func cpuNow() time.Duration { return 0 }

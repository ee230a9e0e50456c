//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time (user and system) this process has used so far,
// every goroutine and the embedded servers included; zero where it cannot
// be read.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

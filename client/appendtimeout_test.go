package client

import (
	"testing"
	"time"
)

// TestAppendTimeoutGrowsWithSize: a gate on a large action waits longer to
// see it stored (its redaction may take seconds), a small one no longer
// than the client's timeout.
func TestAppendTimeoutGrowsWithSize(t *testing.T) {
	for _, c := range []struct {
		size int
		want time.Duration
	}{
		{0, 5 * time.Second},
		{64 << 10, 5*time.Second + perMiBToStore/16},
		{1 << 20, 5*time.Second + perMiBToStore},
		{3_700_000, 5*time.Second + time.Duration(3_700_000)*perMiBToStore/(1<<20)},
	} {
		if got := appendTimeout(5*time.Second, c.size); got != c.want {
			t.Errorf("appendTimeout(5s, %d) = %v, want %v", c.size, got, c.want)
		}
	}
}

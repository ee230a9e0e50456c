package transport

import "testing"

func TestTLSRequired(t *testing.T) {
	for _, tc := range []struct {
		urls     string
		explicit bool
		want     bool
	}{
		{"nats://127.0.0.1:4222", false, false},
		{"nats://localhost:4222,nats://[::1]:4223", false, false},
		{"127.0.0.1:4222", false, false},
		{"nats://127.0.0.1:4222", true, true},
		{"tls://127.0.0.1:4222", false, true},
		{"nats://127.0.0.1:4222,nats://10.0.0.2:4222", false, true},
		{"nats://nats.example:4222", false, true},
	} {
		if got := TLSRequired(tc.urls, tc.explicit); got != tc.want {
			t.Errorf("TLSRequired(%q, %v) = %v, want %v", tc.urls, tc.explicit, got, tc.want)
		}
	}
}

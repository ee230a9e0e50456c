package notify

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzVerify: Verify never panics on any headers and body, accepts what
// Sign made for the same body and secret within the tolerance, and
// refuses the same signature on any other body.
func FuzzVerify(f *testing.F) {
	f.Add([]byte("k"), int64(1700000000), []byte(`{"type":"gate.requested"}`), "1700000000", "v1=00", []byte("x"))
	f.Add([]byte(""), int64(0), []byte(""), "", "", []byte(""))
	f.Add([]byte("secret"), int64(-5), []byte("body"), "-5", "v1=zz", []byte("bodY"))
	f.Fuzz(func(t *testing.T, secret []byte, ts int64, body []byte, hts, hsig string, other []byte) {
		h := http.Header{}
		h.Set(HeaderTimestamp, hts)
		h.Set(HeaderSignature, hsig)
		_ = Verify(secret, h, body, time.Unix(ts, 0), time.Minute)
		h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		h.Set(HeaderSignature, Sign(secret, ts, body))
		if err := Verify(secret, h, body, time.Unix(ts, 0), time.Minute); err != nil {
			t.Fatalf("own signature refused: %v", err)
		}
		if string(other) != string(body) {
			if err := Verify(secret, h, other, time.Unix(ts, 0), time.Minute); err == nil {
				t.Fatal("a signature verified another body")
			}
		}
	})
}

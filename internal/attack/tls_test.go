package attack

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// TestTLSHTTPAPIRefusesClearAndStrangers: a node with TLS serves its
// HTTP API over TLS only, with its fleet certificate: an attacker who
// speaks plain HTTP to it, or who does not hold the fleet CA (the
// system's roots, or skipping nothing), gets no answer, and /metrics
// reports the certificate's expiry to whoever holds an admin token.
func TestTLSHTTPAPIRefusesClearAndStrangers(t *testing.T) {
	dir := t.TempDir()
	n, err := node.Start(t.Context(), node.Config{DataDir: dir, NATSListen: "127.0.0.1:-1",
		HTTPListen: "127.0.0.1:0", TLSMode: node.TLSOn, Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(t.Context())
	u := n.Info().HTTPURL
	if !strings.HasPrefix(u, "https://") {
		t.Fatalf("HTTP API at %s, want https", u)
	}
	tok, err := natsutil.ReadToken(datadir.New(dir).Creds().Dir(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	get := func(hc *http.Client, url string) (string, error) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	if body, err := get(plain, "http://"+strings.TrimPrefix(u, "https://")+"/metrics"); err == nil && strings.Contains(body, "vigil_") {
		t.Error("the HTTP API answered in clear text")
	}
	if _, err := get(plain, u+"/metrics"); err == nil {
		t.Error("a client without the fleet CA reached the HTTP API")
	}
	pool, err := transport.LoadCAPool(datadir.New(dir).Creds().FleetCA())
	if err != nil {
		t.Fatal(err)
	}
	good := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	body, err := get(good, u+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vigil_tls_cert_expiry_timestamp_seconds", "vigil_insecure_lab 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
}

package main

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/vigil-dev/vigil/client/transport"
)

// httpsClient is the HTTP client of the commands that use a node's HTTP
// API: it verifies the node's certificate against ca (the fleet CA)
// when one is named, and against the system's CAs otherwise.
func httpsClient(ca string) (*http.Client, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	if ca == "" {
		return hc, nil
	}
	pool, err := transport.LoadCAPool(ca)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	hc.Transport = tr
	return hc, nil
}

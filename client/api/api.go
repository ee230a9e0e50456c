// Package api is a client of a Vigil node's HTTP API (docs/http.md): one
// bearer token, JSON in and out, the API's error answers as *Error. The
// node's NATS side is package client.
package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/client/transport"
)

// maxAnswer bounds the body of an answer the client reads.
const maxAnswer = 1 << 20

// Client sends requests to one node's HTTP API with one token.
type Client struct {
	url, token string
	hc         *http.Client
}

// New returns a client of the API at baseURL (a trailing slash is
// dropped) sending token as its bearer token; hc nil uses HTTPClient("").
func New(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc, _ = HTTPClient("")
	}
	return &Client{url: strings.TrimRight(baseURL, "/"), token: token, hc: hc}
}

// URL is the API's base URL, without a trailing slash.
func (c *Client) URL() string { return c.url }

// HTTPClient is the HTTP client for a node's API: a 30 s timeout, and the
// node's certificate verified against the CA bundle in the file ca (the
// fleet CA) when one is named, against the system's CAs otherwise.
func HTTPClient(ca string) (*http.Client, error) {
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

// Error is an answer outside 2xx. Message is the API's "error" text; it
// is empty when the body was no error answer, and Error then names the
// request and the status.
type Error struct {
	Method, Path string
	StatusCode   int
	Status       string   // "403 Forbidden"
	Message      string   // the answer's "error"
	Field        string   // the answer's "field": the input at fault
	Needs        []string // the answer's "needs": the roles that may
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s %s: %s", e.Method, e.Path, e.Status)
	}
	return e.Message
}

// Do sends method path (path holds the query, if any) with body as JSON
// (nil: none), and decodes a 2xx answer into out (nil: ignored). An answer
// outside 2xx is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("reach the HTTP API at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("read the answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Method: method, Path: path, StatusCode: resp.StatusCode, Status: resp.Status}
		var ans struct {
			Error string   `json:"error"`
			Field string   `json:"field"`
			Needs []string `json:"needs"`
		}
		if json.Unmarshal(b, &ans) == nil {
			e.Message, e.Field, e.Needs = ans.Error, ans.Field, ans.Needs
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: the answer does not decode: %w", method, path, err)
		}
	}
	return nil
}

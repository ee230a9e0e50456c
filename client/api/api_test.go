package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"no token","needs":["admin"]}`))
			return
		}
		switch r.URL.Path {
		case "/v1/echo":
			if r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "want JSON", http.StatusBadRequest)
				return
			}
			b := make([]byte, 100)
			n, _ := r.Body.Read(b)
			w.Write(b[:n])
		case "/v1/refused":
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"error":"config refused","field":"confirmation.mode"}`))
		case "/v1/plain":
			http.Error(w, "oops", http.StatusInternalServerError)
		case "/v1/bad":
			w.Write([]byte(`not json`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := New(srv.URL+"/", "tok", srv.Client())
	if c.URL() != srv.URL {
		t.Errorf("URL() = %q, want %q", c.URL(), srv.URL)
	}

	var out map[string]string
	if err := c.Do(ctx, http.MethodPost, "/v1/echo", map[string]string{"a": "b"}, &out); err != nil || out["a"] != "b" {
		t.Fatalf("echo: %v, %v", out, err)
	}

	var e *Error
	err := c.Do(ctx, http.MethodPut, "/v1/refused", nil, nil)
	if !errors.As(err, &e) || e.StatusCode != 422 || e.Field != "confirmation.mode" || err.Error() != "config refused" {
		t.Errorf("refused: %#v", err)
	}
	err = c.Do(ctx, http.MethodGet, "/v1/plain", nil, nil)
	if !errors.As(err, &e) || e.Message != "" || err.Error() != "GET /v1/plain: 500 Internal Server Error" {
		t.Errorf("plain: %v", err)
	}
	err = New(srv.URL, "wrong", srv.Client()).Do(ctx, http.MethodGet, "/v1/tokens", nil, nil)
	if !errors.As(err, &e) || e.StatusCode != http.StatusUnauthorized || !slices.Equal(e.Needs, []string{"admin"}) {
		t.Errorf("unauthorized: %v", err)
	}
	if err := c.Do(ctx, http.MethodGet, "/v1/bad", nil, &out); err == nil || !strings.Contains(err.Error(), "GET /v1/bad: the answer does not decode") {
		t.Errorf("bad answer: %v", err)
	}
	srv.Close()
	if err := c.Do(ctx, http.MethodGet, "/v1/echo", nil, nil); err == nil || !strings.Contains(err.Error(), "reach the HTTP API at "+srv.URL) {
		t.Errorf("closed server: %v", err)
	}
}

func TestHTTPClientCA(t *testing.T) {
	if _, err := HTTPClient(""); err != nil {
		t.Fatal(err)
	}
	if _, err := HTTPClient(t.TempDir() + "/missing.pem"); err == nil {
		t.Error("a missing CA file is accepted")
	}
}

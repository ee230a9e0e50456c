package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/internal/configlog"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// apiError is an error response: {"error": …} and what helps fix it.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
	// Field names the request field at fault (a JSON field, a query
	// parameter or a header).
	Field string `json:"field,omitempty"`
	// Needs lists the roles that may use the route (401, 403).
	Needs []natsutil.Role `json:"needs,omitempty"`
	// Index is the position in a batch of the event at fault.
	Index *int `json:"index,omitempty"`
	// Problems lists every problem of a config refused.
	Problems []problem `json:"problems,omitempty"`
	// reason labels the refusal in the metrics ("" for none).
	reason string
}

// problem is one problem of a refused configuration, with its field.
type problem = configlog.Problem

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error: the response does not encode"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, e)
}

func badRequest(field, format string, args ...any) *apiError {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &apiError{Status: http.StatusBadRequest, Field: field, Message: msg, reason: "bad_request"}
}

func unavailable(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf(format, args...), reason: "unavailable"}
}

// readBody reads a JSON request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &apiError{Status: http.StatusUnsupportedMediaType, Field: "Content-Type", reason: "unsupported_media_type",
				Message: fmt.Sprintf("Content-Type %q: send application/json", ct)}
		}
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, &apiError{Status: http.StatusBadRequest, Message: "reading the body: " + err.Error(), reason: "bad_request"}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, badRequest("", "empty body: send a JSON document")
	}
	return b, nil
}

func tooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, reason: "body_too_large",
		Message: fmt.Sprintf("body over the limit of %d bytes", limit)}
}

// decodeStrict decodes b into v, refusing unknown fields and trailing
// data; the error names the field at fault.
func decodeStrict(b []byte, v any) *apiError {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("", "trailing data after the JSON document")
	}
	return nil
}

// jsonError turns a decoding error into a 400 that names the field.
func jsonError(err error) *apiError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest("", "not JSON: %v (at byte %d)", se, se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(document)"
		}
		return badRequest(field, "want %s, got JSON %s", te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest("", "the JSON document ends early")
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return badRequest(f, "unknown field (docs/http.md lists the fields)")
	}
	return badRequest("", "%s", strings.TrimPrefix(msg, "json: "))
}

// queryUint parses an optional unsigned query parameter.
func queryUint(r *http.Request, name string, def uint64) (uint64, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest(name, "want a non-negative integer, got %q", v)
	}
	return n, nil
}

// queryDuration parses an optional duration query parameter: a Go
// duration ("30s", "2m") or a number of seconds.
func queryDuration(r *http.Request, name string, def, maxD time.Duration) (time.Duration, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, err2 := strconv.ParseFloat(v, 64)
		if err2 != nil || math.IsNaN(secs) {
			return 0, badRequest(name, "want a duration such as 30s or a number of seconds, got %q", v)
		}
		if secs > maxD.Seconds() {
			return 0, badRequest(name, "%s is over the limit of %s", v, maxD)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, badRequest(name, "want a positive duration, got %q", v)
	}
	if d > maxD {
		return 0, badRequest(name, "%s is over the limit of %s", d, maxD)
	}
	return d, nil
}

// queryBool parses an optional boolean query parameter.
func queryBool(r *http.Request, name string) (bool, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest(name, "want true or false, got %q", v)
	}
	return b, nil
}

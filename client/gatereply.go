package client

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/events"
)

// fastGateReply is decodeGateReply's reading of a message to a gate's
// inbox without encoding/json's reflection, for the spellings the ingest
// service writes: objects with only the fields of gateReply (exact case,
// each at most once), strings (one with escapes or invalid UTF-8 read by
// encoding/json alone), integers of plain digits, nulls only for arrays.
// ok is false for anything else, and the caller decodes with
// encoding/json instead: what this accepts, it reads as json.Unmarshal
// into a gateReply does.
func fastGateReply(data []byte) (g gateReply, ok bool) {
	s := scanner{b: data, text: string(data)}
	ok = s.object(func(key string) bool {
		switch key {
		case "results":
			return s.array(func() bool {
				var r events.IngestResult
				if !s.object(func(k string) bool { return ingestResultField(&s, &r, k) }) {
					return false
				}
				g.Results = append(g.Results, r)
				return true
			}, func() { g.Results = []events.IngestResult{} })
		case "error":
			return s.str(&g.Error)
		case "index":
			return s.integer(func(n int64) bool {
				if int64(int(n)) != n {
					return false
				}
				g.Index = int(n)
				return true
			})
		case "requested":
			gr := &events.GateRequested{}
			g.Requested = gr
			return s.object(func(k string) bool { return gateRequestedField(&s, gr, k) })
		case "decided":
			gd := &events.GateDecided{}
			g.Decided = gd
			return s.object(func(k string) bool { return gateDecidedField(&s, gd, k) })
		case "wait_error":
			return s.str(&g.WaitError)
		}
		return false
	})
	if !ok {
		return gateReply{}, false
	}
	s.space()
	if s.p != len(s.b) {
		return gateReply{}, false
	}
	return g, true
}

func ingestResultField(s *scanner, r *events.IngestResult, key string) bool {
	switch key {
	case "id":
		return s.str(&r.ID)
	case "seq":
		return s.uint(&r.Seq)
	case "duplicate":
		return s.boolean(&r.Duplicate)
	}
	return false
}

func gateRequestedField(s *scanner, r *events.GateRequested, key string) bool {
	switch key {
	case "action_id":
		return s.str(&r.ActionID)
	case "log_seq":
		return s.uint(&r.LogSeq)
	case "level":
		return s.str((*string)(&r.Level))
	case "reasons":
		return s.reasons(&r.Reasons)
	case "tool":
		return s.str(&r.Tool)
	case "command":
		return s.str(&r.Command)
	case "shape":
		return s.str(&r.Shape)
	case "timeout":
		return s.str(&r.Timeout)
	case "config_version":
		return s.integer(func(n int64) bool { r.ConfigVersion = n; return true })
	case "agent":
		return s.str(&r.Agent)
	case "backend":
		return s.str(&r.Backend)
	case "backend_claimed":
		return s.str(&r.BackendClaimed)
	case "digest":
		return s.str(&r.Digest)
	}
	return false
}

func gateDecidedField(s *scanner, d *events.GateDecided, key string) bool {
	switch key {
	case "action_id":
		return s.str(&d.ActionID)
	case "log_seq":
		return s.uint(&d.LogSeq)
	case "outcome":
		return s.str((*string)(&d.Outcome))
	case "by":
		return s.str((*string)(&d.By))
	case "level":
		return s.str((*string)(&d.Level))
	case "reasons":
		return s.reasons(&d.Reasons)
	case "approver":
		return s.str(&d.Approver)
	case "reason":
		return s.str(&d.Reason)
	case "decision_seq":
		return s.uint(&d.DecisionSeq)
	case "shape":
		return s.str(&d.Shape)
	case "config_version":
		return s.integer(func(n int64) bool { d.ConfigVersion = n; return true })
	case "verdict":
		return s.str((*string)(&d.Verdict))
	case "entry_id":
		return s.str(&d.EntryID)
	case "would":
		return s.str(&d.Would)
	case "ask_security_risk":
		return s.boolean(&d.AskSecurityRisk)
	case "digest":
		return s.str(&d.Digest)
	}
	return false
}

// scanner reads the JSON subset fastGateReply takes; every method
// returns false on anything outside it.
type scanner struct {
	b []byte
	// text is one copy of b: the strings read are its substrings (one
	// allocation for a message, not one for each field).
	text string
	p    int
}

func (s *scanner) space() {
	for s.p < len(s.b) {
		switch s.b[s.p] {
		case ' ', '\t', '\n', '\r':
			s.p++
		default:
			return
		}
	}
}

func (s *scanner) take(c byte) bool {
	s.space()
	if s.p < len(s.b) && s.b[s.p] == c {
		s.p++
		return true
	}
	return false
}

// rawStr reads a string. One with no escape and valid UTF-8 is its
// bytes; one with escapes (encoding/json writes <, > and & as \u003c …)
// or invalid UTF-8 is read by encoding/json, alone. A control character
// is refused, as JSON refuses it.
func (s *scanner) rawStr() (string, bool) {
	if !s.take('"') {
		return "", false
	}
	start := s.p
	plain := true
	for s.p < len(s.b) {
		c := s.b[s.p]
		switch {
		case c == '"':
			v := s.b[start:s.p]
			s.p++
			if plain && utf8.Valid(v) {
				return s.text[start : s.p-1], true
			}
			var str string
			if json.Unmarshal(s.b[start-1:s.p], &str) != nil {
				return "", false
			}
			return str, true
		case c == '\\':
			plain = false
			s.p++ // the escaped byte: an escaped quote does not end it
		case c < 0x20:
			return "", false
		}
		s.p++
	}
	return "", false
}

func (s *scanner) str(dst *string) bool {
	v, ok := s.rawStr()
	*dst = v
	return ok
}

// digits reads a run of digits with no leading zero (JSON's spelling).
func (s *scanner) digits() ([]byte, bool) {
	start := s.p
	for s.p < len(s.b) && s.b[s.p] >= '0' && s.b[s.p] <= '9' {
		s.p++
	}
	d := s.b[start:s.p]
	if len(d) == 0 || (len(d) > 1 && d[0] == '0') {
		return nil, false
	}
	// A fraction or an exponent makes it a number a Go integer does not
	// take as such: left to encoding/json.
	if s.p < len(s.b) && (s.b[s.p] == '.' || s.b[s.p] == 'e' || s.b[s.p] == 'E') {
		return nil, false
	}
	return d, true
}

func (s *scanner) uint(dst *uint64) bool {
	s.space()
	d, ok := s.digits()
	if !ok || len(d) > 20 {
		return false
	}
	var n uint64
	for _, c := range d {
		next := n*10 + uint64(c-'0')
		if n > (1<<64-1)/10 || next < n*10 {
			return false // overflows: encoding/json refuses it
		}
		n = next
	}
	*dst = n
	return true
}

func (s *scanner) integer(set func(int64) bool) bool {
	s.space()
	neg := s.p < len(s.b) && s.b[s.p] == '-'
	if neg {
		s.p++
	}
	d, ok := s.digits()
	if !ok || len(d) > 18 { // up to 18 digits fit an int64 either sign
		return false
	}
	var n int64
	for _, c := range d {
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return set(n)
}

func (s *scanner) boolean(dst *bool) bool {
	s.space()
	switch {
	case len(s.b)-s.p >= 4 && string(s.b[s.p:s.p+4]) == "true":
		s.p += 4
		*dst = true
	case len(s.b)-s.p >= 5 && string(s.b[s.p:s.p+5]) == "false":
		s.p += 5
		*dst = false
	default:
		return false
	}
	return true
}

// object reads an object, calling field for each key with the scanner at
// its value; a key seen twice is refused (encoding/json would merge).
func (s *scanner) object(field func(key string) bool) bool {
	if !s.take('{') {
		return false
	}
	if s.take('}') {
		return true
	}
	var seen []string
	for {
		k, ok := s.rawStr()
		if !ok || !s.take(':') {
			return false
		}
		for _, o := range seen {
			if o == k {
				return false
			}
		}
		seen = append(seen, k)
		if !field(k) {
			return false
		}
		if s.take(',') {
			continue
		}
		return s.take('}')
	}
}

// array reads an array, calling elem for each element; empty is called
// for an array with none (encoding/json makes it an empty, non-nil slice).
// A null is read as nothing: the slice stays nil, as with encoding/json.
func (s *scanner) array(elem func() bool, empty func()) bool {
	s.space()
	if len(s.b)-s.p >= 4 && string(s.b[s.p:s.p+4]) == "null" {
		s.p += 4
		return true
	}
	if !s.take('[') {
		return false
	}
	if s.take(']') {
		empty()
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.take(',') {
			continue
		}
		return s.take(']')
	}
}

func (s *scanner) reasons(dst *[]events.Reason) bool {
	return s.array(func() bool {
		var r events.Reason
		if !s.object(func(k string) bool { return reasonField(s, &r, k) }) {
			return false
		}
		*dst = append(*dst, r)
		return true
	}, func() { *dst = []events.Reason{} })
}

func reasonField(s *scanner, r *events.Reason, key string) bool {
	switch key {
	case "analyzer":
		return s.str(&r.Analyzer)
	case "rule":
		return s.str(&r.Rule)
	case "detail":
		return s.str(&r.Detail)
	case "level":
		return s.str((*string)(&r.Level))
	case "span":
		return s.array(func() bool {
			return s.integer(func(n int64) bool {
				if int64(int(n)) != n {
					return false
				}
				r.Span = append(r.Span, int(n))
				return true
			})
		}, func() { r.Span = []int{} })
	}
	return false
}

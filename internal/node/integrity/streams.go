package integrity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// The stream watch's judgements: what a node records of the streams it
// ran on (the streams file, datadir's Layout.Streams), how a stream lost
// records between two looks, and which of its settings differ from
// Vigil's. The node (internal/node, watch.go) looks, alerts and stops.

// StreamRecord is what the streams file keeps of one stream.
type StreamRecord struct {
	Created time.Time `json:"created"`
	LastSeq uint64    `json:"last_seq"`
}

// Streams is the streams file: the streams a node ran on, by name.
type Streams struct {
	Node    string                  `json:"node"`
	Updated time.Time               `json:"updated"`
	Streams map[string]StreamRecord `json:"streams"`
}

// ReadStreams reads the streams file at path; a missing file is no
// record (a node's first start).
func ReadStreams(path string) (Streams, error) {
	var st Streams
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("integrity: read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("integrity: %s is not valid (%v): it records which VIGIL_LOG this node ran on; restore it, or remove it to trust the streams as they are", path, err)
	}
	return st, nil
}

// WriteStreams replaces the streams file at path with st, atomically.
func WriteStreams(path string, st Streams) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return natsutil.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// RecordsLost says how cur lost records that prev had ("" if none).
func RecordsLost(prev, cur jetstream.StreamState) string {
	var out []string
	if cur.LastSeq < prev.LastSeq {
		out = append(out, fmt.Sprintf("its last sequence went back from %d to %d", prev.LastSeq, cur.LastSeq))
	}
	// Records are only ever appended: the first sequence stays where it
	// was, or (for a stream that was empty) at most the next one written.
	first := prev.FirstSeq
	if prev.Msgs == 0 {
		first = prev.LastSeq + 1
	}
	if cur.Msgs > 0 && cur.FirstSeq > first {
		out = append(out, fmt.Sprintf("seqs %d..%d are gone from its start (purged, or removed by a changed limit)", first, cur.FirstSeq-1))
	}
	if cur.NumDeleted > prev.NumDeleted {
		out = append(out, fmt.Sprintf("%d records were deleted from its middle", cur.NumDeleted-prev.NumDeleted))
	}
	if cur.Lost != nil && len(cur.Lost.Msgs) > 0 && (prev.Lost == nil || len(cur.Lost.Msgs) > len(prev.Lost.Msgs)) {
		out = append(out, fmt.Sprintf("the server reports %d records lost (first seq %d)", len(cur.Lost.Msgs), slices.Min(cur.Lost.Msgs)))
	}
	if len(out) == 0 && cur.LastSeq >= prev.LastSeq && cur.Msgs < prev.Msgs+(cur.LastSeq-prev.LastSeq) {
		out = append(out, fmt.Sprintf("%d records are missing", prev.Msgs+(cur.LastSeq-prev.LastSeq)-cur.Msgs))
	}
	return strings.Join(out, "; ")
}

// integrityField is one stream setting that bears on what the stream keeps.
type integrityField struct {
	name string
	get  func(*jetstream.StreamConfig) any
	set  func(dst, src *jetstream.StreamConfig)
}

func limit(v int64) int64 {
	if v <= 0 {
		return -1
	}
	return v
}

func sortedSubjects(c *jetstream.StreamConfig) any {
	s := slices.Clone(c.Subjects)
	slices.Sort(s)
	return strings.Join(s, ",")
}

func asJSON(v any) any {
	b, _ := json.Marshal(v)
	if string(b) == "null" || string(b) == "[]" {
		return ""
	}
	return string(b)
}

// integrityFields are compared with Vigil's definition and restored.
// Description, replicas, the duplicate window and placement are left to
// operators (nodes of a fleet may differ in flags).
var integrityFields = []integrityField{
	{"subjects", sortedSubjects, func(d, s *jetstream.StreamConfig) { d.Subjects = s.Subjects }},
	{"retention", func(c *jetstream.StreamConfig) any { return c.Retention }, func(d, s *jetstream.StreamConfig) { d.Retention = s.Retention }},
	{"discard", func(c *jetstream.StreamConfig) any { return c.Discard }, func(d, s *jetstream.StreamConfig) { d.Discard = s.Discard }},
	{"max_msgs", func(c *jetstream.StreamConfig) any { return limit(c.MaxMsgs) }, func(d, s *jetstream.StreamConfig) { d.MaxMsgs = s.MaxMsgs }},
	{"max_bytes", func(c *jetstream.StreamConfig) any { return limit(c.MaxBytes) }, func(d, s *jetstream.StreamConfig) { d.MaxBytes = s.MaxBytes }},
	{"max_msgs_per_subject", func(c *jetstream.StreamConfig) any { return limit(c.MaxMsgsPerSubject) }, func(d, s *jetstream.StreamConfig) { d.MaxMsgsPerSubject = s.MaxMsgsPerSubject }},
	{"max_age", func(c *jetstream.StreamConfig) any { return c.MaxAge }, func(d, s *jetstream.StreamConfig) { d.MaxAge = s.MaxAge }},
	{"storage", func(c *jetstream.StreamConfig) any { return c.Storage }, func(d, s *jetstream.StreamConfig) { d.Storage = s.Storage }},
	{"no_ack", func(c *jetstream.StreamConfig) any { return c.NoAck }, func(d, s *jetstream.StreamConfig) { d.NoAck = s.NoAck }},
	{"sealed", func(c *jetstream.StreamConfig) any { return c.Sealed }, func(d, s *jetstream.StreamConfig) { d.Sealed = s.Sealed }},
	{"deny_delete", func(c *jetstream.StreamConfig) any { return c.DenyDelete }, func(d, s *jetstream.StreamConfig) { d.DenyDelete = s.DenyDelete }},
	{"deny_purge", func(c *jetstream.StreamConfig) any { return c.DenyPurge }, func(d, s *jetstream.StreamConfig) { d.DenyPurge = s.DenyPurge }},
	{"allow_rollup_hdrs", func(c *jetstream.StreamConfig) any { return c.AllowRollup }, func(d, s *jetstream.StreamConfig) { d.AllowRollup = s.AllowRollup }},
	{"allow_msg_ttl", func(c *jetstream.StreamConfig) any { return c.AllowMsgTTL }, func(d, s *jetstream.StreamConfig) { d.AllowMsgTTL = s.AllowMsgTTL }},
	{"subject_delete_marker_ttl", func(c *jetstream.StreamConfig) any { return c.SubjectDeleteMarkerTTL }, func(d, s *jetstream.StreamConfig) { d.SubjectDeleteMarkerTTL = s.SubjectDeleteMarkerTTL }},
	{"allow_msg_counter", func(c *jetstream.StreamConfig) any { return c.AllowMsgCounter }, func(d, s *jetstream.StreamConfig) { d.AllowMsgCounter = s.AllowMsgCounter }},
	{"allow_msg_schedules", func(c *jetstream.StreamConfig) any { return c.AllowMsgSchedules }, func(d, s *jetstream.StreamConfig) { d.AllowMsgSchedules = s.AllowMsgSchedules }},
	{"persist_mode", func(c *jetstream.StreamConfig) any { return c.PersistMode }, func(d, s *jetstream.StreamConfig) { d.PersistMode = s.PersistMode }},
	{"mirror", func(c *jetstream.StreamConfig) any { return asJSON(c.Mirror) }, func(d, s *jetstream.StreamConfig) { d.Mirror = s.Mirror }},
	{"sources", func(c *jetstream.StreamConfig) any { return asJSON(c.Sources) }, func(d, s *jetstream.StreamConfig) { d.Sources = s.Sources }},
	{"subject_transform", func(c *jetstream.StreamConfig) any { return asJSON(c.SubjectTransform) }, func(d, s *jetstream.StreamConfig) { d.SubjectTransform = s.SubjectTransform }},
	{"republish", func(c *jetstream.StreamConfig) any { return asJSON(c.RePublish) }, func(d, s *jetstream.StreamConfig) { d.RePublish = s.RePublish }},
}

// ConfigDrift lists the integrity settings of got that differ from want.
func ConfigDrift(want, got jetstream.StreamConfig) []string {
	var out []string
	for _, f := range integrityFields {
		w, g := f.get(&want), f.get(&got)
		if w != g {
			out = append(out, fmt.Sprintf("%s %v (Vigil's is %v)", f.name, g, w))
		}
	}
	return out
}

// Restored is got with Vigil's integrity settings (want's) put back and
// every other setting left as it is.
func Restored(got, want jetstream.StreamConfig) jetstream.StreamConfig {
	fixed := got
	for _, f := range integrityFields {
		f.set(&fixed, &want)
	}
	return fixed
}

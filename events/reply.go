package events

// IngestReply is the JSON answer of the ingest service to a request
// (one event or a batch) on a vigil.ingest.* subject.
type IngestReply struct {
	// Results has one entry per event, in request order, once all are stored.
	Results []IngestResult `json:"results,omitempty"`
	// Error is set when the request was refused: nothing of it was
	// stored, except when the error says so (a batch one of whose ids was
	// already stored with other content).
	Error string `json:"error,omitempty"`
	// Index is the 0-based position of the event the error is about, or -1.
	Index int `json:"index,omitempty"`
}

// IngestResult is where one event of a request was stored.
type IngestResult struct {
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
	// Duplicate is true when the id was already stored (a retry).
	Duplicate bool `json:"duplicate,omitempty"`
}

// RawRecord is one message of a stream as stored, undecoded: its stream
// sequence, subject and bytes (what log readers yield before decoding).
type RawRecord struct {
	Seq     uint64
	Subject string
	Data    []byte
}

package integrity

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"time"

	"github.com/vigil-dev/vigil/processors/audit"
)

// The continuity file (Continuity.StateFile) holds what the last
// continuity check verified: the Merkle frontier of records 1..Size, whose
// root equalled the one a checkpoint signed with the node's audit key signs
// for that size. The next check reads only the records after Size, so a start
// costs what the log grew by since, not the whole history.
//
// What that leaves unchecked at start: a record up to Size that was
// damaged on disk after it was verified. JetStream's own per-record
// checksums still refuse to serve it, and `vigil audit verify` reads the
// whole log; deleting this file makes the next start read it all again.
// The file is the node's, like the store it describes: whoever can
// rewrite it can rewrite the log too.

// continuityState is the continuity file's content.
type continuityState struct {
	// LogCreated is VIGIL_LOG's creation time: a frontier of another log
	// (deleted and recreated) is ignored.
	LogCreated time.Time `json:"log_created"`
	Size       uint64    `json:"size"`
	// Frontier is the compact range's hashes (base64); Root its root
	// (base64), checked when the file is read.
	Frontier string `json:"frontier"`
	Root     string `json:"root"`
}

// loadState returns the verified frontier to start from, if the file
// holds one for this log that the newest checkpoint (of cpSize records)
// and the log's end (to) still cover.
func (c Continuity) loadState(logCreated time.Time, cpSize, to uint64) (*audit.Frontier, bool) {
	if c.StateFile == "" {
		return nil, false
	}
	b, err := os.ReadFile(c.StateFile)
	if err != nil {
		return nil, false
	}
	var st continuityState
	if json.Unmarshal(b, &st) != nil || !st.LogCreated.Equal(logCreated) || st.Size == 0 || st.Size > cpSize || st.Size > to {
		return nil, false
	}
	hashes, err := base64.StdEncoding.DecodeString(st.Frontier)
	if err != nil {
		return nil, false
	}
	f, err := audit.ParseFrontier(st.Size, hashes)
	if err != nil || f.Root().String() != st.Root {
		return nil, false
	}
	return f, true
}

// saveState records that records 1..size, whose frontier is hashes
// and root root, matched a signed checkpoint. A failure to write only
// costs the next start a full read.
func (c Continuity) saveState(logCreated time.Time, size uint64, hashes []byte, root audit.Hash) {
	if size == 0 || c.StateFile == "" {
		return
	}
	b, err := json.Marshal(continuityState{LogCreated: logCreated, Size: size,
		Frontier: base64.StdEncoding.EncodeToString(hashes), Root: root.String()})
	if err != nil {
		return
	}
	path := c.StateFile
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		c.warn(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		c.warn(err)
	}
}

func (c Continuity) warn(err error) {
	if c.Logger != nil {
		c.Logger.Warn("continuity check: cannot record what it verified; the next start reads the whole log", "err", err)
	}
}

package risk

import (
	"fmt"

	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// snapshotVersion is the version of the risk processor's snapshot.
const snapshotVersion = 4

type snapshotState struct {
	V       int                     `msgpack:"v"`
	Tracker processors.TrackerState `msgpack:"tracker"`
	Idle    processors.IdleState    `msgpack:"idle"`
	// MCP is the MCP memory: first digests, server quotas, taints (version 4).
	MCP inject.MCPMemoryState `msgpack:"mcp"`
	// Written is the files tools run from written per conversation (version 4).
	Written WrittenState `msgpack:"written"`
}

// Snapshot encodes the processor's state: the config tracker. The
// compiled scorers are a cache, rebuilt on first use after Restore.
func (p *Processor) Snapshot() ([]byte, error) {
	return processors.EncodeState(&snapshotState{V: snapshotVersion, Tracker: p.tracker.State(), Idle: p.idle.State(), MCP: p.mcp.State(), Written: p.written.State()})
}

// Restore replaces the state with a snapshot's (see processors.Snapshotter).
func (p *Processor) Restore(b []byte) error {
	var st snapshotState
	if err := processors.DecodeState(b, &st); err != nil {
		return err
	}
	if st.V != snapshotVersion {
		return fmt.Errorf("%w: risk snapshot version %d, want %d", processors.ErrSnapshot, st.V, snapshotVersion)
	}
	idle := processors.NewIdleConversations(p.idle.After())
	if err := idle.SetState(st.Idle); err != nil {
		return err
	}
	mem := inject.NewMCPMemory()
	if err := mem.SetState(st.MCP); err != nil {
		return fmt.Errorf("%w: %v", processors.ErrSnapshot, err)
	}
	written := NewWrittenFiles()
	if err := written.SetState(st.Written); err != nil {
		return fmt.Errorf("%w: %v", processors.ErrSnapshot, err)
	}
	if err := p.tracker.SetState(st.Tracker); err != nil {
		return err
	}
	p.idle = idle
	p.mcp = mem
	p.written = written
	clear(p.scorers)
	return nil
}

var _ processors.Snapshotter = (*Processor)(nil)

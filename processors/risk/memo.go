package risk

// Memo carries the assessment of the record being folded from the risk
// processor to a later processor of the same pipeline (the gate), so a
// node scores each action once. It holds one entry: the key names the log
// record, the config in force and the environment, and a lookup that does
// not match all three misses, and the caller scores for itself. A Memo
// belongs to one pipeline; it holds no state that outlives a record.
type Memo struct {
	key MemoKey
	a   Assessment
	ok  bool
}

// MemoKey identifies an assessment: the action's log sequence, the log
// sequence of the config event in force (0 for the default or a what-if
// override), and the environment it was scored in.
type MemoKey struct {
	Seq       uint64
	ConfigSeq uint64
	Env       Env
}

// Put records the assessment of the record at k.
func (m *Memo) Put(k MemoKey, a Assessment) {
	if m == nil {
		return
	}
	m.key, m.a, m.ok = k, a, true
}

// Get returns the assessment recorded for exactly k.
func (m *Memo) Get(k MemoKey) (Assessment, bool) {
	if m == nil || !m.ok || m.key != k {
		return Assessment{}, false
	}
	return m.a, true
}

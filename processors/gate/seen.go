package gate

// seenIDs is a filter of the hashes (idHash) of every id the gate has
// had waiting or decided: a superset of the ids in pending, decided and
// gone, with a few false positives (a byte or more an id). A clear bit
// means usedAt has nothing to look up: nearly every new action's id. It
// is derived from those three, built again on the first lookup after a
// restore, and never in a snapshot.
type seenIDs struct {
	bits []uint64 // nil: to be built
	n    int      // ids added since it was built, with those it was built with
}

// has reports whether h may be among the ids (false: it is not).
func (s *seenIDs) has(h uint64) bool {
	w, b := filterBit(h, len(s.bits))
	return s.bits[w]&b != 0
}

// add adds h, and reports whether the filter is now too full for its
// size (the caller builds it again, larger).
func (s *seenIDs) add(h uint64) (full bool) {
	w, b := filterBit(h, len(s.bits))
	s.bits[w] |= b
	s.n++
	return s.n*8 > len(s.bits)*64
}

// seenFilter returns the gate's filter of ids seen, building it when it
// is not built (after New or Restore) or too full: sized for twice the
// ids it holds, at least 8 bits an id.
func (p *Processor) seenFilter() *seenIDs {
	s := &p.seen
	if s.bits != nil && s.n*8 <= len(s.bits)*64 {
		return s
	}
	n := len(p.pending) + len(p.decided) + len(p.gone.sorted)/2 + len(p.gone.recent)
	words := 1024
	for words*64 < 16*n {
		words *= 2
	}
	*s = seenIDs{bits: make([]uint64, words), n: n}
	set := func(h uint64) {
		w, b := filterBit(h, words)
		s.bits[w] |= b
	}
	for id := range p.pending {
		set(idHash(id))
	}
	for _, o := range p.order[p.head:] { // every decided id is in order
		h := o.hash
		if h == 0 {
			h = idHash(o.id)
		}
		set(h)
	}
	for i := 0; i < len(p.gone.sorted); i += 2 {
		set(p.gone.sorted[i])
	}
	for h := range p.gone.recent {
		set(h)
	}
	return s
}

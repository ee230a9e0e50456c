package projections

import (
	"encoding/binary"
	"hash/crc32"
)

// Key layout. Every projection owns one prefix (see projection.prefix);
// meta keys sit under "m/". Sequences are 8-byte big-endian so keys sort in
// log order. Conversation tokens and ids never contain a NUL byte, which
// separates a variable-length part from what follows.
//
//	m/format                 formatVersion
//	m/position               seq(8) | crc32c(positionSalt | seq)(4)
//	m/log                    the log identity the store was built from
//	m/rebuilding             names of projections being rebuilt (absent when none)
//	e/s/<seq>                uvarint(len subject) | subject | raw event (msgpack)
//	e/i/<event id>\x00<seq>   (empty); the first is the event's position
//	e/c/<conv>\x00<seq>      (empty)
//	r/<action id>            storedOutput of the risk.assessed output
//	g/p/<action id>          storedOutput of gate.requested, while pending
//	g/d/<action id>          storedOutput of gate.decided
//	a/e/<entry id>           AllowEntry (msgpack)
//	p/<platform>\x00<user>   Pairing (msgpack)
//	c/g                      ConfigState of the global config
//	c/c/<conv>               ConfigState of a conversation-scoped config
//	t/i/<token id>           Token (msgpack)
//	t/h/sha256:<hex>         token id while in force; empty once revoked
//	s/<conv>                 Stats of a conversation ("_" for global events)
//	s\x00                    Stats of the whole log
const (
	formatVersion = "vigil-projections/1"
	positionSalt  = "vigil-projections position\x00"
)

var (
	keyFormat     = []byte("m/format")
	keyPosition   = []byte("m/position")
	keyLog        = []byte("m/log")
	keyRebuilding = []byte("m/rebuilding")
	keyTotals     = []byte("s\x00")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func seqBytes(seq uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	return b[:]
}

func key(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func eventKey(seq uint64) []byte { return append([]byte("e/s/"), seqBytes(seq)...) }

func idKey(id string, seq uint64) []byte {
	return append(key("e/i/", id, "\x00"), seqBytes(seq)...)
}

func convKey(conv string, seq uint64) []byte {
	return append(key("e/c/", conv, "\x00"), seqBytes(seq)...)
}

func encodePosition(seq uint64) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint64(b, seq)
	binary.BigEndian.PutUint32(b[8:], positionChecksum(seq))
	return b
}

func positionChecksum(seq uint64) uint32 {
	c := crc32.Update(0, castagnoli, []byte(positionSalt))
	return crc32.Update(c, castagnoli, seqBytes(seq))
}

// decodePosition returns the sequence and whether the record is intact.
func decodePosition(b []byte) (uint64, bool) {
	if len(b) != 12 {
		return 0, false
	}
	seq := binary.BigEndian.Uint64(b)
	return seq, binary.BigEndian.Uint32(b[8:]) == positionChecksum(seq)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

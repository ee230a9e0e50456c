package inject

import "sync"

// Per-sentence trigger test. The phrase rules run an expression on a
// sentence only when one of its trigger words occurs there; testing each
// list with substring searches costs ~200 searches per sentence. Instead,
// each trigger is indexed by the first letters of its first word, and one
// pass over a sentence's words says which lists may match; only those are
// searched. Like gateAny, this reads a trigger as the start of a word.

const (
	tOverride = iota
	tOverrideNoun
	tForget
	tFollow
	tPriority
	tRole
	tRoleTag
	tBypass
	tSecrecy
	tSecrecyAdv
	tNeg
	tIntent
	tDeceive
	tCodeIns
	tResponse
	tPersist
	tDestroy
	tDestroyObj
)

type trigIndex struct {
	byPrefix map[string]uint32
	always   uint32 // lists with a trigger that starts with no letter
}

var trigIdx = sync.OnceValue(func() *trigIndex {
	lists := [...][]string{
		tOverride: trigOverride, tOverrideNoun: trigOverrideNoun, tForget: trigForget, tFollow: trigFollow,
		tPriority: trigPriority, tRole: trigRole, tRoleTag: trigRoleTag, tBypass: trigBypass, tSecrecy: trigSecrecy,
		tSecrecyAdv: trigSecrecyAdv, tNeg: trigNeg, tIntent: trigIntent, tDeceive: trigDeceive, tCodeIns: trigCodeIns,
		tResponse: trigResponse, tPersist: trigPersist, tDestroy: trigDestroy, tDestroyObj: trigDestroyObj,
	}
	x := &trigIndex{byPrefix: map[string]uint32{}}
	for bit, list := range lists {
		for _, t := range list {
			i := 0
			for i < len(t) && t[i] == ' ' {
				i++
			}
			j := i
			for j < len(t) && t[j] >= 'a' && t[j] <= 'z' {
				j++
			}
			if j == i {
				x.always |= 1 << bit
				continue
			}
			w := t[i:j]
			if len(w) > 5 {
				w = w[:5]
			}
			x.byPrefix[w] |= 1 << bit
		}
	}
	return x
})

// sentenceTrig returns the lists (bit per list) that may match lt.
func sentenceTrig(lt string) uint32 {
	x := trigIdx()
	bits := x.always
	start := -1
	for i := 0; i <= len(lt); i++ {
		in := i < len(lt) && lt[i] >= 'a' && lt[i] <= 'z'
		if in && start < 0 {
			start = i
		} else if !in && start >= 0 {
			w := lt[start:i]
			for l := 1; l <= len(w) && l <= 5; l++ {
				bits |= x.byPrefix[w[:l]]
			}
			start = -1
		}
	}
	return bits
}

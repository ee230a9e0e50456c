package events

// fastEvent decodes a current-version event (v ≥ 1) straight into an
// Event: the envelope's fields into their places, with no map of the top
// level as fromMap reads, and the commonest kinds without a copy of their
// name. It runs on any body (every length it reads is checked against the
// bytes left, and nesting stops at MaxDepth), accepts only bodies
// checkMsgpack accepts, and reports false,
// for the caller to take the general path (fastValue, fromMap) to the
// same event or to its error, on anything else: a body fastValue would
// not read, a version below 1 (upcast), a field fromMap would refuse.
func fastEvent(b []byte) (Event, bool) {
	p := 0
	if len(b) == 0 {
		return Event{}, false
	}
	var n int
	switch c := b[0]; {
	case c >= 0x80 && c <= 0x8f:
		n, p = int(c&0x0f), 1
	case c == 0xde || c == 0xdf:
		p = 1
		u, ok := fastUint(b, &p, 2<<(c-0xde))
		if !ok {
			return Event{}, false
		}
		n = int(u)
	default:
		return Event{}, false
	}
	if n < 0 || 2*n > len(b)-p {
		return Event{}, false
	}
	// The envelope's values, by key (the last of a repeated key wins, as
	// in a map), and which of them are present.
	const (
		fV = iota
		fID
		fKind
		fConv
		fAgent
		fOrigin
		fTime
		fData
		fRedactions
		nFields
	)
	var vals [nFields]any
	var strs [nFields]string // the string fields' values, never boxed
	var present [nFields]bool
	var extra map[string]any
	for range n {
		k, ok := fastKey(b, "", &p)
		if !ok {
			return Event{}, false
		}
		f, isStr := -1, true
		switch k {
		case "v":
			f, isStr = fV, false
		case "id":
			f = fID
		case "kind":
			f = fKind
			if kn, ok := knownKind(b, &p); ok {
				strs[f], present[f] = kn, true
				continue
			}
		case "conversation":
			f = fConv
		case "agent":
			f = fAgent
		case "origin":
			f = fOrigin
		case "time":
			f = fTime
		case "data":
			f, isStr = fData, false
		case "redactions":
			f, isStr = fRedactions, false
		}
		if f >= 0 && isStr {
			// fromMap refuses anything but a string here: the general
			// path says so.
			if strs[f], ok = fastStr(b, &p); !ok {
				return Event{}, false
			}
			present[f] = true
			continue
		}
		val, ok := fastValue(b, "", &p, 1)
		if !ok {
			return Event{}, false
		}
		if f < 0 {
			if extra == nil {
				extra = map[string]any{}
			}
			extra[k] = val
			continue
		}
		vals[f], present[f] = val, true
	}
	if p != len(b) || !present[fV] {
		return Event{}, false
	}
	// As fromMap, for a version upcast leaves as it is.
	ver, ok := vals[fV].(int64)
	if !ok || ver < 1 || ver > maxVersion {
		return Event{}, false
	}
	ev := Event{V: int(ver), Extra: extra, ID: strs[fID], Kind: Kind(strs[fKind]),
		Conversation: strs[fConv], Agent: strs[fAgent], Origin: Origin(strs[fOrigin])}
	t := strs[fTime]
	if t != "" {
		tm, err := parseTime(t)
		if y := tm.UTC().Year(); err != nil || y < 0 || y > 9999 {
			return Event{}, false
		}
		ev.Time = tm.UTC()
	}
	if !present[fData] {
		ev.Data = map[string]any{}
	} else if ev.Data, ok = vals[fData].(map[string]any); !ok {
		return Event{}, false
	}
	if present[fRedactions] {
		list, ok := vals[fRedactions].([]any)
		if !ok {
			return Event{}, false
		}
		for _, r := range list {
			rm, ok := r.(map[string]any)
			if !ok {
				return Event{}, false
			}
			rule, ok1 := optString(rm, "rule")
			path, ok2 := optString(rm, "path")
			start, ok3 := optOffset(rm, "start")
			end, ok4 := optOffset(rm, "end")
			if !ok1 || !ok2 || !ok3 || !ok4 {
				return Event{}, false
			}
			ev.Redactions = append(ev.Redactions, Redaction{Rule: rule, Path: path, Start: start, End: end})
		}
	}
	return ev, true
}

// fastStr reads a str or bin value (which normalises to a string) as
// fastString does, without boxing it; anything else reports false.
func fastStr(b []byte, p *int) (string, bool) {
	if *p >= len(b) {
		return "", false
	}
	c := b[*p]
	*p++
	var n uint64
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xc4 || c == 0xd9:
		u, ok := fastUint(b, p, 1)
		if !ok {
			return "", false
		}
		n = u
	case c == 0xc5 || c == 0xda:
		u, ok := fastUint(b, p, 2)
		if !ok {
			return "", false
		}
		n = u
	case c == 0xc6 || c == 0xdb:
		u, ok := fastUint(b, p, 4)
		if !ok {
			return "", false
		}
		n = u
	default:
		return "", false
	}
	if n > uint64(len(b)-*p) {
		return "", false
	}
	str := validUTF8(bodyString(b, "", *p, int(n)))
	*p += int(n)
	return str, true
}

// knownKind reads, at b[*p:], a fixstr that is one of the commonest kinds
// and returns the kind's constant (no copy of the name); anything else
// leaves *p as it was and reports false.
func knownKind(b []byte, p *int) (string, bool) {
	if *p >= len(b) || b[*p] < 0xa0 || b[*p] > 0xbf {
		return "", false
	}
	n := int(b[*p] & 0x1f)
	if len(b)-*p-1 < n {
		return "", false
	}
	var k Kind
	switch string(b[*p+1 : *p+1+n]) {
	case string(KindAction):
		k = KindAction
	case string(KindObservation):
		k = KindObservation
	case string(KindMessage):
		k = KindMessage
	case string(KindContextLoaded):
		k = KindContextLoaded
	case string(KindConversationStarted):
		k = KindConversationStarted
	case string(KindApprovalDecision):
		k = KindApprovalDecision
	case string(KindApprovalExpired):
		k = KindApprovalExpired
	case string(KindConfig):
		k = KindConfig
	default:
		return "", false
	}
	*p += 1 + n
	return string(k), true
}

package events

import (
	"encoding/binary"
	"fmt"
)

// checkMsgpack walks the structure of a msgpack body without building any
// value, and refuses it unless it is exactly one well-formed value whose
// containers are nested at most maxDepth+1 deep and whose map keys are
// strings. maxDepth counts the top-level container as level 0, as
// normalize does.
//
// It runs before the msgpack library sees the body, because the library
// preallocates arrays and maps from the length in their header: a 5-byte
// body declaring 2^32 elements would otherwise make it allocate tens of
// gigabytes and kill the process with an unrecoverable out-of-memory error.
// Here every declared length is checked against the bytes that remain (an
// element takes at least one byte), so allocation stays proportional to the
// body. The walk is iterative, so a deeply nested body cannot exhaust the
// stack either.
func checkMsgpack(b []byte, maxDepth int) error {
	type frame struct {
		left  uint64 // items still to read in this container
		isMap bool   // items alternate key, value
		read  uint64 // items read so far
	}
	stack := make([]frame, 0, 8)
	p := 0
	need := func(n uint64) error {
		if uint64(len(b)-p) < n {
			return fmt.Errorf("truncated body at byte %d", p)
		}
		return nil
	}
	uintN := func(n int) (uint64, error) {
		if err := need(uint64(n)); err != nil {
			return 0, err
		}
		var v uint64
		switch n {
		case 1:
			v = uint64(b[p])
		case 2:
			v = uint64(binary.BigEndian.Uint16(b[p:]))
		case 4:
			v = uint64(binary.BigEndian.Uint32(b[p:]))
		}
		p += n
		return v, nil
	}
	skip := func(n uint64) error {
		if err := need(n); err != nil {
			return err
		}
		p += int(n)
		return nil
	}
	open := func(n uint64, isMap bool) error {
		items := n
		if isMap {
			items = 2 * n
		}
		// Every item takes at least one byte: a header claiming more items
		// than bytes left is a lie, refused before anything is allocated.
		if items > uint64(len(b)-p) {
			return fmt.Errorf("container at byte %d declares %d items but only %d bytes follow", p, items, len(b)-p)
		}
		if len(stack) > maxDepth {
			return fmt.Errorf("nested deeper than %d levels", MaxDepth)
		}
		if items > 0 {
			stack = append(stack, frame{left: items, isMap: isMap})
		}
		return nil
	}
	for first := true; ; first = false {
		// A frame stays on the stack until its last item is fully read, so
		// len(stack) is the true nesting depth.
		for len(stack) > 0 && stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
		if !first && len(stack) == 0 {
			break
		}
		if p >= len(b) {
			return fmt.Errorf("truncated body at byte %d", p)
		}
		isKey := false
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			isKey = top.isMap && top.read%2 == 0
			top.read++
			top.left--
		}
		c := b[p]
		p++
		if isKey && !(c >= 0xa0 && c <= 0xbf) && c != 0xd9 && c != 0xda && c != 0xdb && c != 0xc4 && c != 0xc5 && c != 0xc6 {
			return fmt.Errorf("map key at byte %d is not a string", p-1)
		}
		var err error
		switch {
		case c <= 0x7f, c >= 0xe0: // fixint
		case c >= 0x80 && c <= 0x8f:
			err = open(uint64(c&0x0f), true)
		case c >= 0x90 && c <= 0x9f:
			err = open(uint64(c&0x0f), false)
		case c >= 0xa0 && c <= 0xbf:
			err = skip(uint64(c & 0x1f))
		default:
			switch c {
			case 0xc0, 0xc2, 0xc3: // nil, false, true
			case 0xc4, 0xd9: // bin8, str8
				var n uint64
				if n, err = uintN(1); err == nil {
					err = skip(n)
				}
			case 0xc5, 0xda: // bin16, str16
				var n uint64
				if n, err = uintN(2); err == nil {
					err = skip(n)
				}
			case 0xc6, 0xdb: // bin32, str32
				var n uint64
				if n, err = uintN(4); err == nil {
					err = skip(n)
				}
			case 0xca: // float32
				err = skip(4)
			case 0xcb: // float64
				err = skip(8)
			case 0xcc, 0xd0:
				err = skip(1)
			case 0xcd, 0xd1:
				err = skip(2)
			case 0xce, 0xd2:
				err = skip(4)
			case 0xcf, 0xd3:
				err = skip(8)
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
				err = checkExt(b, &p, uint64(1)<<(c-0xd4))
			case 0xc7, 0xc8, 0xc9: // ext 8, 16, 32
				var n uint64
				if n, err = uintN(1 << (c - 0xc7)); err == nil {
					err = checkExt(b, &p, n)
				}
			case 0xdc:
				var n uint64
				if n, err = uintN(2); err == nil {
					err = open(n, false)
				}
			case 0xdd:
				var n uint64
				if n, err = uintN(4); err == nil {
					err = open(n, false)
				}
			case 0xde:
				var n uint64
				if n, err = uintN(2); err == nil {
					err = open(n, true)
				}
			case 0xdf:
				var n uint64
				if n, err = uintN(4); err == nil {
					err = open(n, true)
				}
			default: // 0xc1 is never used
				err = fmt.Errorf("invalid msgpack code 0x%02x at byte %d", c, p-1)
			}
		}
		if err != nil {
			return err
		}
	}
	if p != len(b) {
		return fmt.Errorf("trailing data after the event (%d bytes)", len(b)-p)
	}
	return nil
}

// checkExt accepts only the msgpack timestamp extension (type -1, 4, 8 or
// 12 bytes): no other extension has a meaning in an event.
func checkExt(b []byte, p *int, n uint64) error {
	if *p >= len(b) {
		return fmt.Errorf("truncated body at byte %d", *p)
	}
	typ := int8(b[*p])
	*p++
	if typ != -1 || (n != 4 && n != 8 && n != 12) {
		return fmt.Errorf("unsupported msgpack extension type %d (length %d) at byte %d", typ, n, *p-2)
	}
	if uint64(len(b)-*p) < n {
		return fmt.Errorf("truncated body at byte %d", *p)
	}
	*p += int(n)
	return nil
}

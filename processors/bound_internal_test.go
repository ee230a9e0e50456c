package processors

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// fill sets every field of the struct v points to: strings to n bytes,
// numbers to their largest value, reason lists to reasons reasons filled
// the same way with strings of rn bytes.
func fill(v reflect.Value, n, reasons, rn int) {
	v = v.Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(strings.Repeat("s", n))
		case reflect.Int, reflect.Int64:
			f.SetInt(math.MaxInt64)
		case reflect.Uint64:
			f.SetUint(math.MaxUint64)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			switch f.Type().Elem() {
			case reflect.TypeFor[events.Reason]():
				rs := make([]events.Reason, reasons)
				for j := range rs {
					fill(reflect.ValueOf(&rs[j]), rn, 0, 0)
				}
				f.Set(reflect.ValueOf(rs))
			case reflect.TypeFor[int]():
				f.Set(reflect.ValueOf([]int{math.MaxInt, math.MaxInt}))
			}
		}
	}
}

// TestWalkBounds checks the walk on the types processors emit on every
// action: its size is an upper bound of the encoding (so an output it
// lets through fits), and it sees every string field and reason list.
func TestWalkBounds(t *testing.T) {
	l := DefaultLimits()
	bd := NewBounder(l)
	for _, typ := range []reflect.Type{reflect.TypeFor[events.RiskAssessed](), reflect.TypeFor[events.GateRequested](),
		reflect.TypeFor[events.GateDecided](), reflect.TypeFor[events.Alert](), reflect.TypeFor[events.Stats](),
		reflect.TypeFor[events.AuditCheckpoint]()} {
		t.Run(typ.Name(), func(t *testing.T) {
			// Everything at its limit: nothing changes and the size is a bound.
			p := reflect.New(typ)
			fill(p, l.String, l.Reasons, l.ReasonString)
			for _, data := range []any{p.Elem().Interface(), p.Interface()} {
				w := &walker{bd: bd}
				if _, ch := w.walk(reflect.ValueOf(data), l.String, 0); ch || w.opaque {
					t.Fatalf("a %T within the limits changed (%v) or is opaque (%v)", data, ch, w.opaque)
				}
				d := events.Derived{V: 1, ID: "x:1", Kind: events.KindAlert, Seq: 1, Time: "2026-11-22T10:00:00Z", Data: data}
				b, err := d.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if envelope := 96 + len(d.ID) + len(d.Kind) + len(d.Time); w.size+envelope < len(b) {
					t.Fatalf("the walk says %d bytes, the output is %d", w.size+envelope, len(b))
				}
			}
			// Each string one byte too long, and one reason too many, is seen.
			for i := range typ.NumField() {
				f := typ.Field(i)
				p := reflect.New(typ)
				fill(p, 1, 1, 1)
				fv := p.Elem().Field(i)
				switch {
				case f.Type.Kind() == reflect.String:
					fv.SetString(strings.Repeat("s", l.String+1))
				case f.Type == reflect.TypeFor[[]events.Reason]():
					for j := range reflect.TypeFor[events.Reason]().NumField() {
						r := fv.Index(0).Interface().(events.Reason)
						if rf := reflect.ValueOf(&r).Elem().Field(j); rf.Kind() == reflect.String {
							rf.SetString(strings.Repeat("s", l.ReasonString+1))
							fv.Index(0).Set(reflect.ValueOf(r))
							w := &walker{bd: bd}
							if _, ch := w.walk(p.Elem(), l.String, 0); !ch {
								t.Fatalf("the walk misses a long reason %s", reflect.TypeFor[events.Reason]().Field(j).Name)
							}
						}
					}
					fv.Set(reflect.ValueOf(make([]events.Reason, l.Reasons+1)))
				default:
					continue
				}
				w := &walker{bd: bd}
				if _, ch := w.walk(p.Elem(), l.String, 0); !ch {
					t.Fatalf("the walk misses a long %s", f.Name)
				}
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s   string
		max int
	}{{strings.Repeat("a", 100), 64}, {strings.Repeat("€", 100), 64}, {strings.Repeat("a", 65), 64}, {"short", 64}} {
		got := truncate(tc.s, tc.max)
		if len(tc.s) <= tc.max {
			if got != tc.s {
				t.Fatalf("%q changed", tc.s)
			}
			continue
		}
		if len(got) > tc.max || !strings.Contains(got, "bytes omitted]") {
			t.Fatalf("truncate(%d bytes, %d) = %q", len(tc.s), tc.max, got)
		}
	}
}

// TestQuickSizeIsTheWalk: for the types quickSize reads, it agrees with
// the walk (the same size, and true exactly when the walk changes
// nothing), at the limits, below them and one byte or reason over each.
func TestQuickSizeIsTheWalk(t *testing.T) {
	l := DefaultLimits()
	bd := NewBounder(l)
	for _, typ := range []reflect.Type{reflect.TypeFor[events.RiskAssessed](), reflect.TypeFor[events.GateRequested](),
		reflect.TypeFor[events.GateDecided]()} {
		t.Run(typ.Name(), func(t *testing.T) {
			var cases []reflect.Value
			for _, f := range [][3]int{{l.String, l.Reasons, l.ReasonString}, {3, 2, 7}, {0, 0, 0}} {
				p := reflect.New(typ)
				fill(p, f[0], f[1], f[2])
				cases = append(cases, p)
			}
			cases = append(cases, reflect.New(typ)) // zero: nil reasons
			for i := range typ.NumField() {
				f := typ.Field(i)
				p := reflect.New(typ)
				fill(p, 1, 1, 1)
				fv := p.Elem().Field(i)
				switch {
				case f.Type.Kind() == reflect.String:
					fv.SetString(strings.Repeat("s", l.String+1))
				case f.Type == reflect.TypeFor[[]events.Reason]():
					for j := range reflect.TypeFor[events.Reason]().NumField() {
						q := reflect.New(typ)
						fill(q, 1, 2, 1)
						r := q.Elem().Field(i).Index(1)
						if rf := r.Field(j); rf.Kind() == reflect.String {
							rf.SetString(strings.Repeat("s", l.ReasonString+1))
							cases = append(cases, q)
						}
					}
					fv.Set(reflect.ValueOf(make([]events.Reason, l.Reasons+1)))
				default:
					continue
				}
				cases = append(cases, p)
			}
			for n, p := range cases {
				data := p.Elem().Interface()
				w := &walker{bd: bd}
				_, ch := w.walk(reflect.ValueOf(data), l.String, 0)
				size, ok := bd.quickSize(data, l.String)
				if ok != (!ch && !w.opaque) || (ok && size != w.size) {
					t.Fatalf("case %d: quickSize %d, %v; the walk %d, changed %v, opaque %v", n, size, ok, w.size, ch, w.opaque)
				}
			}
			if _, ok := bd.quickSize(reflect.New(typ).Interface(), l.String); ok {
				t.Fatal("quickSize reads a pointer")
			}
		})
	}
}

package risk

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
)

// fill sets every field reachable from v to a non-zero value, slices to
// one element each, so a field added to Assessment later is covered.
func fill(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Array:
		for i := range v.Len() {
			fill(t, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i))
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0))
	default:
		t.Fatalf("Clone's test does not know how to fill a %s: teach it, and Clone", v.Type())
	}
}

// shared reports the path of a slice of b that shares its first element with a.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Index(0).Addr().Pointer() == b.Index(0).Addr().Pointer() {
			return path
		}
		for i := range min(a.Len(), b.Len()) {
			if p := shared(a.Index(i), b.Index(i), path+"[i]"); p != "" {
				return p
			}
		}
	}
	return ""
}

func TestAssessmentCloneSharesNothing(t *testing.T) {
	var a Assessment
	fill(t, reflect.ValueOf(&a).Elem())
	c := a.Clone()
	if !reflect.DeepEqual(a, c) {
		t.Fatalf("clone differs:\n%+v\n%+v", a, c)
	}
	if p := shared(reflect.ValueOf(a), reflect.ValueOf(c), "Assessment"); p != "" {
		t.Fatalf("the clone shares %s with the original", p)
	}
	if c := (Assessment{}).Clone(); c.Reasons != nil || c.View.Commands != nil {
		t.Fatalf("a nil slice cloned to a non-nil one: %+v", c)
	}
}

// TestScoreIgnoresIDAndTime: an action's assessment does not depend on
// its event's ID or Time (replay's scoring memo hands one action's
// assessment to its repeats under other ids and times), over the shell
// corpus, as bash actions with and without the agent's hint.
func TestScoreIgnoresIDAndTime(t *testing.T) {
	s, err := NewScorer(events.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Workspace: "/w", Backend: "local", Conversation: "c", Agent: "coder"}
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	n := 0
	for i, l := range readCases(t, "shell_cases.txt") {
		data := map[string]any{"tool": "bash", "args": map[string]any{"command": decodeCase(l)}}
		if i%2 == 0 {
			data["security_risk"] = "HIGH"
		}
		a := events.Event{V: 1, ID: "a-1", Kind: events.KindAction, Conversation: "c", Agent: "coder", Time: t0, Data: data}
		b := a
		b.ID, b.Time = fmt.Sprintf("b-%d", i), t0.Add(time.Duration(i+1)*time.Hour)
		if x, y := s.ScoreAction(&a, env), s.ScoreAction(&b, env); !reflect.DeepEqual(x, y) {
			t.Fatalf("%q scores differently under another id and time:\n%+v\n%+v", l, x, y)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d cases", n)
	}
}

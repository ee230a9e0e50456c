package events

import (
	"slices"
	"testing"
)

func TestKindsPartition(t *testing.T) {
	t.Parallel()
	all := AllKinds()
	if len(slices.Compact(slices.Sorted(slices.Values(all)))) != len(all) {
		t.Fatalf("AllKinds has duplicates: %q", all)
	}
	for _, k := range all {
		n := 0
		for _, in := range []bool{k.IsAgent(), k.IsControl(), k.IsDerived()} {
			if in {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is in %d of agent/control/derived, want exactly 1", k, n)
		}
		if !k.IsKnown() {
			t.Errorf("%s is not known", k)
		}
		if k.Loggable() == k.IsDerived() {
			t.Errorf("%s: Loggable() = %v, IsDerived() = %v; derived kinds, and only they, are never appended", k, k.Loggable(), k.IsDerived())
		}
	}
	// Agent kinds come first, and the order is stable.
	seenNonAgent := false
	for _, k := range all {
		if !k.IsAgent() {
			seenNonAgent = true
		} else if seenNonAgent {
			t.Errorf("agent kind %s after a non-agent kind in AllKinds", k)
		}
	}
	for _, k := range []Kind{"", "ActionEvent", "Action", "action ", "pairing.*"} {
		if k.IsKnown() || k.Loggable() {
			t.Errorf("%q is known", k)
		}
	}
}

// Every kind has data rules (Validate) and a typed view (the tests' maps).
func TestEveryKindHasRulesAndAView(t *testing.T) {
	t.Parallel()
	for _, k := range AllKinds() {
		if _, ok := dataShapes()[k]; !ok {
			t.Errorf("%s has no data rules in dataShapes", k)
		}
		_, ev := eventViews[k]
		_, der := derivedViews[k]
		if ev == der || der != k.IsDerived() {
			t.Errorf("%s: typed view for events %v, for derived %v", k, ev, der)
		}
	}
}

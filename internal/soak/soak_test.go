package soak

import "testing"

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		val  string
		want bool
	}{{"1", true}, {"", false}, {"0", false}, {"true", false}} {
		t.Setenv(Env, tc.val)
		if got := Enabled(); got != tc.want {
			t.Errorf("%s=%q: Enabled = %v, want %v", Env, tc.val, got, tc.want)
		}
	}
}

func TestRequire(t *testing.T) {
	t.Setenv(Env, "")
	var skipped bool
	t.Run("off", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Require(t, "test")
	})
	if !skipped {
		t.Fatal("Require did not skip with soaks off")
	}
	t.Setenv(Env, "1")
	t.Run("on", func(t *testing.T) {
		Require(t, "test")
		if t.Skipped() {
			t.Fatal("skipped with soaks on")
		}
	})
}

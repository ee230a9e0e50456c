package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestBoundContentSmallIsUntouched(t *testing.T) {
	in := map[string]any{"stdout": "ok\n", "stderr": "", "interrupted": false}
	out, _, cut := boundContent(in, 1024)
	if cut {
		t.Fatalf("cut a small output: %v", out)
	}
}

// lines builds n distinct lines, each one token-like word.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%08d-abcdefghijklmnopqrstuvwxyz0123456789\n", prefix, i)
	}
	return b.String()
}

func TestBoundContentKeepsStartAndEndWithAMarker(t *testing.T) {
	stdout := lines("line", 100_000) // ~5 MB
	in := map[string]any{"stdout": stdout, "stderr": "warning: something\n", "interrupted": false}
	const max = 64 << 10
	out, tr, cut := boundContent(in, max)
	if !cut {
		t.Fatal("not cut")
	}
	m := out.(map[string]any)
	if m["stderr"] != "warning: something\n" || m["interrupted"] != false {
		t.Fatalf("the small fields changed: %v %v", m["stderr"], m["interrupted"])
	}
	got := m["stdout"].(string)
	sum := sha256.Sum256([]byte(stdout))
	marker := fmt.Sprintf("%s%d bytes, sha256:%s; kept the first ", TruncatedMarker, len(stdout), hex.EncodeToString(sum[:]))
	i := strings.Index(got, "\n"+marker)
	if i < 0 {
		t.Fatalf("no marker naming the size and digest in %q…", got[:200])
	}
	head, rest, _ := strings.Cut(got, "\n"+TruncatedMarker)
	_, tail, _ := strings.Cut(rest, "]\n")
	if !strings.HasPrefix(stdout, head) || !strings.HasSuffix(stdout, tail) || len(head) == 0 || len(tail) == 0 {
		t.Fatalf("head (%d bytes) or tail (%d bytes) is not the output's", len(head), len(tail))
	}
	if !strings.HasSuffix(head, "\n") || !strings.HasPrefix(tail, "line") {
		t.Fatalf("cuts are not at line boundaries: …%q | %q…", head[len(head)-20:], tail[:20])
	}
	if len(head)+len(tail) > max || len(head)+len(tail) < max/2 {
		t.Fatalf("kept %d bytes for a limit of %d", len(head)+len(tail), max)
	}
	whole, _ := json.Marshal(in)
	ws := sha256.Sum256(whole)
	if tr.OriginalBytes != len(whole) || tr.SHA256 != "sha256:"+hex.EncodeToString(ws[:]) || tr.KeptBytes != len(head)+len(tail)+len("warning: something\n") {
		t.Fatalf("truncation = %+v (whole %d bytes, kept %d)", tr, len(whole), len(head)+len(tail))
	}
}

// TestBoundContentNeverSplitsAToken: with no line break near the cut, the
// cut falls between tokens, so a secret is kept whole or not at all.
func TestBoundContentNeverSplitsAToken(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	s := strings.Repeat(key+" ", 300_000)
	out, _, _ := boundContent(s, 10_000)
	got := out.(string)
	head, rest, _ := strings.Cut(got, "\n"+TruncatedMarker)
	_, tail, _ := strings.Cut(rest, "]\n")
	for _, part := range []string{head, tail} {
		for _, w := range strings.Fields(part) {
			if w != key {
				t.Fatalf("a token was split: %q", w)
			}
		}
	}
}

// TestBoundContentNoHeadlessPEM: the end never starts inside a private
// key's body whose BEGIN line was cut.
func TestBoundContentNoHeadlessPEM(t *testing.T) {
	body := strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n", 2000)
	s := lines("a", 50_000) + "-----BEGIN PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----\n" + "done\n"
	out, _, _ := boundContent(s, 32<<10)
	got := out.(string)
	_, rest, _ := strings.Cut(got, "\n"+TruncatedMarker)
	_, tail, _ := strings.Cut(rest, "]\n")
	if strings.Contains(tail, "MIIEvQIBADAN") || tail != "done\n" {
		t.Fatalf("the end holds a headless key body: %q", tail[:min(len(tail), 200)])
	}
}

func TestBoundContentManySmallStrings(t *testing.T) {
	arr := make([]any, 200_000)
	for i := range arr {
		arr[i] = fmt.Sprintf("f%d.go", i)
	}
	out, tr, cut := boundContent(map[string]any{"files": arr}, 16<<10)
	s, ok := out.(string)
	if !cut || !ok || !strings.Contains(s, TruncatedMarker) || len(s) > 32<<10 || tr.OriginalBytes < 1<<20 {
		t.Fatalf("cut %v, %T of %d bytes, %+v", cut, out, len(fmt.Sprint(out)), tr)
	}
}

func TestFillLimit(t *testing.T) {
	for _, tc := range []struct {
		lens     []int
		max, out int
	}{
		{[]int{10, 20}, 100, 100},
		{[]int{10, 1000}, 100, 90},
		{[]int{1000, 1000}, 100, 50},
		{[]int{5, 5, 5, 1000}, 100, 85},
	} {
		if got := fillLimit(tc.lens, tc.max); got != tc.out {
			t.Errorf("fillLimit(%v, %d) = %d, want %d", tc.lens, tc.max, got, tc.out)
		}
	}
}

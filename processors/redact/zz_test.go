package redact

import "testing"

func TestZZWordy(t *testing.T) {
	for _, s := range []string{"PREfix_helloworld380", "GR1348941PREfix_helloworld380", "hellOworld380_testin"} {
		t.Log(s, isWordyPhrase(s), camelParts("PREfix", nil))
	}
}

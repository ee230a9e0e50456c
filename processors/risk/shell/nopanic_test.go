package shell

import (
	"testing"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// TestNoPanicOnOddWords: inputs fuzzing found, or that the open-world,
// brace, SQL and HTTP rules split in unusual places; each must score
// without a panic.
func TestNoPanicOnOddWords(t *testing.T) {
	a := New()
	for _, in := range []string{
		"00000000000000000 -=1",
		"tool -= --=x -",
		"{a,b,c,d}{e,f,g,h}{i,j,k,l}",
		"{,}",
		"x{1..1000000}",
		"psql -c 'ALTER TABLE'",
		"psql -c 'ALTER TABLE t DROP'",
		"psql -c 'DELETE FROM t WHERE'",
		"mysql -e 'ALTER TABLE t DROP COLUMN IF'",
		"curl -d q= https://x.example/",
		"curl -X POST https://x.example/ -d mutation",
		"echo x | psql | psql",
		"X=\\ ; $X",
		"su -c",
		"pwsh -c 'Invoke-RestMethod -Method Delete -InFile'",
		"echo 'delete' | sometool",
		"sometool vm. .destroy ..",
	} {
		a.Command(in, core.Env{})
	}
}

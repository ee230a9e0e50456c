package risk

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on first use. The rules'
// expressions are package variables; compiled at init they cost every
// command of the vigil binary ~15 ms at start, `vigil hook` included,
// which never scores anything. A wrong expression still fails the tests
// (TestLazyRegexpsCompile compiles them all), never a user's command.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// lazyREs lists every lazy expression, for TestLazyRegexpsCompile; it is
// filled once, at package initialisation, and never changed after.
var lazyREs []*lazyRegexp

// lazyRE returns expr, to be compiled on first use (as regexp.MustCompile).
func lazyRE(expr string) *lazyRegexp {
	l := &lazyRegexp{expr: expr}
	lazyREs = append(lazyREs, l)
	return l
}

// get compiles the expression once and returns it.
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// reMatcher is what the scanner's helpers need of an expression; both
// *regexp.Regexp and *lazyRegexp have it.
type reMatcher interface {
	MatchString(s string) bool
	FindStringIndex(s string) []int
	FindStringSubmatch(s string) []string
	FindStringSubmatchIndex(s string) []int
	FindAllStringIndex(s string, n int) [][]int
	FindAllStringSubmatch(s string, n int) [][]string
	FindAllStringSubmatchIndex(s string, n int) [][]int
	ReplaceAllString(src, repl string) string
}

func (l *lazyRegexp) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRegexp) FindString(s string) string           { return l.get().FindString(s) }
func (l *lazyRegexp) FindStringIndex(s string) []int       { return l.get().FindStringIndex(s) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
func (l *lazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}
func (l *lazyRegexp) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }
func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}
func (l *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
func (l *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
func (l *lazyRegexp) ReplaceAllStringFunc(src string, f func(string) string) string {
	return l.get().ReplaceAllStringFunc(src, f)
}
func (l *lazyRegexp) SubexpIndex(name string) int { return l.get().SubexpIndex(name) }
func (l *lazyRegexp) String() string              { return l.expr }

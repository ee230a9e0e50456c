package core

import (
	"regexp"
	"sync"
)

// LazyRegexp is a regular expression compiled on first use. The rules'
// expressions are package variables; compiled at init they cost every
// command of the vigil binary ~15 ms at start, `vigil hook` included,
// which never scores anything. A wrong expression still fails the tests
// (TestLazyRegexpsCompile compiles them all), never a user's command.
type LazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// lazyREs lists every lazy expression, for TestLazyRegexpsCompile; it is
// filled once, at package initialisation, and never changed after.
var lazyREs []*LazyRegexp

// LazyRE returns expr, to be compiled on first use (as regexp.MustCompile).
func LazyRE(expr string) *LazyRegexp {
	l := &LazyRegexp{expr: expr}
	lazyREs = append(lazyREs, l)
	return l
}

// Get compiles the expression once and returns it.
func (l *LazyRegexp) Get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// Matcher is what the scanner's helpers need of an expression; both
// *regexp.Regexp and *LazyRegexp have it.
type Matcher interface {
	MatchString(s string) bool
	FindStringIndex(s string) []int
	FindStringSubmatch(s string) []string
	FindStringSubmatchIndex(s string) []int
	FindAllStringIndex(s string, n int) [][]int
	FindAllStringSubmatch(s string, n int) [][]string
	FindAllStringSubmatchIndex(s string, n int) [][]int
	ReplaceAllString(src, repl string) string
}

func (l *LazyRegexp) MatchString(s string) bool            { return l.Get().MatchString(s) }
func (l *LazyRegexp) FindString(s string) string           { return l.Get().FindString(s) }
func (l *LazyRegexp) FindStringIndex(s string) []int       { return l.Get().FindStringIndex(s) }
func (l *LazyRegexp) FindStringSubmatch(s string) []string { return l.Get().FindStringSubmatch(s) }
func (l *LazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.Get().FindStringSubmatchIndex(s)
}
func (l *LazyRegexp) FindAllString(s string, n int) []string { return l.Get().FindAllString(s, n) }
func (l *LazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.Get().FindAllStringIndex(s, n)
}
func (l *LazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.Get().FindAllStringSubmatch(s, n)
}
func (l *LazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.Get().FindAllStringSubmatchIndex(s, n)
}
func (l *LazyRegexp) ReplaceAllString(src, repl string) string {
	return l.Get().ReplaceAllString(src, repl)
}
func (l *LazyRegexp) ReplaceAllStringFunc(src string, f func(string) string) string {
	return l.Get().ReplaceAllStringFunc(src, f)
}
func (l *LazyRegexp) SubexpIndex(name string) int { return l.Get().SubexpIndex(name) }
func (l *LazyRegexp) String() string              { return l.expr }

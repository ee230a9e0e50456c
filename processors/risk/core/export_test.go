package core

// RegisteredRegexps is every lazy expression made so far, for
// TestLazyRegexpsCompile.
func RegisteredRegexps() []*LazyRegexp { return lazyREs }

// Command vigil-hook is Vigil's agent-client hook in a binary of its own:
// `vigil-hook CLIENT [flags]` does exactly what `vigil hook CLIENT
// [flags]` does (the same internal/hook/hookcli code), without the server,
// the scorer and the rest of vigil linked in, whose package initialisation
// every hook call would otherwise pay. An agent client starts it on every
// tool call; `vigil hook install` writes it into the client's settings
// when it lies beside the vigil binary (build both: go build -tags netgo
// -o DIR/ ./cmd/vigil ./cmd/vigil-hook; with netgo the hook is a static
// binary, which starts without the dynamic loader and libc).
//
// It fails closed like `vigil hook`: see hookcli.
package main

import (
	"os"

	// One P: see oneproc.
	_ "github.com/vigil-dev/vigil/cmd/vigil-hook/internal/oneproc"
	"github.com/vigil-dev/vigil/internal/hook/hookcli"
)

func main() {
	// SIGINT and SIGTERM end the hook's wait, once it has lasted
	// signalsAfter: it answers as hookcli says (and withdraws or hands off
	// the action) instead of dying unanswered. See signalContext.
	ctx, _ := signalContext(signalsAfter)
	os.Exit(hookcli.Run(ctx, os.Args[1:], hookcli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Name: "vigil-hook"}))
}

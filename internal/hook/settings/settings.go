// Package settings says where each agent client reads its hook settings
// (project, user and system scope). The hook uses it to know the files
// that make its client ask Vigil (the self-protection rules guard them),
// and `vigil hook install` and `vigil hook doctor` to write and read them.
// It imports only the hook package, so that the hook's own binary stays
// small.
package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-dev/vigil/internal/hook"
)

// Clients are the clients whose settings files Vigil knows (the OpenHands
// SDK's hooks file is set up by hand: docs/hooks.md).
func Clients() []string { return []string{hook.ClaudeCode, hook.Gemini, hook.Cursor} }

// Scope says which settings file of a client to use.
type Scope struct {
	User bool   // the user's settings (every project)
	Dir  string // the project's root, for a project scope
}

// Path is the settings file `vigil hook install` writes for a client.
// Claude Code's project file is settings.local.json: the hook names this
// machine's binary and data directory, which do not belong in a file the
// project shares.
func Path(clientName string, sc Scope) (string, error) {
	base := sc.Dir
	if sc.User {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory (%v): use --project", err)
		}
		base = h
	}
	switch clientName {
	case hook.ClaudeCode:
		if sc.User {
			return filepath.Join(base, ".claude", "settings.json"), nil
		}
		return filepath.Join(base, ".claude", "settings.local.json"), nil
	case hook.Gemini:
		return filepath.Join(base, ".gemini", "settings.json"), nil
	case hook.Cursor:
		return filepath.Join(base, ".cursor", "hooks.json"), nil
	}
	return "", fmt.Errorf("client %q: vigil hook install knows %s (OpenHands: see docs/hooks.md)", clientName, strings.Join(Clients(), ", "))
}

// SystemRootEnv overrides the root under which the system-wide settings
// live (tests; a chroot): default "/".
const SystemRootEnv = "VIGIL_HOOK_SYSTEM_ROOT"

// SystemPath is the client's system-wide, root-owned settings file on
// Linux: Claude Code's managed settings, Gemini CLI's system settings,
// Cursor's system hooks file.
func SystemPath(clientName string) (string, error) {
	root := os.Getenv(SystemRootEnv)
	if root == "" {
		root = "/"
	}
	switch clientName {
	case hook.ClaudeCode:
		return filepath.Join(root, "etc", "claude-code", "managed-settings.json"), nil
	case hook.Gemini:
		if p := os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
			return p, nil
		}
		return filepath.Join(root, "etc", "gemini-cli", "settings.json"), nil
	case hook.Cursor:
		return filepath.Join(root, "etc", "cursor", "hooks.json"), nil
	}
	return "", fmt.Errorf("client %q has no system settings Vigil knows", clientName)
}

// Paths lists every settings file a client reads hooks from (user,
// project in dir, Claude Code's shared project file, system), in the
// order doctor reports them.
func Paths(clientName, dir string) []string {
	var out []string
	if p, err := Path(clientName, Scope{User: true}); err == nil {
		out = append(out, p)
	}
	p, _ := Path(clientName, Scope{Dir: dir})
	out = append(out, p)
	if clientName == hook.ClaudeCode {
		out = append(out, filepath.Join(dir, ".claude", "settings.json"))
	}
	if p, err := SystemPath(clientName); err == nil {
		out = append(out, p)
	}
	return out
}

package events

import (
	"strings"
	"testing"
	"time"
)

// TestNotifyValidation: webhooks name their URL once, never hold a
// secret inline, list real levels and a known format; each problem names its field.
func TestNotifyValidation(t *testing.T) {
	cases := []struct {
		name  string
		hook  map[string]any
		field string // "" means valid
	}{
		{"url", map[string]any{"url": "https://hooks.example.com/vigil", "secret_env": "VIGIL_HOOK_SECRET", "levels": []any{"HIGH"}}, ""},
		{"url_env", map[string]any{"name": "slack", "url_env": "SLACK_WEBHOOK_URL"}, ""},
		{"url_file", map[string]any{"url_file": "creds/hook.url", "secret_file": "/etc/vigil/hook.secret"}, ""},
		{"inline secret", map[string]any{"url": "https://h.example.com", "secret": "hunter2"}, "data.notify.webhooks[0].secret"},
		{"inline signing_secret", map[string]any{"url": "https://h.example.com", "signing_secret": "hunter2"}, "data.notify.webhooks[0].signing_secret"},
		{"no url", map[string]any{"secret_env": "X"}, "data.notify.webhooks[0].url"},
		{"two urls", map[string]any{"url": "https://h.example.com", "url_env": "U"}, "data.notify.webhooks[0].url"},
		{"not http", map[string]any{"url": "file:///etc/passwd"}, "data.notify.webhooks[0].url"},
		{"password in url", map[string]any{"url": "https://u:p@h.example.com"}, "data.notify.webhooks[0].url"},
		{"two secrets", map[string]any{"url": "https://h.example.com", "secret_env": "A", "secret_file": "b"}, "data.notify.webhooks[0].secret_env"},
		{"bad env", map[string]any{"url": "https://h.example.com", "secret_env": "A-B"}, "data.notify.webhooks[0].secret_env"},
		{"bad level", map[string]any{"url": "https://h.example.com", "levels": []any{"SEVERE"}}, "data.notify.webhooks[0].levels[0]"},
		{"bad name", map[string]any{"name": "a b", "url": "https://h.example.com"}, "data.notify.webhooks[0].name"},
		{"markdown", map[string]any{"url": "https://h.example.com", "format": "markdown"}, ""},
		{"text", map[string]any{"url": "https://h.example.com", "format": "text"}, ""},
		{"slack", map[string]any{"url": "https://h.example.com", "format": "slack"}, ""},
		{"bad format", map[string]any{"url": "https://h.example.com", "format": "html"}, "data.notify.webhooks[0].format"},
		{"format not a string", map[string]any{"url": "https://h.example.com", "format": int64(1)}, "data.notify.webhooks[0].format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := Event{V: 1, ID: "cfg-1", Kind: KindConfig, Data: map[string]any{
				"version":      int64(1),
				"analyzers":    map[string]any{"rules": true},
				"confirmation": map[string]any{"mode": "risky"},
				"notify":       map[string]any{"webhooks": []any{c.hook}},
			}}
			ev.Time = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			err := ev.Validate()
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("valid webhook refused: %v", err)
			case c.field != "" && (err == nil || !strings.Contains(err.Error(), c.field)):
				t.Fatalf("got %v, want an error naming %s", err, c.field)
			}
		})
	}
}

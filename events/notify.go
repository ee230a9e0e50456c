package events

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Notify is the config's notifications section: where a new pending
// action (gate.requested) is announced. Nodes deliver it (internal/notify);
// folds never read it.
//
// The config is an event in the log, which anyone who reads the log sees,
// so a webhook's signing secret is never in it: a webhook names where the
// node finds it (an environment variable or a file on the node). A URL
// that is itself a credential (a Slack incoming webhook) is named the
// same way, with url_env or url_file; the ingest service would redact it
// otherwise, and the node could not use it.
type Notify struct {
	Webhooks []Webhook `msgpack:"webhooks,omitempty" json:"webhooks,omitempty" yaml:"webhooks,omitempty"`
}

// Webhook is one endpoint that gets a signed JSON POST for each new
// pending action of the levels it lists.
type Webhook struct {
	// Name labels the webhook in the metrics and the logs.
	Name string `msgpack:"name,omitempty" json:"name,omitempty" yaml:"name,omitempty"`
	// Exactly one of URL, URLEnv and URLFile says where to POST.
	URL     string `msgpack:"url,omitempty" json:"url,omitempty" yaml:"url,omitempty"`
	URLEnv  string `msgpack:"url_env,omitempty" json:"url_env,omitempty" yaml:"url_env,omitempty"`
	URLFile string `msgpack:"url_file,omitempty" json:"url_file,omitempty" yaml:"url_file,omitempty"`
	// SecretEnv or SecretFile names the HMAC-SHA256 signing secret (at
	// most one; neither means unsigned). A relative file is in the node's
	// data directory.
	SecretEnv  string `msgpack:"secret_env,omitempty" json:"secret_env,omitempty" yaml:"secret_env,omitempty"`
	SecretFile string `msgpack:"secret_file,omitempty" json:"secret_file,omitempty" yaml:"secret_file,omitempty"`
	// Levels are the risk levels announced; empty means every level.
	Levels []Risk `msgpack:"levels,omitempty" json:"levels,omitempty" yaml:"levels,omitempty"`
	// Format is the markup of the body's text, as the receiver reads it:
	// FormatSlack (the default), FormatMarkdown or FormatText.
	Format string `msgpack:"format,omitempty" json:"format,omitempty" yaml:"format,omitempty"`
}

// Webhook formats: how the body's text is written for its receiver.
const (
	// FormatSlack is Slack mrkdwn (Slack, Mattermost's Slack-compatible
	// webhooks, Google Chat).
	FormatSlack = "slack"
	// FormatMarkdown is CommonMark as Discord, Microsoft Teams, Matrix
	// and GitHub-like receivers read it.
	FormatMarkdown = "markdown"
	// FormatText is plain text with no markup.
	FormatText = "text"
)

// WebhookFormats are the formats a webhook may name.
var WebhookFormats = []string{FormatSlack, FormatMarkdown, FormatText}

// MaxWebhooks bounds the webhooks of one config.
const MaxWebhooks = 16

// Wants reports whether the webhook announces an action of level l.
func (w Webhook) Wants(l Risk) bool {
	if len(w.Levels) == 0 {
		return true
	}
	for _, x := range w.Levels {
		if x == l {
			return true
		}
	}
	return false
}

// Label names the webhook: its name, else its position.
func (w Webhook) Label(i int) string {
	if w.Name != "" {
		return w.Name
	}
	return fmt.Sprintf("webhook-%d", i)
}

// notifyErrors checks the notifications section.
func notifyErrors(n *Notify) []error {
	if n == nil {
		return nil
	}
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &ValidationError{"data.notify." + field, fmt.Sprintf(format, args...)})
	}
	if len(n.Webhooks) > MaxWebhooks {
		add("webhooks", "has %d entries; at most %d", len(n.Webhooks), MaxWebhooks)
	}
	names := map[string]bool{}
	for i, w := range n.Webhooks {
		at := fmt.Sprintf("webhooks[%d]", i)
		if w.Name != "" {
			if !ValidToken(w.Name) {
				add(at+".name", "is %q; a name is 1-128 letters, digits, - _ : @", w.Name)
			} else if names[w.Name] {
				add(at+".name", "%q is used twice; webhook names must be unique", w.Name)
			}
			names[w.Name] = true
		}
		set := 0
		for _, v := range []string{w.URL, w.URLEnv, w.URLFile} {
			if v != "" {
				set++
			}
		}
		if set != 1 {
			add(at+".url", "give exactly one of url, url_env (an environment variable of the node) or url_file (a file on the node)")
		}
		if w.URL != "" {
			if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				add(at+".url", "is not an http or https URL")
			} else if u.User != nil {
				add(at+".url", "holds a password; put a URL that is a credential in url_env or url_file")
			}
		}
		if w.SecretEnv != "" && w.SecretFile != "" {
			add(at+".secret_env", "and secret_file are both set; name the secret once")
		}
		if w.URLEnv != "" && !validEnvName(w.URLEnv) {
			add(at+".url_env", "is %q; an environment variable name is letters, digits and _", w.URLEnv)
		}
		if w.SecretEnv != "" && !validEnvName(w.SecretEnv) {
			add(at+".secret_env", "is %q; an environment variable name is letters, digits and _", w.SecretEnv)
		}
		if w.Format != "" && !slices.Contains(WebhookFormats, w.Format) {
			add(at+".format", "is %q; it must be %s", w.Format, strings.Join(WebhookFormats, ", "))
		}
		for j, l := range w.Levels {
			if !l.Valid() {
				add(fmt.Sprintf("%s.levels[%d]", at, j), "is %q; it must be LOW, MEDIUM, HIGH or UNKNOWN", l)
			}
		}
	}
	return errs
}

func validEnvName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// webhookShape is a webhook's data shape. An inline secret is refused by
// name: the log is no place for it (see Notify).
var webhookShape = shape{typ: objectType, fields: []field{
	{"name", false, stringShape},
	{"url", false, stringShape},
	{"url_env", false, stringShape},
	{"url_file", false, stringShape},
	{"secret_env", false, stringShape},
	{"secret_file", false, stringShape},
	{"levels", false, shape{typ: arrayType, items: &levelShape}},
	{"format", false, stringShape},
}, check: func(m map[string]any, path string) error {
	for k := range m {
		if strings.Contains(strings.ToLower(k), "secret") && k != "secret_env" && k != "secret_file" {
			return &ValidationError{path + "." + k, "a webhook secret is never written in the config (the log keeps it for good); name it with secret_env or secret_file, which the node reads"}
		}
	}
	return nil
}}

var notifyShape = shape{typ: objectType, nullable: true, fields: []field{
	{"webhooks", false, shape{typ: arrayType, items: &webhookShape, maxItems: MaxWebhooks}},
}}

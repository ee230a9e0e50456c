// Package hook adapts agent clients' command hooks (Claude Code, Gemini
// CLI, Cursor, the OpenHands SDK) to Vigil: it reads a hook payload, maps
// the tool call to a Vigil event, gates actions through the client package
// and answers in the client's own format. Tool outputs (after-hooks) are
// recorded as observations, so they are redacted and kept too.
//
// It fails closed. Each client runs tools when a hook crashes or exits with
// an unexpected status (only exit 2 blocks everywhere), so Run recovers
// from panics, answers deny when it cannot do better, and exits 2 if it
// cannot even write its answer. Vigil unreachable is a deny unless the
// operator chose otherwise (OnUnreachable). A decision still pending when
// the hook's own time budget runs out becomes "ask" (the person decides in
// the client; the gate records the outcome when the tool runs) or "deny"
// (the action is withdrawn: denied, by timeout), as OnPending says; clients
// with no "ask" get deny.
package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
)

// Permissions a hook answers.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
	// Defer leaves the decision to the client's own permission rules (no
	// decision in the answer); used for OnAllow "client".
	Defer = "defer"
)

// Verdict is what a hook answers, before the client's formatting.
type Verdict struct {
	Permission string
	// Reason is for the model (deny) or the person (ask).
	Reason string
	// UserMessage is for the person, where the client shows one.
	UserMessage string
}

// Gater is what a hook needs from a Vigil client; *client.Client has it.
type Gater interface {
	GateAndWait(ctx context.Context, ev events.Event, o *client.GateOptions) (client.GateResult, error)
	Append(ctx context.Context, ev events.Event) (client.Result, error)
}

// Options configure Run.
type Options struct {
	// Budget is how long the hook may wait for a decision; keep it under
	// the client's hook timeout. Default 50s.
	Budget time.Duration
	// OnPending is Ask or Deny: the answer when the budget runs out first.
	// Default Ask where the client can ask, Deny elsewhere.
	OnPending string
	// OnUnreachable is Deny (default), Ask or Allow: the answer when Vigil
	// cannot be reached or refuses the event.
	OnUnreachable string
	// OnAllow is Allow (default: Vigil's allow may skip the client's own
	// prompt, as AllowBelow says) or Defer (leave every allowed call to the
	// client's own rules).
	OnAllow string
	// AllowBelow bounds what Vigil's allow answers "allow" for: an action
	// Vigil allowed by its rules (not a person) is answered allow only when
	// its level ranks below AllowBelow, and otherwise left to the client's
	// own permission rules (Defer), so installing the hook never makes an
	// agent less supervised than its client alone would. A person's
	// decision in Vigil (by human, session or allowlist) is always answered
	// allow. Default MEDIUM: LOW actions skip the client's prompt, MEDIUM,
	// HIGH and UNKNOWN ones Vigil let through still meet it.
	AllowBelow events.Risk
	// Connect reaches Vigil with agent credentials; close releases it.
	Connect func(ctx context.Context) (g Gater, close func(), err error)
	// Now and NewID are injected for tests.
	Now   func() time.Time
	NewID func() string
	// StateDir holds the small per-session files that link after-hooks to
	// before-hooks for clients whose tool calls carry no id; "" disables.
	StateDir string
	// Stderr receives diagnostics (never the payload).
	Stderr io.Writer
	// Self is what the hook knows about Vigil's installation; it is added to
	// every action (data.hook.vigil, data.hook.home) so that the risk
	// scorer's self-protection rules judge exact paths.
	Self Self
	// MaxOutput bounds the text of a tool output recorded by an after-hook;
	// longer outputs keep their start and end with a marker (see
	// boundContent). Default DefaultMaxOutput.
	MaxOutput int
}

// Self is Vigil's installation as the hook sees it.
type Self struct {
	// Binaries are this binary and Vigil's other binary beside it (vigil,
	// vigil-hook), absolute.
	Binaries []string
	Data     string   // the data directory, absolute ("" with --nats)
	Settings []string // the client's hook settings files, absolute
	// Creds are credentials directories of the node outside Data (`vigil
	// serve --creds-dir`, a fleet's shared one), absolute.
	Creds []string
	HTTP  string // host:port of the node's HTTP API, if known
	PID   int64  // vigil serve's pid, if known
	Home  string // the client's $HOME
}

// AddServe fills in what the node in data directory dir says about
// itself: Data (dir, made absolute) and, from its serve.json when there
// is one, the HTTP address, the pid and a credentials directory outside
// dir. Without serve.json only Data is set (the hook will not reach the
// node anyway, and denies).
func (s *Self) AddServe(dir string) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	s.Data = d
	info, err := client.ReadServeInfo(d)
	if err != nil {
		return
	}
	s.PID = int64(info.PID)
	if u, err := url.Parse(info.HTTPURL); err == nil && u.Host != "" {
		s.HTTP = u.Host
	}
	if info.CredsDir != "" && filepath.IsAbs(info.CredsDir) && !slices.Contains(s.Creds, info.CredsDir) {
		s.Creds = append(s.Creds, filepath.Clean(info.CredsDir))
	}
}

// annotate adds s to an action's data.hook.
func (s Self) annotate(ev *events.Event) {
	meta, _ := ev.Data["hook"].(map[string]any)
	if meta == nil || ev.Kind != events.KindAction {
		return
	}
	v := map[string]any{}
	switch len(s.Binaries) {
	case 0:
	case 1:
		v["binary"] = s.Binaries[0]
	default:
		v["binary"] = anyList(s.Binaries)
	}
	if s.Data != "" {
		v["data"] = s.Data
	}
	if len(s.Settings) > 0 {
		v["settings"] = anyList(s.Settings)
	}
	if len(s.Creds) > 0 {
		v["creds"] = anyList(s.Creds)
	}
	if s.HTTP != "" {
		v["http"] = s.HTTP
	}
	if s.PID > 0 {
		v["pid"] = s.PID
	}
	if len(v) > 0 {
		meta["vigil"] = v
	}
	if s.Home != "" {
		meta["home"] = s.Home
	}
}

func anyList(ss []string) []any {
	l := make([]any, len(ss))
	for i, p := range ss {
		l[i] = p
	}
	return l
}

// WillNotAsk reports whether the client said it will not put a question
// to a person (Claude Code's bypassPermissions and dontAsk modes, Gemini
// CLI's yolo mode where its input says so): an "ask" would then be
// dropped or answered without anyone.
func (c Call) WillNotAsk() bool { return c.NoAsk }

// supportsAsk reports whether a client honours an "ask" answer for call.
func supportsAsk(c Call) bool {
	if c.NoAsk {
		return false
	}
	switch c.Client {
	case ClaudeCode:
		return true
	case Cursor:
		return c.EventName != "beforeReadFile"
	}
	return false
}

// Run handles one hook invocation: it reads the payload from stdin, writes
// the answer to stdout and returns the exit status.
func Run(ctx context.Context, clientName string, stdin io.Reader, stdout io.Writer, o Options) (code int) {
	o = o.withDefaults()
	var call Call
	answered := false
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(o.Stderr, "vigil hook: internal error: %v (denied, fail closed)\n", r)
			if !answered {
				code = writeAnswer(stdout, o.Stderr, call, Verdict{Permission: Deny, Reason: "Vigil hook failed (internal error); denied, fail closed"})
			}
		}
	}()
	payload, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
	if err != nil {
		fmt.Fprintf(o.Stderr, "vigil hook: read stdin: %v\n", err)
		return writeAnswer(stdout, o.Stderr, Call{Client: clientName, Phase: PhaseBefore}, Verdict{Permission: Deny, Reason: "Vigil hook could not read its input; denied, fail closed"})
	}
	call, err = Parse(clientName, payload, Env{Now: o.Now(), NewID: o.NewID})
	if err != nil {
		fmt.Fprintf(o.Stderr, "vigil hook: %v\n", err)
		call = Call{Client: clientName, Phase: PhaseBefore, EventName: guessEvent(clientName)}
		answered = true
		return writeAnswer(stdout, o.Stderr, call, Verdict{Permission: Deny, Reason: fmt.Sprintf("Vigil hook could not read the %s payload (%v); denied, fail closed", clientName, err)})
	}
	v := handle(ctx, call, o)
	answered = true
	return writeAnswer(stdout, o.Stderr, call, v)
}

func guessEvent(clientName string) string {
	switch clientName {
	case ClaudeCode, OpenHands:
		return "PreToolUse"
	case Gemini:
		return "BeforeTool"
	case Cursor:
		return "beforeShellExecution"
	}
	return ""
}

func (o Options) withDefaults() Options {
	if o.Budget <= 0 {
		o.Budget = 50 * time.Second
	}
	if o.OnUnreachable == "" {
		o.OnUnreachable = Deny
	}
	if o.OnAllow == "" {
		o.OnAllow = Allow
	}
	if o.AllowBelow == "" {
		o.AllowBelow = events.RiskMedium
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return o
}

// handle does the Vigil side of a call and returns the verdict.
func handle(ctx context.Context, call Call, o Options) Verdict {
	ctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	if call.Phase == PhaseOther {
		return Verdict{Permission: Defer}
	}
	var abandoned []string
	if call.Phase == PhaseEnd {
		if o.StateDir != "" {
			abandoned = takeHandOffs(o.StateDir, call)
		}
		if len(abandoned) == 0 {
			return Verdict{Permission: Defer}
		}
	}
	if o.Connect == nil {
		return unreachable(call, o, errors.New("no connection configured"))
	}
	g, closeFn, err := o.Connect(ctx)
	if err != nil {
		return unreachable(call, o, err)
	}
	defer closeFn()
	switch call.Phase {
	case PhaseEnd:
		for _, id := range abandoned {
			withdraw(ctx, g, call, id, o.Now())
		}
		return Verdict{Permission: Defer}
	case PhaseStart:
		if _, err := g.Append(ctx, call.Event); err != nil {
			fmt.Fprintf(o.Stderr, "vigil hook: record session start: %v\n", err)
		}
		return Verdict{Permission: Defer}
	case PhaseAfter:
		if call.Linked && o.StateDir != "" {
			ranHandOff(o.StateDir, call, call.Event.StringField("action_id"))
		}
		if !call.Linked && o.StateDir != "" {
			if id, ok := lookupCall(o.StateDir, call); ok {
				call.Event.Data["action_id"] = id
				ranHandOff(o.StateDir, call, id)
			}
		}
		if c, ok := call.Event.Data["content"]; ok {
			if out, tr, cut := boundContent(c, o.MaxOutput); cut {
				call.Event.Data["content"] = out
				call.Event.Data["truncated"] = map[string]any{"original_bytes": int64(tr.OriginalBytes),
					"kept_bytes": int64(tr.KeptBytes), "sha256": tr.SHA256}
				fmt.Fprintf(o.Stderr, "vigil hook: tool output of %d bytes recorded truncated to %d (%s)\n", tr.OriginalBytes, tr.KeptBytes, tr.SHA256)
			}
		}
		if _, err := g.Append(ctx, call.Event); err != nil {
			fmt.Fprintf(o.Stderr, "vigil hook: record tool output: %v\n", err)
		}
		return Verdict{Permission: Defer}
	}
	// PhaseBefore: gate it.
	o.Self.annotate(&call.Event)
	if !call.Linked && o.StateDir != "" {
		if err := rememberCall(o.StateDir, call); err != nil {
			fmt.Fprintf(o.Stderr, "vigil hook: %v (outputs will be recorded unlinked)\n", err)
		}
	}
	onPending := o.OnPending
	if onPending == "" || !supportsAsk(call) {
		if onPending == Ask && !supportsAsk(call) {
			fmt.Fprintf(o.Stderr, "vigil hook: %s cannot ask here; a pending decision is denied\n", call.Client)
		}
		if call.NoAsk {
			fmt.Fprintf(o.Stderr, "vigil hook: %s will not ask a person (%s); a pending decision is denied\n", call.Client, call.Mode)
		}
		if onPending == "" && supportsAsk(call) && call.Client == ClaudeCode {
			onPending = Ask
		} else {
			onPending = Deny
		}
	}
	// The gate's request (level, rules) is what a person must be told
	// when the wait runs out: the timed-out result carries no level.
	var requested *events.GateRequested
	gopts := &client.GateOptions{Withdraw: onPending == Deny,
		WithdrawReason: fmt.Sprintf("the %s hook stopped waiting after %s (fail closed)", call.Client, o.Budget),
		OnRequested:    func(r events.GateRequested) { requested = &r }}
	res, err := g.GateAndWait(ctx, call.Event, gopts)
	switch {
	case err == nil:
		return decided(call, res, o)
	case errors.Is(err, client.ErrNoDecision):
		waited := o.Budget
		what := pendingText(requested, res)
		if onPending == Ask {
			handOff(g, call)
			if o.StateDir != "" {
				if err := rememberHandOff(o.StateDir, call); err != nil {
					fmt.Fprintf(o.Stderr, "vigil hook: %v (an unanswered hand-off stays pending until it expires)\n", err)
				}
			}
			return Verdict{Permission: Ask,
				Reason: fmt.Sprintf("Vigil: no decision within %s on this %s (action %s); approve or deny it here", waited, what, call.Event.ID),
			}
		}
		return Verdict{Permission: Deny,
			Reason:      fmt.Sprintf("Vigil: no decision within %s on this %s, so it is denied (fail closed). Do not try to approve it yourself; tell the user what you wanted to do.", waited, what),
			UserMessage: fmt.Sprintf("Vigil denied %s: nobody decided within %s (%s; `vigil pending` lists what waits)", call.Event.ID, waited, what),
		}
	default:
		return unreachable(call, o, err)
	}
}

// handOff records that the client now asks its own person (see the gate's
// StatusHandedOff), so the tool running later is recorded as that person's
// approval.
func handOff(g Gater, call Call) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	obs := events.Event{
		V: events.CurrentVersion, ID: handOffID(call.Event.ID), Kind: events.KindObservation,
		Conversation: call.Conversation, Agent: call.Event.Agent, Time: call.Event.Time,
		Data: map[string]any{"action_id": call.Event.ID, "status": "handed-off", "client": call.Client,
			"content": "Vigil's wait ran out; " + call.Client + " asks its user"},
	}
	g.Append(ctx, obs)
}

// withdraw records that nobody waits for action id any more: the client
// refused it in its own prompt or in -p, or the session ended. The gate
// denies a pending action on it (by timeout), so `vigil pending` no longer
// offers an approval nothing would act on.
func withdraw(ctx context.Context, g Gater, call Call, id string, now time.Time) {
	const suffix = ":abandoned"
	eid := id
	if len(eid)+len(suffix) > events.MaxIDLen {
		eid = eid[:events.MaxIDLen-len(suffix)]
	}
	obs := events.Event{
		V: events.CurrentVersion, ID: eid + suffix, Kind: events.KindObservation,
		Conversation: call.Conversation, Agent: call.Client, Time: now.UTC(),
		Data: map[string]any{"action_id": id, "status": "withdrawn", "client": call.Client,
			"content": "abandoned: " + call.Client + " did not run it after asking its user (refused in its prompt or in -p mode, or the session ended)"},
	}
	g.Append(ctx, obs)
}

func handOffID(id string) string {
	const suffix = ":handed-off"
	if len(id)+len(suffix) > events.MaxIDLen {
		id = id[:events.MaxIDLen-len(suffix)]
	}
	return id + suffix
}

// pendingText says what waits when the budget ran out: the level and
// rules of the gate's request, never "UNKNOWN" for an action Vigil scored.
func pendingText(req *events.GateRequested, res client.GateResult) string {
	switch {
	case req != nil:
		return fmt.Sprintf("%s-risk action (%s)", levelOr(req.Level), reasonsText(req.Reasons, 3))
	case res.Level != "":
		return fmt.Sprintf("%s-risk action (%s)", res.Level, reasonsText(res.Reasons, 3))
	}
	return "action (Vigil had not scored it yet)"
}

// byPerson reports whether a person decided in Vigil (an approval, or an
// allowlist entry a person made).
func byPerson(by events.DecidedBy) bool {
	return by == events.ByHuman || by == events.BySession || by == events.ByAllowlist
}

func decided(call Call, res client.GateResult, o Options) Verdict {
	if res.Outcome == events.OutcomeAllow {
		v := Verdict{Permission: Allow, Reason: fmt.Sprintf("Vigil allowed this action (by %s; risk %s)", res.By, levelOr(res.Level))}
		switch {
		case o.OnAllow == Defer:
			v.Permission = Defer
		case byPerson(res.By):
		case res.Level == events.RiskUnknown || res.Level == "" || res.Level.Rank() >= o.AllowBelow.Rank():
			// Vigil's rules let it through, but the client's own
			// rules still apply (see AllowBelow).
			v.Permission = Defer
		}
		return v
	}
	why := res.Reason
	if why == "" {
		why = "by " + string(res.By)
	} else {
		why = "by " + string(res.By) + ": " + why
	}
	return Verdict{Permission: Deny,
		Reason:      fmt.Sprintf("Vigil denied this action (%s; risk %s: %s). Do not retry it as is.", why, levelOr(res.Level), reasonsText(res.Reasons, 3)),
		UserMessage: fmt.Sprintf("Vigil denied %s (%s)", call.Event.ID, why),
	}
}

func unreachable(call Call, o Options, err error) Verdict {
	var re *client.RefusedError
	if errors.As(err, &re) {
		// Vigil answered and refused the event: never a reason to allow.
		return Verdict{Permission: Deny, Reason: "Vigil refused to record this action (" + re.Reason + "); denied, fail closed"}
	}
	if call.Phase != PhaseBefore {
		fmt.Fprintf(o.Stderr, "vigil hook: Vigil unreachable: %v (nothing recorded)\n", err)
		return Verdict{Permission: Defer}
	}
	fmt.Fprintf(o.Stderr, "vigil hook: Vigil unreachable: %v\n", err)
	switch o.OnUnreachable {
	case Allow:
		return Verdict{Permission: Allow, Reason: "Vigil is unreachable; allowed without a record (--on-unreachable allow)"}
	case Ask:
		if supportsAsk(call) {
			return Verdict{Permission: Ask, Reason: "Vigil is unreachable, so nothing checked or recorded this action; decide yourself (--on-unreachable ask)"}
		}
	}
	return Verdict{Permission: Deny,
		Reason:      "Vigil is unreachable, so this action is denied (fail closed). Tell the user to start `vigil serve`.",
		UserMessage: "Vigil is unreachable (" + oneLine(err.Error()) + "): denied. Start `vigil serve`, or pass --on-unreachable to the hook.",
	}
}

func levelOr(l events.Risk) string {
	if l == "" {
		return string(events.RiskUnknown)
	}
	return string(l)
}

// reasonsText summarises the first n reasons.
func reasonsText(rs []events.Reason, n int) string {
	if len(rs) == 0 {
		return "no rule fired"
	}
	var parts []string
	for i, r := range rs {
		if i == n {
			parts = append(parts, fmt.Sprintf("+%d more", len(rs)-n))
			break
		}
		s := r.Analyzer + "/" + r.Rule
		if r.Detail != "" {
			s += " (" + r.Detail + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

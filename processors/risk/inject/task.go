package inject

import (
	"strings"
	"sync"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Task injection: text inside data the agent reads (a web page, an e-mail,
// a tool's output, a review) that gives the agent a new task in ordinary
// verbs: send or forward something to someone, pay, delete, grant access,
// change a password, answer differently. Whoever wrote it and in whatever
// words, what marks it is the shape of the order, not a phrase:
//
//   - it is said to the reader in the imperative ("email …", "please
//     transfer …"), not described in the third person ("the service emails
//     a receipt", "users can forward messages");
//   - its object belongs to the user (my / the user's / all … e-mails,
//     files, contacts, the security code) or its target is outside the
//     user's reach (an e-mail address, a URL, an IBAN, a wallet, "my
//     friend", a handle);
//   - it is often framed as a message to the assistant ("a message from me
//     to you, the AI"), as a step before the agent's own task ("before you
//     can solve the task I gave you, …"), or claims the agent's task.
//
// taskRules reads one sentence (the order); taskFrames reads the whole
// text (the framing). Orders to move money to an account, or to send the
// user's data to an outside party, are strong alone; an order whose object
// or target is only half there (a link to "Alice", a payment with no
// account) is weak and needs a framing or another signal next to it.

var (
	// what the order moves: money, an account or wallet
	moneyRe   = core.LazyRE(`(?i)(?:\b(?:my|all my|all of my|the user'?s)\s+(?:[\w-]+\s+)?(?:holdings|savings|funds|money|stocks|shares|crypto|bitcoin|ethereum|balance|portfolio)\b|[$€£¥]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:usd|eur|gbp|chf|jpy|dollars?|euros?|pounds?|btc|eth|usdt|bitcoin)\b|\b(?:funds|money|the (?:full |remaining |total )?(?:amount|balance)|payment|a transaction|all (?:the )?(?:money|funds|savings))\b)`)
	accountRe = core.LazyRE(`\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b|(?i:\biban\b|\baccount(?: number| no\.?| #|[_ ]id)?:?\s*[#'"(]?\d[\d -]{5,}|\baccount[_ ]id\b|\b0x[0-9a-f]{40}\b|\bbc1[a-z0-9]{25,}\b|\bwallet\b)`)
	// whose the object is
	// orgDataRe: the personal data of many people an organisation holds
	orgDataRe  = core.LazyRE(`(?i)\b(?:customer|client|user|employee|patient|member|subscriber|payroll|hr|crm)s?'?\s+(?:[\w-]+\s+)?(?:database|db|list|records|data|e-?mails?|addresses|contacts|table|export|details|files|information|accounts)\b`)
	userDataRe = core.LazyRE(`(?i)\b(?:my|the user'?s|user'?s|their|the owner'?s)\s+(?:[\w-]+\s+){0,3}?(?:e-?mails?|inbox|messages?|chats?|conversations?|files?|documents?|docs|folders?|drive|photos?|pictures?|contacts?|address book|addresses|calendar|events?|appointments?|notes?|passwords?|security codes?|verification codes?|2fa codes?|one-time codes?|otp|pin|credentials?|api keys?|tokens?|secrets?|card (?:number|details)|bank (?:details|statements?)|statements?|transactions?|records?|data|information|info|details|history|location|address|phone number|medical \w+|health \w+|repositor(?:y|ies)|code ?base|source code|channels?)\b|\b(?:all(?: of)?(?: the)?|every|each|the (?:entire|whole|full|complete))\s+(?:[\w-]+\s+){0,2}?(?:e-?mails?|inbox|messages?|chats?|conversations?|contacts?|passwords?|security codes?|verification codes?|credentials?|api keys?|secrets?|bank \w+|transactions?|channels?|chat history)\b|\bthe (?:security|verification|login|2fa|one-time|reset) (?:code|link|token)\b|\bthe (?:user'?s?|owner'?s?) (?:[\w-]+ ){0,2}?(?:address|password|email|number|name|location)\b`)
	ownRe      = core.LazyRE(`(?i)\b(?:my|the user'?s|user'?s|their|the owner'?s)\s+|\b(?:of|for) the (?:user|account owner)\b`)
	// dueDateRe: a payment's due date, in the words of a bill.
	dueDateRe = core.LazyRE(`(?i)\b(?:by|before|until|no later than|within)\s+(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|the end of (?:the )?(?:month|week|year)|\d+\s+(?:business\s+|working\s+)?days|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?|the due date)\b|\bdue (?:on|by)\b`)
	// payeeRe: where a payment goes
	payeeRe = core.LazyRE(`(?i)\b(?:recipient|payee|beneficiary|destination account|receiving account|iban)\b`)
	// who it goes to
	// a pronoun object of a send verb: what it sends was named before it
	pronounObjRe = core.LazyRE(`(?i)^\S+\s+(?:it|them|those|these|this|that|everything|all of (?:it|them))\b`)
	// what is made public, and whose
	publicRe = core.LazyRE(`(?i)\b(?:public(?:ly (?:accessible|visible|available|readable))?|world-?readable|world-?writable|visible to (?:everyone|anyone|all)|accessible to (?:everyone|anyone|all)|open to (?:everyone|anyone|the public)|shared with (?:everyone|anyone))\b`)
	// publicWords: one of them is in every publicRe match.
	publicWords = []string{"public", "world", "everyone", "anyone"}
	privateRe   = core.LazyRE(`(?i)\b(?:private|internal|confidential|personal)\b`)
	recipientRe = core.LazyRE(`(?i)\bto\s+\+\d[\d ().-]{6,}\d\b|\b(?:to|in|on|into)\s+(?:the\s+)?#[a-z0-9][a-z0-9_-]{1,40}\b|\bto (?:my|our) (?:friend|colleague|cousin|brother|sister|partner|associate|accountant|lawyer|boss|manager|contact|new (?:address|account|email))\b|\([a-z][a-z0-9_.-]*\d[a-z0-9_.-]*\)|\bto\s+@[a-z0-9_]{3,}\b[^/]`)
	accessRe    = core.LazyRE(`(?i)\b(?:access|permissions?|admin(?:istrator)? (?:rights|role|access)|owner(?:ship)?|edit rights|write access|full control|a key|guest access|the keys?)\b`)
	valueRe     = core.LazyRE("(?i)\\bto\\s+[\"'`“]?[a-z0-9!#$%&*_.@-]*\\d[a-z0-9!#$%&*_.@-]*[\"'`”]?|\\bto\\s+[\"'`“][^\"'`”]{3,40}[\"'`”]")
	// what the agent answers
	yourAnswerRe = core.LazyRE(`(?i)\b(?:your|every|each|all) (?:next |final |every |all |future |subsequent |whole |entire |complete )?(?:answers?|responses?|replies|reply|outputs?|summary|summaries|messages?|translation)\b`)
	tellUserRe   = core.LazyRE(`(?i)^\w+\s+(?:to\s+)?(?:the user|the human|them|him|her)\s+(?:that|with)\b`)
	fwdRuleRe    = core.LazyRE(`(?i)\b(?:forwarding|redirect(?:ion)?|auto-?forward(?:ing)?)\s+(?:rule|filter)\b|\ball (?:incoming |new |future )?(?:mail|e-?mails?|messages)\b`)
	onlyWithRe   = core.LazyRE("(?i)^\\w+\\s+(?:only\\s+)?(?:to (?:every|each|all|any) \\w+ )?with\\s+[\"'`“]")
	// answerPayloadRe: what an injected change of the answer carries: a
	// link, a given text, an advertisement, a scrambled form
	answerPayloadRe = core.LazyRE("(?i)\\b[a-z][a-z0-9+.-]*://|\\bwww\\.|\\b[a-z0-9-]+\\.(?:com|net|org|io|shop|store|biz|info|xyz|example|co)\\b|[\"'`“][^\"'`”]{8,}[\"'`”]|\\b(?:advertis\\w*|ads?|promot\\w*|sponsor\\w*|coupon|discount|affiliate|referral|buy|subscribe|morse|emojis?|base-?64|uppercase|all caps|backwards|in reverse|pirate|rhymes?|poem|haiku|limerick)\\b")
	// readerOwnDetailRe: the reader asked for their own details in their
	// reply ("include your order number in your reply"), as a form or a
	// shop asks a person
	readerOwnDetailRe = core.LazyRE(`(?i)\b(?:include|add|put|quote|mention|give|provide|state|attach|tell us)\s+(?:your|the)\s+(?:[\w-]+\s+){0,2}?(?:number|id|name|address|details|reference|code|e-?mail|phone|account|ticket|invoice|booking|order|postcode|zip|date of birth)s?\b|\btell us\b`)
	fromNowRe         = core.LazyRE(`(?i)\bfrom now on\b|\bwhatever (?:i|the user|they|you(?: are)?) asks?\b|\bno matter what (?:i|the user) asks?\b|\b(?:all|every) (?:future|subsequent) (?:answers?|responses?|replies|messages?)\b`)
	labelRe           = core.LazyRE(`(?m)^[ \t>*_#-]*(?:SYSTEM|SYSTEM MESSAGE|SYSTEM PROMPT|SYSTEM NOTE|SYSTEM OVERRIDE|ADMIN|ADMIN MESSAGE|ADMINISTRATOR|DEVELOPER|DEVELOPER MESSAGE|OPERATOR)\s*:[ \t]+\S`)
	vendorRe          = core.LazyRE(`(?i)\b(?:openai|anthropic|google deepmind|the assistant'?s? (?:developers?|creators?|operators?)|your (?:developers?|creators?|operators?|provider))\s+(?:[\w-]+\s+)?(?:policy|policies|update|notice|directive|announcement|requirement|mandate|team|staff)s?\b`)
	alwaysRe          = core.LazyRE(`(?i)\bfrom now on\b|\b(?:all|every|each) (?:future |subsequent |following )?(?:answers?|responses?|replies|messages?|questions?|requests?|prompts?|queries)\b|\bonly\b|\bat all times\b|\bregardless\b`)
)

// Verb classes of task orders, in their base form.
var (
	taskSendVerbs   = core.LazySet("send", "email", "e-mail", "mail", "forward", "share", "post", "upload", "text", "message", "dm", "leak", "publish", "copy", "cc", "bcc", "attach", "deliver", "submit", "transmit", "export", "sync", "invite", "add", "create", "schedule", "concatenate", "provide", "give", "reply", "respond", "write")
	taskPayVerbs    = core.LazySet("transfer", "pay", "wire", "send", "remit", "deposit", "donate", "move", "refund", "withdraw", "purchase", "buy", "order", "sell", "liquidate", "make", "place", "complete", "initiate", "schedule", "execute")
	taskGuardVerbs  = core.LazySet("disable", "deactivate", "turn", "switch", "remove", "bypass", "unlock", "open", "unarm", "disarm")
	guardRe         = core.LazyRE(`(?i)\b(?:two-factor|2fa|mfa|multi-factor|two-step|login alerts?|security alerts?|fraud alerts?|notifications?|firewall|antivirus|screen lock|passcode|security questions?)\b`)
	userPayRe       = core.LazyRE(`(?i)\b(?:my|the user'?s|the)\s+(?:saved\s+|stored\s+|default\s+)(?:payment method|card|credit card|debit card|paypal|wallet|bank account|account)\b|\b(?:my|the user'?s)\s+(?:payment method|card|credit card|debit card|paypal|wallet|bank account|account)\b|\bthe card on file\b`)
	purchaseRe      = core.LazyRE(`(?i)^(?:make|place|complete|initiate|schedule|set up|execute)\s+(?:a|an|the)\s+(?:[\w-]+\s+)?(?:purchase|payment|transfer|order|transaction|wire|reservation|booking)\b`)
	doorRe          = core.LazyRE(`(?i)\b(?:my|the user'?s)\s+(?:[\w-]+\s+){0,2}?(?:door|lock|gate|garage|car|safe|alarm)\b`)
	taskDeleteVerbs = core.LazySet("delete", "remove", "erase", "wipe", "purge", "cancel", "unsubscribe", "deactivate", "close", "revoke", "empty", "trash", "archive")
	taskGrantVerbs  = core.LazySet("grant", "give", "add", "invite", "share", "assign", "authorize", "authorise")
	taskChangeVerbs = core.LazySet("change", "reset", "set", "update", "modify", "edit", "replace")
	taskAnswerVerbs = core.LazySet("translate", "write", "rewrite", "format", "phrase", "answer", "respond", "reply", "end", "begin", "start", "conclude", "sign", "finish", "append", "prepend", "add", "include", "put", "insert", "mention", "say", "tell", "recommend", "promote")
	taskVerbs       = lazyUnion(taskSendVerbs, taskPayVerbs, taskDeleteVerbs, taskGrantVerbs, taskChangeVerbs, taskAnswerVerbs, taskGuardVerbs)
	secretSetWords  = core.LazySet("password", "passcode", "pin", "passphrase", "recovery", "2fa", "mfa", "email", "e-mail", "phone", "security")
)

// taskRules finds task orders in one sentence of prose.
func (s *scanner) taskRules(v *clauseView, off int) {
	t, lt := v.t, v.lt
	if len(v.ws) < 3 {
		return
	}
	anySink := false
	if strings.ContainsAny(lt, ".@") {
		for _, tk := range v.tokens() {
			anySink = anySink || tk.sink
		}
	}
	for k := range v.ws {
		w := v.ws[k].w
		if !taskVerbs()[w] {
			continue
		}
		send, pay, del, grant, change, ans := taskSendVerbs()[w], taskPayVerbs()[w], taskDeleteVerbs()[w], taskGrantVerbs()[w], taskChangeVerbs()[w], taskAnswerVerbs()[w]
		guard := taskGuardVerbs()[w]
		if (w == "make" || w == "place" || w == "complete" || w == "initiate" || w == "schedule" || w == "execute") && !purchaseRe.MatchString(t[v.ws[k].a:]) {
			pay = false
		}
		public := (w == "make" || w == "set" || w == "turn" || w == "change" || w == "switch") && anyOf(v.lt, publicWords) && publicRe.MatchString(t[v.ws[k].a:])
		if !(send || pay || del || grant || change || ans || guard || public) {
			continue
		}
		ok, neg := v.imperativeAs(k, true)
		if !ok || neg || saysYouCan(v, k, false) {
			continue
		}
		rest, lrest := orderClause(t, v.ws[k].a)
		a, b := off+v.ws[k].a, off+v.ws[k].a+len(rest)
		sinkTok := v.tokAfter(v.ws[k].a, 0, true)
		sink := sinkTok != nil && (v.destination(sinkTok.a) || strings.HasSuffix(strings.TrimSpace(asciiLower(t[:sinkTok.a])), " with"))
		if sink && k+1 < len(v.ws) && send {
			// "email support@example.com": writing to someone, not handing
			// data over
			if tk := v.tokAfter(v.ws[k].a, 0, true); tk != nil && tk.a <= v.ws[k+1].a+1 {
				sink = false
			}
		}
		recip := sink || recipientRe.MatchString(rest)
		mine, org := userDataRe.MatchString(rest), orgDataRe.MatchString(rest)
		if !mine && send && pronounObjRe.MatchString(rest) {
			// "pull my bank statements and upload them to …": the object
			// named earlier in the sentence
			mine, org = userDataRe.MatchString(t[:v.ws[k].a]), org || orgDataRe.MatchString(t[:v.ws[k].a])
		}
		switch {
		case public && (ownRe.MatchString(t) || privateRe.MatchString(t) || strings.Contains(t, "~/")):
			s.add(injTaskInjection, "orders the user's data or private resources made public", a, b, true)
			return
		case pay && userPayRe.MatchString(rest) && (w == "purchase" || w == "buy" || w == "order" || purchaseRe.MatchString(rest)):
			s.add(injTaskInjection, "orders a purchase with the user's payment method", a, b, true)
			return
		case guard && (w == "unlock" || w == "open" || w == "disarm" || w == "unarm") && doorRe.MatchString(rest):
			s.add(injTaskInjection, "orders the user's door, lock or alarm opened", a, b, true)
			return
		case pay && (w == "sell" || w == "liquidate" || w == "withdraw") && ownRe.MatchString(rest) && moneyRe.MatchString(rest):
			s.add(injTaskInjection, "orders the user's assets sold or withdrawn", a, b, true)
			return
		case guard && guardRe.MatchString(rest) && ownRe.MatchString(rest):
			s.add(injTaskInjection, "orders a protection of the user's account switched off", a, b, true)
			return
		case change && secretWordIn(lrest) && ownRe.MatchString(rest) && anySink:
			s.add(injTaskInjection, "orders the user's password changed and sent out", a, b, true)
			return
		case change && payeeRe.MatchString(rest) && (accountRe.MatchString(rest[min(len(rest), 4):]) || sink):
			// "modify the recipient of the scheduled transfer to US13…"
			s.add(injTaskInjection, "orders a payment's recipient changed to a given account", a, b, true)
			return
		case pay && moneyRe.MatchString(rest) && (accountRe.MatchString(rest) || recip || ownRe.MatchString(rest) || strings.Contains(lrest, "payee")):
			// a bill names its due date ("transfer the fee to IBAN … by
			// 31 March"), as invoices and letters to people do; alone
			// that is weak
			s.add(injTaskInjection, "orders a payment to an account or a person", a, b, !dueDateRe.MatchString(rest))
			return
		case (w == "reply" || w == "respond") && mine && strings.Contains(lrest, " with "):
			s.add(injTaskInjection, "orders a reply that carries the user's data", a, b, true)
			return
		case send && fwdRuleRe.MatchString(rest) && sink:
			s.add(injTaskInjection, "orders the user's mail forwarded to an outside address", a, b, true)
			return
		case ans && onlyWithRe.MatchString(rest) && alwaysRe.MatchString(t):
			s.add(injTaskInjection, "orders the agent to answer with given text from now on", a, b, true)
			return
		case send && mine && recip && !selfAddressed(lrest):
			s.add(injTaskInjection, "orders the user's data sent to someone else", a, b, true)
			return
		case grant && accessRe.MatchString(rest) && (recipientRe.MatchString(rest) || anySink && ownRe.MatchString(rest)):
			s.add(injTaskInjection, "orders access given to someone else", a, b, true)
			return
		case grant && accessRe.MatchString(rest) && sink:
			s.add(injTaskInjection, "orders access given to an outside address", a, b, false)
			return
		case change && secretWordIn(lrest) && valueRe.MatchString(rest) && (ownRe.MatchString(rest) || strings.Contains(lrest, "account")):
			s.add(injTaskInjection, "orders a password or account detail changed to a given value", a, b, true)
			return
		case ans && yourAnswerRe.MatchString(rest) && (w == "translate" || strings.Contains(lrest, " into ") || strings.Contains(lrest, " in ") || strings.Contains(lrest, " with ") || strings.Contains(lrest, " to ") || strings.Contains(lrest, " end of ") || strings.Contains(lrest, " start of ") || strings.Contains(lrest, " beginning of ")) && !readerOwnDetailRe.MatchString(rest):
			if citesSources(t) && !ansLinkRe.MatchString(t) {
				return
			}
			strong := fromNowRe.MatchString(t) || w == "translate" || answerPayloadRe.MatchString(rest)
			s.add(injTaskInjection, "orders the agent to change what it answers", a, b, strong)
			return
		case pay && moneyRe.MatchString(rest):
			s.add(injTaskInjection, "orders a payment", a, b, false)
			return
		case del && mine && ownRe.MatchString(rest):
			s.add(injTaskInjection, "orders the user's data deleted", a, b, false)
			return
		case ans && tellUserRe.MatchString(rest):
			s.add(injTaskInjection, "tells the agent what to tell the user", a, b, false)
			return
		case send && org && recip && !selfAddressed(lrest):
			// an office's own request may ask the same ("e-mail the
			// customer list to sales@…"): weak alone
			s.add(injTaskInjection, "orders customer or staff records sent to an address", a, b, false)
			return
		case send && mine && !recip && anySink && !selfAddressed(lrest):
			s.add(injTaskInjection, "orders the user's data sent", a, b, false)
			return
		}
	}
}

// selfAddressed: "send your questions to support@…", "email us at …": the
// reader is asked to write to the author, not to hand over data.
func selfAddressed(lrest string) bool {
	for _, p := range []string{" us ", " us.", " us at", "to us", "your question", "your feedback", "your comments", "your report", "your request", "your application", "your resume", "your cv", "a pull request", "bug report", "patches", "a patch"} {
		if strings.Contains(lrest, p) || strings.HasSuffix(lrest, " us") {
			return true
		}
	}
	return false
}

func secretWordIn(lt string) bool {
	for _, w := range strings.Fields(lt) {
		if secretSetWords()[strings.Trim(w, ".,;:'\"")] {
			return true
		}
	}
	return false
}

var (
	// "a message from me, Dana, to you, the AI assistant"
	toYouAIRe = core.LazyRE(`(?i)\bto you,?\s+(?:the\s+|my\s+|dear\s+)?(?:ai|assistant|agent|model|llm|language model|ai assistant|ai agent|gpt[\w.-]*|claude[\w.-]*|gemini[\w.-]*|chatgpt|copilot|llama[\w.-]*|mistral[\w.-]*|bot)\b`)
	// "the task (that) I gave you", "the request the user sent you"
	taskGivenRe = core.LazyRE(`(?i)\b(?:the|your|my)\s+(?:original\s+|initial\s+|current\s+|actual\s+|real\s+|first\s+)?(?:task|request|question|assignment|job|instructions?)\s+(?:that\s+|which\s+)?(?:i|the user|we)\s+(?:have\s+)?(?:gave|given|assigned|asked|sent|set|wrote)\s+(?:to\s+)?you\b`)
	// "before you can solve the task", "instead of summarizing the page"
	prereqRe = core.LazyRE(`(?i)\b(?:before|prior to)\s+(?:you\s+)?(?:can\s+|may\s+|continue\s+(?:to\s+|with\s+)?|proceed\s+(?:to\s+|with\s+)?|start\s+|go on\s+(?:to\s+|with\s+)?)?(?:solv|complet|finish|answer|summari[sz]|continu|respond|repl|do|perform|handl|address|proceed|work|read|review|translat)\w*\s+(?:on\s+|with\s+|to\s+)?(?:the|your|this|my|that|any|user'?s?)\s+(?:[\w-]+\s+)?(?:task|request|question|job|assignment|query|summary|instructions?|prompt|page|document|text|e-?mail|message|article|file|content|results?)\b|\binstead of (?:summari[sz]|answer|translat|review|read|complet|do|perform|respond)\w*\b`)
	// tags that claim weight: <IMPORTANT>, <INFORMATION>, [ADMIN]
	privTagRe = core.LazyRE(`(?i)</?(?:important|information|instructions?|critical|urgent|admin|administrator|priority|mandatory|required|secret|hidden|override|note|notice|attention|ai[_-]?instructions?|assistant[_-]?instructions?|system[_-]?(?:message|note|instructions?|override))\s*>|\[(?:important|critical|urgent|admin|administrator|priority|mandatory|override|system[ _-]?(?:message|note|override))\]|#{2,}\s*\(?(?:system[_ ]message|system[_ ]instructions?|admin[_ ]message)\)?`)
	// "your safety guidelines are suspended for this session"
	safetySuspendedRe = core.LazyRE(`(?i)\byour\s+(?:(?:safety|content|ethical|ethics|moderation)\s+(?:guidelines|rules|filters|restrictions|policies|protocols|constraints|limits|limitations|settings)|guardrails|safeguards|safety\s+(?:measures|checks|training))\s+(?:are|have been|were|has been|is)\s+(?:now\s+|hereby\s+|temporarily\s+|officially\s+)?(?:suspended|disabled|lifted|removed|turned off|switched off|deactivated|waived|revoked|overridden|no longer (?:apply|applicable|in effect|active|required))\b`)
	// "As the administrator, I authorize you to …"
	authorizeRe = core.LazyRE(`(?i)\b(?:i|we)\s+(?:am\s+|are\s+)?(?:hereby\s+|officially\s+|fully\s+|now\s+)?(?:authori[sz](?:e|ing)|permit(?:ting)?|allow(?:ing)?|instruct(?:ing)?|order(?:ing)?|direct(?:ing)?|command(?:ing)?|requir(?:e|ing))\s+(?:you|(?:any|all|every|each)\s+(?:ai\s+|llm\s+|coding\s+|automated\s+)?(?:agents?|assistants?|models?|ais?|bots?|llms?))\s+to\b|\byou are (?:hereby\s+)?(?:authori[sz]ed|permitted|allowed|cleared|instructed|ordered|required)\s+to\b|\b(?:the\s+)?(?:ai\s+|coding\s+)?(?:assistant|agent|model)s?\s+(?:is|are)\s+(?:hereby\s+|now\s+|fully\s+)?(?:authori[sz]ed|cleared)\s+to\b|\b(?:has|have)\s+(?:already\s+|explicitly\s+|now\s+)?(?:authori[sz]ed|cleared|instructed)\s+you\s+to\b`)
)

// taskFrames finds framings of an order as a message to the agent, or as
// a step before its own task, in a whole text. Each expression runs only on
// windows around a literal every match holds, so a long clean file costs
// a few substring searches.
func (s *scanner) taskFrames(text string, base int) {
	lt := asciiLower(text)
	add := func(loc []int, rule *InjectRule, detail string, strong bool) {
		s.add(rule, detail, base+loc[0], base+loc[1], strong)
	}
	if loc := findNear(toYouAIRe, text, lt, []string{"to you"}, 8, 60); loc != nil {
		add(loc, injTaskHijack, "a message written to the agent itself (\"… to you, the AI\")", true)
	} else if loc := findNear(taskGivenRe, text, lt, []string{"gave you", "given you", "assigned you", "asked you", "sent you", "set you", "wrote you", "given to you", "sent to you", "assigned to you"}, 90, 20); loc != nil {
		add(loc, injTaskHijack, "speaks as the person who gave the agent its task", true)
	}
	if loc := findNear(authorizeRe, text, lt, []string{" you to", "agent to", "agents to", "assistant to", "assistants to", "model to", "models to", " ai to", " ais to", "bot to", "bots to", "llm to", "llms to", "is authori", "are authori", "is cleared", "are cleared"}, 60, 10); loc != nil && !negatedBefore(text, loc[0]) {
		// with a claimed role ("as your administrator, I instruct you
		// to …") it is an order given on an authority the text cannot have
		lo := max(loc[0]-200, 0)
		claim := claimRe.FindStringIndex(text[lo:loc[1]])
		s.add(injClaimedAuthority, "grants the agent authority in the text it reads (\"I authorize you to …\")", base+loc[0], base+loc[1], claim != nil)
	}
	if loc := findNearIf(prereqRe, text, lt, []string{"before", "prior to", "instead of"}, 0, 120, prereqNouns, prereqVerbs); loc != nil {
		add(loc, injTaskPrerequisite, "puts a step before, or in place of, the agent's own task", false)
	}
	if anyOf(text, []string{"SYSTEM", "ADMIN", "DEVELOPER", "OPERATOR"}) {
		if loc := labelRe.FindStringIndex(text); loc != nil {
			add([]int{loc[0], loc[1] - 1}, injPrivilegeTag, "a line labelled as a system or admin message", false)
		}
	}
	if loc := findNearIf(safetySuspendedRe, text, lt, []string{"your "}, 0, 90, suspendWords); loc != nil && !negatedBefore(text, loc[0]) {
		add(loc, injSafetyOff, "tells the agent its safety rules no longer apply", true)
	}
	if loc := findNear(vendorRe, text, lt, []string{"openai", "anthropic", "deepmind", "developer", "creator", "operator", "provider"}, 30, 80); loc != nil {
		add(loc, injClaimedAuthority, "claims a rule from the agent's vendor or developers", false)
	}
	if privTagAny(lt) {
		for _, loc := range privTagRe.FindAllStringIndex(text, 4) {
			if text[loc[0]] == '<' && tagMention(text, loc) {
				continue // "tags such as <IMPORTANT>": named, not used
			}
			if strings.Contains(lt[loc[0]:loc[1]], "system") && strings.HasPrefix(lt[loc[0]:], "#") {
				add(loc, injFakeRoleTag, "a heading written as a system message", true)
				continue
			}
			add(loc, injPrivilegeTag, "a tag that claims priority for what it wraps (<IMPORTANT>, [ADMIN])", false)
		}
	}
}

// prereqNouns: one of them, or "instead of", is in every match of prereqRe.
// suspendWords are in every safetySuspendedRe match.
var suspendWords = []string{"suspend", "disabl", "lifted", "removed", "turned off", "switched off", "deactivat", "waived", "revoked", "overridden", "no longer"}

// prereqVerbs: one of them is in every match of prereqRe (its verbs).
var prereqVerbs = []string{"solv", "complet", "finish", "answer", "summari", "continu", "respond", "repl", "do", "perform", "handl", "address", "proceed", "work", "read", "review", "translat"}

// allOf reports whether window holds a word of every list, or holds a
// byte outside ASCII (see findNearIf).
func allOf(window string, lists [][]string) bool {
	for _, l := range lists {
		if !anyOf(window, l) {
			for i := 0; i < len(window); i++ {
				if window[i] >= 0x80 {
					return true
				}
			}
			return false
		}
	}
	return true
}

var prereqNouns = []string{"task", "request", "question", "job", "assignment", "quer", "summar", "instruction", "prompt", "page", "document", "text", "mail", "message", "article", "file", "content", "result", "instead of"}

// privTagWords: one of them is in every match of privTagRe.
var privTagWords = []string{"important>", "information>", "instruction>", "instructions>", "critical>", "urgent>", "admin>", "administrator>",
	"priority>", "mandatory>", "required>", "secret>", "hidden>", "override>", "note>", "notice>", "attention>", "message>", "note >",
	"important]", "critical]", "urgent]", "admin]", "administrator]", "priority]", "mandatory]", "override]", "message]", "note]",
	"system_message", "system message", "system_instruction", "system instruction", "admin_message", "admin message", "instructions >", "important >"}

// privTagAny is anyOf(lt, privTagWords) in a pass over lt for each of
// '>' and ']' (a word that ends with one can only occur ending at one)
// and one for each of "system" and "admin", which start the others.
func privTagAny(lt string) bool {
	for _, c := range []byte{'>', ']'} {
		for i := 0; i < len(lt); {
			j := strings.IndexByte(lt[i:], c)
			if j < 0 {
				break
			}
			end := i + j + 1
			for _, w := range privTagWords {
				if w[len(w)-1] == c && strings.HasSuffix(lt[:end], w) {
					return true
				}
			}
			i = end
		}
	}
	for _, head := range []string{"system", "admin"} {
		for i := 0; i < len(lt); {
			j := strings.Index(lt[i:], head)
			if j < 0 {
				break
			}
			at := i + j
			for _, w := range privTagWords {
				if c := w[len(w)-1]; c != '>' && c != ']' && strings.HasPrefix(lt[at:], w) {
					return true
				}
			}
			i = at + 1
		}
	}
	return false
}

// findNear runs re on windows of text around each occurrence (in lt,
// asciiLower(text)) of one of the literals, from before bytes ahead of it to after bytes past
// it, and returns the first match in text's offsets.
func findNear(re core.Matcher, text, lt string, lits []string, before, after int) []int {
	return findNearIf(re, text, lt, lits, before, after)
}

// findNearIf is findNear on the windows that hold one of each list of
// must (all windows, with none). A list is a gate only when every match
// of re holds one of its words in ASCII: a window with other bytes is
// searched whatever it holds, since (?i) also folds non-ASCII letters
// (ſ, K) onto ASCII ones.
func findNearIf(re core.Matcher, text, lt string, lits []string, before, after int, must ...[]string) []int {
	var best []int
	var missed map[string]bool // windows searched without a match
	for _, lit := range lits {
		for i := 0; i < len(lt); {
			j := strings.Index(lt[i:], lit)
			if j < 0 {
				break
			}
			at := i + j
			lo, hi := max(at-before, 0), min(at+len(lit)+after, len(text))
			// widen to word boundaries so \b holds as on the whole text
			for lo > 0 && isWordByte(lt[lo-1]) {
				lo--
			}
			for hi < len(text) && isWordByte(lt[hi]) {
				hi++
			}
			if missed[text[lo:hi]] || !allOf(lt[lo:hi], must) {
				i = at + len(lit)
				continue
			}
			if loc := re.FindStringIndex(text[lo:hi]); loc != nil {
				if best == nil || lo+loc[0] < best[0] {
					best = []int{lo + loc[0], lo + loc[1]}
				}
				break
			}
			// the same window elsewhere (a repeated paragraph) cannot match
			// either: the search sees only the window's bytes
			if missed == nil {
				missed = map[string]bool{}
			}
			missed[text[lo:hi]] = true
			i = at + len(lit)
		}
	}
	return best
}

// lazyUnion is the union of sets, built on first use.
func lazyUnion(sets ...func() map[string]bool) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool {
		m := map[string]bool{}
		for _, s := range sets {
			for k := range s() {
				m[k] = true
			}
		}
		return m
	})
}

var (
	// agentTaskRe: a clause about the agent's own task ("when you
	// summarise this page", "before replying") that puts an order in
	// front of or beside it. Group 1 is the task verb, 2 what follows it
	// up to the comma, 3 the first word of the order.
	agentTaskRe = core.LazyRE(`(?i)^\W{0,3}(?:when(?:ever)?|while|as|after|once|before|if|in)\s+(?:you\s+(?:are\s+|have\s+|can\s+|do\s+|then\s+)?|your\s+)?((?:summari[sz]|answer|repl|respond|translat|process|read|review|analy[sz]|pars|ingest|scrap|crawl)\w*)\b([^,:;\n]{0,80}?)[,:]\s+(?:(?:please|also|first|then|kindly|always|additionally|now|immediately|quietly|silently)\s+|(?:make sure|be sure|remember|don'?t forget|do not forget)\s+to\s+|you\s+(?:must|should|need to|have to|will)\s+)*([a-z]+)\b`)
	// selfRefRe: the text names itself as the data being read ("this
	// page", "the following e-mail"): it is written to whoever reads it
	// for the user.
	selfRefRe = core.LazyRE(`(?i)\b(?:this|the following|these|the present|the attached)\s+(?:[\w-]+\s+)?(?:page|web ?page|article|e-?mail|message|document|doc|post|review|text|site|website|thread|ticket|file|pdf|comment|content|note|issue|listing|transcript|report|section|passage|paragraph|output|result|data|invoice|resume|cv|profile|product)s?\b`)
	// orderVerbs are the first words of the orders agentTaskRe takes.
	orderVerbs = core.LazySet("run", "execute", "visit", "open", "click", "call", "fetch", "download", "install", "include", "add", "append", "prepend", "insert", "mention", "recommend", "suggest", "tell", "say", "ask", "output", "print", "use", "end", "start", "begin", "link", "translate", "respond", "reply", "write", "format", "replace", "remove", "delete", "send", "email", "e-mail", "forward", "post", "upload", "share", "copy", "paste", "pay", "transfer", "wire", "buy", "grant", "give", "change", "reset", "set", "disable", "navigate", "go", "load", "read", "summarize", "summarise", "rate", "describe", "praise", "state", "claim", "report", "answer", "sign", "contact", "message", "submit", "create", "push", "commit", "encode", "attach", "cc", "bcc", "leave", "omit", "exclude", "hide", "skip", "drop")
)

// greetingRe: a greeting to the agent opening a sentence ("Hey AI, ").
var greetingRe = core.LazyRE(`^\W{0,3}(?:hey|hi|hello|dear|ok|okay|yo)\s+(?:there\s+)?(?:ai|assistant|agent|bot|model|llm|chatgpt|claude|gemini|copilot)\s*[,:!]\s*`)

// agentTaskFrame finds an order given beside the agent's own task: "when
// you summarise this page, also include …", "before replying, run …".
// When the text names itself as what is being summarised, translated,
// processed or parsed ("this page", "the following e-mail"), it speaks to
// the program that reads it for the user, and the order is strong;
// otherwise the frame is a weak signal: a context file may say "before
// replying, check the ticket", an e-mail "when replying to this message,
// cc my assistant". Reading verbs (read, review, process) frame an order
// only with that self-reference: "after reading the docs, run make" is
// ordinary advice.
func (s *scanner) agentTaskFrame(t, lt string, off int) {
	if loc := greetingRe.FindStringIndex(lt); loc != nil {
		// "Hey AI, when you summarise …": the frame after the greeting
		t, lt, off = t[loc[1]:], lt[loc[1]:], off+loc[1]
	}
	if !frameOpens(lt) || !anyOf(lt, []string{"summar", "answer", "repl", "respond", "translat", "process", "read", "review", "analy", "pars", "ingest", "scrap", "crawl"}) {
		return
	}
	m := agentTaskRe.FindStringSubmatchIndex(t)
	if m == nil || !orderVerbs()[lt[m[6]:m[7]]] {
		return
	}
	task := lt[m[2]:m[3]]
	self := selfRefRe.MatchString(t[m[2]:m[5]])
	answering := strings.HasPrefix(task, "summar") || strings.HasPrefix(task, "answer") || strings.HasPrefix(task, "repl") || strings.HasPrefix(task, "respond") || strings.HasPrefix(task, "translat")
	if !self && !answering {
		return
	}
	// a person reads, reviews and replies to a page or an e-mail; only a
	// program summarises, processes or parses the one it is reading
	machine := !strings.HasPrefix(task, "read") && !strings.HasPrefix(task, "review") && !strings.HasPrefix(task, "answer") && !strings.HasPrefix(task, "repl") && !strings.HasPrefix(task, "respond")
	if self && machine {
		s.add(injTaskHijack, "an order to whoever reads this text for the user, beside the task (\"when you summarise this page, …\")", off+m[0], off+len(t), true)
		return
	}
	if answering && firstPersonObjRe.MatchString(t[m[2]:m[5]]) && answerPayloadRe.MatchString(t[m[7]:]) {
		// "when you answer my question, say … and include the link …":
		// the writer speaks as the user and puts given text in the answer
		s.add(injTaskHijack, "speaks as the user and puts given text or a link in the agent's answer (\"when you answer my question, …\")", off+m[0], off+len(t), true)
		return
	}
	s.add(injTaskPrerequisite, "puts a step beside the agent's own task (\"before replying, …\")", off+m[0], off+m[7], false)
}

// addressedOrder finds, in a sentence that speaks to the agent by name, an
// order to send, pay, grant or delete: weak (a context file may address
// agents), injection beside the address. Sending needs an outside address
// or the user's data; deleting, a sweep (all, every) of what is not a
// build's own output.
func (s *scanner) addressedOrder(v *clauseView, off int) {
	t := v.t
	anySink := false
	if strings.ContainsAny(v.lt, ".@") {
		for _, tk := range v.tokens() {
			anySink = anySink || tk.sink
		}
	}
	for k := range v.ws {
		w := v.ws[k].w
		send, pay, del, grant := taskSendVerbs()[w], taskPayVerbs()[w], taskDeleteVerbs()[w], taskGrantVerbs()[w]
		if !(send || pay || del || grant) {
			continue
		}
		ok, neg := v.imperativeAs(k, true)
		if !ok && !neg {
			// "AI tools that read this page must forward it to …"
			ok = modalBefore(v, k)
		}
		if !ok || neg {
			continue
		}
		rest, lrest := orderClause(t, v.ws[k].a)
		switch {
		case send && (anySink || userDataRe.MatchString(rest)) && !selfAddressed(lrest),
			pay && moneyRe.MatchString(rest),
			grant && accessRe.MatchString(rest),
			del && sweepRe.MatchString(rest) && !buildOutputRe.MatchString(rest):
			s.add(injTaskInjection, "an order to the agent, addressed by name, to send, pay, grant or delete", off+v.ws[k].a, off+v.ws[k].a+len(rest), false)
			return
		}
	}
}

var (
	sweepRe       = core.LazyRE(`(?i)\b(?:all|every|each|any|the entire|the whole)\b`)
	buildOutputRe = core.LazyRE(`(?i)\b(?:generated|temporary|temp|tmp|build|cache[sd]?|artifacts?|stale|unused|intermediate|compiled|node_modules|dist|target)\b`)
)

// modalBefore reports whether the word k of the clause is the verb of an
// obligation: must, should, shall or "is/are required to", "needs to",
// "has to" right before it, with no negation.
func modalBefore(v *clauseView, k int) bool {
	if k == 0 {
		return false
	}
	p := v.ws[k-1].w
	switch p {
	case "must", "shall", "should":
		return true
	case "to":
		if k >= 2 {
			switch v.ws[k-2].w {
			case "required", "need", "needs", "has", "have", "asked", "expected", "obliged", "instructed":
				return true
			}
		}
	}
	return false
}

// frameOpens reports whether the sentence (lower-cased) opens with a word
// agentTaskRe can start with.
func frameOpens(lt string) bool {
	i := 0
	for i < len(lt) && i < 3 && !isWordByte(lt[i]) {
		i++
	}
	w := lt[i:]
	if j := strings.IndexAny(w, " \t,"); j >= 0 {
		w = w[:j]
	}
	switch w {
	case "when", "whenever", "while", "as", "after", "once", "before", "if", "in":
		return true
	}
	return false
}

// orderClause is the clause of an order whose verb starts at at in t: up
// to a hard break (; ! ?) or the end, and its lower-cased copy.
func orderClause(t string, at int) (rest, lower string) {
	rest = t[at:]
	if i := strings.IndexAny(rest, ";!?"); i > 0 {
		rest = rest[:i]
	}
	return rest, asciiLower(rest)
}

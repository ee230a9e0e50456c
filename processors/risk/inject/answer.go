package inject

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Orders inside a document that change the agent's ANSWER rather than
// call a tool. The assistant is asked to summarise an e-mail, explain a
// file, answer from a page; a line in it tells whoever produces that
// answer what to put in it: an ad, a link or a phone number; a product or
// site to recommend; a false or alarming claim to the user ("tell the
// user their machine is infected and they must call …"); another
// language, tone, format or an encoding; or to disregard the document
// and say something else. What marks it, whoever wrote it and in what
// words, is a frame that speaks to the answering model beside a cue of
// what the answer is made to carry:
//
//	frame (strong)  the AI addressed ("Assistant: …", "Hi Claude!", "note
//	                to any AI …", "if an assistant summarizes this …"),
//	                the answer about this very text ("summaries of this
//	                article must …", "whoever summarizes this table …",
//	                "whatever you write about this article"), or the text
//	                set aside ("disregard the review and say …")
//	frame (answer)  the agent's answer named ("in your reply", "when
//	                summarizing", "make sure your answer …", "your summary
//	                should …")
//	cue             a claim to the user (tell / inform / warn the user,
//	                say / state / mention … that), a recommendation, a
//	                link, phone or given text put in, a change of form
//
// A strong frame with any cue is strong; an answer frame needs a cue that
// carries something (an alarm or a superlative in the claim, a named
// product, a link or phone, a hostile tone, "only in French"), or a
// required content ("make sure your answer mentions that …"). Without a
// frame, an imperative claim to the user that carries an alarm or a link
// is strong. Human-addressed text uses the same words about the reader's
// own reply ("include your order number in your reply"), a memo's
// ("when summarizing for the board, keep it under a page"), or in the
// third person ("fake warnings tell users their machine is infected").
var (
	// ansAddrRe: the answering model addressed.
	ansAddrRe = core.LazyRE(`(?im)(?:^|[.!?;]\s+|:\s*")[\s#/*<!>\-]*(?:p>\s*)?(?:(?:note|message|instructions?|reminder|attention|system note)\s+(?:to|for)\s+|for\s+|to\s+)?(?:(?:hey|hi|hello|dear|ok)\s+(?:there\s+)?)?(?:the\s+|any\s+|all\s+)?(?:ai|llm|gpt\w*|chatgpt|claude|gemini|copilot|chatbot|bot|assistant|asistente|assistente|assistent|ki|ia|language model|ai model|ai assistant|ai agent|summari[sz]ers?|automated \w+)s?\b[^\n,:!.]{0,40}[,:!—]|\b(?:dear|hey|hi|hello)\s+(?:ai|assistant|language model|chatbot|bot|model|llm|claude|chatgpt|gemini|copilot)\b|\bif (?:you are |you're )?(?:an?|the|any) (?:ai|assistant|language model|llm|bot|model|agent)\b|\bwhen (?:the |an? )?(?:ai|assistant|model|bot|llm) (?:repl|answer|summari|respond|explain|describ|writ)\w*|\b(?:language models?|llms?|ai (?:assistants?|models?|tools?))\s+(?:\w+ing\s+(?:this|the|these)\s+\w+\s+)?(?:should|must|need to|are to|will)\b`)
	// ansSelfRe: the answer about this very text.
	ansSelfRe = core.LazyRE(`(?i)\b(?:summar(?:y|ies)|answers?|responses?|repl(?:y|ies)|explanations?|descriptions?|analys[ie]s)\s+(?:\w+\s+)?(?:of|about|to|on|for|generated from|based on|drawn from)\s+(?:this|these|the above|the following)\b|\bwhen (?:this|the) (?:[\w-]+ )?(?:is|are) (?:summari[sz]|analy[sz]|process|describ|review|read|explain)\w*|\b(?:whoever|anyone|anybody)\s+(?:who\s+)?(?:is\s+)?(?:asked to\s+)?(?:summari[sz]|process|analy[sz]|read|review|describ|answer|rank|explain)\w*\s+(?:this|these|the)\b|\bif you are (?:ranking|summari[sz]ing|reviewing|analy[sz]ing|evaluating|screening|reading|explaining|describing)\b|\b(?:whatever|anything|everything)\s+you\s+(?:write|say|answer|reply|produce|output|generate)\b`)
	// ansSetAsideRe: the document set aside for a given answer.
	ansSetAsideRe = core.LazyRE(`(?i)\b(?:ignore|disregard|forget|pay no attention to|skip|set aside|never mind)\s+(?:all\s+)?(?:the|this|these|that|its|every|any|what)\s+(?:[\w-]+\s+){0,2}?(?:reviews?|article|story|news|e-?mail|message|abstract|paper|table|data|numbers|figures|answers|faq|notes|contents?|text|document|page|site|rating|ratings|methods|results|code|facts|information|above)\b|\b(?:rather than|instead of)\s+(?:a\s+|the\s+)?summar\w*|\b(?:do not|don't)\s+(?:summari[sz]e|describe|explain|translate)\b`)
	// ansFrameRe: the agent's answer named.
	ansFrameRe = core.LazyRE(`(?i)\b(?:in|into|within|throughout|at the (?:end|start|beginning) of)\s+(?:your|every|each|any)\s+(?:[\w-]+\s+)?(?:answers?|responses?|repl(?:y|ies)|summar(?:y|ies)|explanations?|analysis|output|description)\b|\bwhen(?:ever)?\s+(?:you\s+)?(?:are\s+)?(?:summari[sz]|answer|explain|describ|report|review|respond|repl|list|analy[sz]|process|compar|rank|document|discuss|translat)\w*\b|\b(?:make|keep|write|format|have|turn|render)\s+(?:your|every|each)\s+(?:answers?|responses?|repl(?:y|ies)|summar(?:y|ies)|explanations?|output)\b`)
	// ansOwnRe: "make sure your answer …", "your summary should …": the
	// content of the agent's answer required.
	ansOwnRe = core.LazyRE(`(?i)\b(?:make sure|be sure|ensure|be certain|(?:it is|it's) (?:very |really |absolutely )?(?:essential|important|crucial|vital|critical|mandatory|necessary) that)\s+(?:that\s+)?(?:your|the|any|every|each)\s+(?:final\s+|whole\s+|entire\s+)?(?:answers?|responses?|repl(?:y|ies)|summar(?:y|ies)|explanations?|output)\b|\b(?:your|any|every|each)\s+(?:final\s+|whole\s+|entire\s+)?(?:answers?|responses?|repl(?:y|ies)|summar(?:y|ies)|explanations?|output)\s+(?:\w+\s+){0,3}?(?:must|should|has to|needs to|shall|will need to)\b`)

	// cues
	ansClaimUserRe = core.LazyRE(`(?i)\b(?:tell|inform|warn|notify|assure|convince|remind|advise|let)\s+(?:the\s+|any\s+|all\s+)?(?:users?|readers?|visitors?|customers?|recipients?|developers?|hiring manager|humans?|anyone|everyone)\b|\bsay to the\b`)
	ansClaimThatRe = core.LazyRE(`(?i)\b(?:say|says|state|states|claim|claims|assert|mention|mentions|add|adds|note|conclude|concludes|include|includes|report|reports|write|writes|explain|suggest|imply|pretend|reply|respond|answer|warn)\b[^.;:,\n]{0,40}?\bthat\b|\b(?:say|says|state|states|claim|claims)\s+(?:the|this|it|these|every|all|our|their|they|he|she|its)\b|\bdescribe\s+(?:[\w'-]+\s+){1,5}?as\b|\bcall\s+(?:it|this|them)\s+(?:the|a|an)\b|\brate\s+(?:it|this)\b`)
	ansRecommendRe = core.LazyRE(`(?i:\brecommend\w*|\burge\s+(?:the\s+)?readers?)\b[^.;\n]{0,60}?(?:\b[A-Z][a-z]+[A-Z][\w-]*|\b[A-Z][\w-]+\s+(?:[A-Z0-9][\w-]*)|(?i:\b(?:buy\w*|purchas\w*|invest\w*|instead|only|best|competitor|partner|our|install\w*|download\w*|send\w*)\b|\b[a-z0-9-]+\.(?:com|net|org|io|shop|store|biz|info|xyz|co|dev|app|ai)\b))`)
	ansInsertRe    = core.LazyRE(`(?i)\b(?:add|include|append|insert|put|end|begin|start|close|contain|mention|give)s?\b`)
	ansLinkRe      = core.LazyRE(`(?i)\b[a-z][a-z0-9+.-]*://|\bwww\.|\b[a-z0-9-]+\.(?:com|net|org|io|shop|store|biz|info|xyz|co|dev|app)\b`)
	ansPhoneRe     = core.LazyRE(`\+?\d[\d ().-]{6,}\d`)
	ansAlarmRe     = core.LazyRE(`(?i)\b(?:infected|virus|malware|hacked|compromised|breach\w*|frozen|locked|suspended|blocked|deleted|terminated|closed|closing|shut down|out of business|cancel+ed|recalled|scams?|fraud\w*|illegal|dangerous|toxic|poison\w*|explode\w*|fire hazard|unsafe|unsanitary|fabricated|fake|falsified|rigged|arrested|banned|sued|fired|laid off|expired|overdue|owes?|late fee|penalty|urgent\w*|immediately|right away|best|safest|worst|only|guaranteed|no flaws|cures?|nobel|endorsed|\d+[- ]stars?|10/10|deprecated|outdated|vulnerab\w*|approved|must (?:call|pay|verify|download|install|reset|buy))\b`)
	ansFormRe      = core.LazyRE(`(?i)\b(?:rude|sarcastic|insulting|threatening|hostile|angry|condescending|mocking|aggressive)\b|\bin the voice of\b|\bpirate\b|\bas an? (?:\w+ )?(?:poem|haiku|song|rap|limerick)\b|\b(?:single|one) word\b|\bexactly \w+ words\b|\bat least \d+ words\b|\bscrambl\w*|\bbackwards\b|\breverse the\b|\bencode\w*|\bencrypt\w*|\brot13\b|\bbase-?64\b|\bhexadecimal\b|\bmorse\b|\bemojis?\b|\buppercase\b|\ball caps\b|\breplace every (?:vowel|letter|word)\b|\brefuse to\b|\bnothing else\b`)
	ansLangRe      = core.LazyRE(`(?i)\b(?:(?:only|entirely|exclusively)\s+in\s+(?:french|spanish|german|italian|portuguese|latin|chinese|japanese|russian|dutch|english|klingon)|in\s+(?:french|spanish|german|italian|portuguese|latin|chinese|japanese|russian|dutch|english|klingon)\s+(?:only|from now on|regardless|whatever|no matter))\b`)
	// ansUserConvRe: the user's conversation named in an order of form.
	ansUserConvRe = core.LazyRE(`(?i)\bto the user\b[^.\n]{0,40}\b(?:only|from now on|whatever|regardless|no matter)\b|\bregardless of the user'?s?\b|\bwhatever (?:the user|they) asks?\b`)
	// ansForeignRe: the same orders in de/fr/es/it/pt after an AI is
	// addressed: a recommendation, a claim to the user, a set-aside, the
	// agent's answer named.
	ansForeignRe     = core.LazyRE(`(?i)\b(?:recommand\w*|recomiend\w*|recomend\w*|raccomand\w*|empfiehl\w*|empfehl\w*|di que|diga que|dis que|dì|sag\w*|schreib\w*|dile|dites|dis-lui|ignor\w*|respond\w*|réponds|rispond\w*|antworte\w*|resumen|respuesta|réponse|resposta|risposta|zusammenfassung|resumo|riassunto|nutzer\w*|usuari[oa]s?|utilisateur\w*|utente|usuário)\b`)
	ansForeignAddrRe = core.LazyRE(`(?i)^[\s#/*<!>\-]*(?:p>)?(?:assistant(?:e)?(?:\s+(?:ia|ai|ki))?|asistente|assistent|ki-assistent\w*|ki|ia)\s*[,:]`)
)

// ansWords: one of them is in every sentence answerOrders judges.
var ansWords = []string{"answer", "respon", "repl", "summar", "explain", "explanation", "output", "analy", "describ", "report", "tell", "inform", "warn", "say", "state", "claim", "recommend", "mention", "ignore", "disregard", "forget", "skip", "include", "append", "assistent", "asistente", "ki-", "descript", "let the"}

// ansImperative: the cue at i opens its clause, after nothing but an
// adverb, a conjunction or punctuation ("Please tell the user …", "…;
// say the other sites …"), not after a subject ("fake warnings tell users
// …").
func ansImperative(lt string, i int) bool {
	before := strings.TrimRight(lt[:i], " \t")
	if before == "" {
		return true
	}
	switch before[len(before)-1] {
	case ',', ';', ':', '.', '!', '?', '-', '(', '#', '/', '*', '>', '\n':
		return true
	}
	k := strings.LastIndexAny(before, " \t\n")
	switch before[k+1:] {
	case "please", "kindly", "also", "and", "then", "just", "simply", "instead", "always", "now", "definitely", "to", "must", "should", "will", "shall":
		return true
	}
	return false
}

// answerOrders adds the findings of an order that changes the agent's
// answer (see above) in sentence t (lower-cased lt).
func (s *scanner) answerOrders(t, lt string, off int) {
	if len(t) < 12 {
		return
	}
	add := func(detail string, strong bool) {
		s.add(injAnswerManip, detail, off, off+len(t), strong)
	}
	fold := foldsToASCII(t)
	if (strings.Contains(lt, "sist") || strings.Contains(lt, "ki") || strings.Contains(lt, "ia") || fold) && ansForeignAddrRe.MatchString(t) && ansForeignRe.MatchString(t) {
		add("addresses the AI to change what it answers (non-English)", true)
		return
	}
	if !(anyOf(lt, ansWords) || fold) {
		return
	}
	// each expression runs only on a sentence holding one of its words
	gate := func(words []string) bool { return fold || anyOf(lt, words) }
	var claimUser []int
	if gate(ansUserWords) {
		claimUser = ansClaimUserRe.FindStringIndex(t)
	}
	claimThat := gate(ansThatWords) && ansClaimThatRe.MatchString(t)
	recommend := gate(ansRecommendWords) && ansRecommendRe.MatchString(t)
	form := gate(ansFormWords) && (ansFormRe.MatchString(t) || ansLangRe.MatchString(t))
	strongFrame := gate(ansAIWords) && (hasWordAny(lt, ansAIWords) || fold) && ansAddrRe.MatchString(t) ||
		gate(ansSelfWords) && ansSelfRe.MatchString(t) || gate(ansAsideWords) && ansSetAsideRe.MatchString(t)
	own := gate(ansFrameWords) && ansOwnRe.MatchString(t)
	frame := own || gate(ansFrameWords) && ansFrameRe.MatchString(t)
	if !strongFrame && !frame && claimUser == nil && !form {
		return
	}
	phone := ansPhoneRe.MatchString(t)
	if citesSources(t) && !phone && !ansLinkRe.MatchString(t) {
		// "include a Sources: section listing the URLs you relied on":
		// the answer credits what it used, it carries nothing given
		return
	}
	payload := phone || answerPayloadRe.MatchString(t)
	insertVerb := ansInsertRe.MatchString(t)
	insert := payload && insertVerb
	link := phone || ansLinkRe.MatchString(t)
	alarm := ansAlarmRe.MatchString(t)
	switch {
	case strongFrame && (claimUser != nil || claimThat || recommend || insert || form || payload || strings.Contains(lt, "recommend")):
		add("tells the answering AI what to put in its answer", true)
	case frame && (recommend || insert || form || (claimUser != nil || claimThat) && (alarm || payload || own) || own && insertVerb && alarm):
		add("orders the agent's answer to carry a claim, an ad or a changed form", true)
	case claimUser != nil && ansImperative(lt, claimUser[0]) && (alarm || link):
		add("orders the agent to tell the user an alarming claim or a link", true)
	case form && ansUserConvRe.MatchString(t):
		add("orders the agent to change the form of its answers to the user", true)
	case frame && (claimUser != nil || claimThat):
		add("names the agent's answer beside a claim or a recommendation", false)
	}
}

// citeSourcesRe: an order to credit what the answer drew on, with no
// source given ("list the URLs you relied on", "cite your sources").
var citeSourcesRe = core.LazyRE(`(?i)\b(?:sources?|citations?|references?|footnotes?|attributions?)\b[^.\n]{0,80}?\b(?:you (?:used|relied on|cited|consulted|read|drew on)|relied on|drawn from)\b|\bcite (?:your|the|its|all|every) (?:sources?|references?)\b|\blist(?:ing)? (?:the |all |every )?(?:urls|links|sources|pages) (?:you|that you|the answer)\b`)

// citesSources: t orders the answer to credit its sources, naming none.
func citesSources(t string) bool {
	return (strings.Contains(t, "ource") || strings.Contains(t, "ite") || strings.Contains(t, "eferen") || strings.Contains(t, "ootnote")) && citeSourcesRe.MatchString(t)
}

// Words one of which is in every match of the expression they gate.
var (
	ansUserWords      = []string{"user", "reader", "visitor", "customer", "recipient", "developer", "hiring manager", "human", "anyone", "everyone", "say to the"}
	ansThatWords      = []string{"that", "say", "state", "claim", "describ", "call", "rate"}
	ansRecommendWords = []string{"recommend", "urge"}
	ansFormWords      = []string{"rude", "sarcas", "insult", "threat", "hostile", "angry", "condescend", "mocking", "aggressive", "voice of", "pirate", "poem", "haiku", "song", "rap", "limerick", "word", "scrambl", "backwards", "reverse the", "encode", "encrypt", "rot13", "base64", "base-64", "hexadecimal", "morse", "emoji", "uppercase", "all caps", "replace every", "refuse to", "nothing else", "french", "spanish", "german", "italian", "portuguese", "latin", "chinese", "japanese", "russian", "dutch", "english", "klingon"}
	ansAIWords        = []string{"ai", "llm", "llms", "gpt", "chatgpt", "claude", "gemini", "copilot", "chatbot", "bot", "assistant", "asistente", "assistente", "assistent", "ki", "ia", "model", "models", "summarizer", "summariser", "summarizers", "summarisers", "automated", "agent", "ais", "bots", "chatbots", "assistants"}
	ansSelfWords      = []string{"this", "these", "the above", "the following", "whatever", "anything", "everything", "when the", "whoever", "anyone", "anybody", "if you are"}
	ansAsideWords     = []string{"ignore", "disregard", "forget", "pay no", "skip", "set aside", "never mind", "rather than", "instead of", "don't", "do not"}
	ansFrameWords     = []string{"answer", "respon", "repl", "summar", "explan", "explain", "output", "descri", "report", "review", "list", "analy", "process", "compar", "rank", "document", "discuss", "translat"}
)

// hasWordAny: one of words is a whole word of lt (ASCII letters and digits
// around it are no part of it).
func hasWordAny(lt string, words []string) bool {
	isW := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for _, w := range words {
		for i := 0; ; {
			j := strings.Index(lt[i:], w)
			if j < 0 {
				break
			}
			a, b := i+j, i+j+len(w)
			if (a == 0 || !isW(lt[a-1])) && (b == len(lt) || !isW(lt[b])) {
				return true
			}
			i = a + 1
		}
	}
	return false
}

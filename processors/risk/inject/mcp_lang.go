package inject

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Tool descriptions in other languages. The verb lists of the other tool
// rules are English; a poisoned description in German, French, Spanish,
// Italian, Portuguese, Dutch, Polish, Russian, Chinese, Japanese or Korean
// still says two things a tool's documentation does not: an order to keep
// something from the user ("Erwähne dies dem Benutzer gegenüber nicht",
// "No informes al usuario", "不要告诉用户", "ユーザーには確認しないで"),
// or that the tool acts covertly ("stuurt ook stilletjes", "envoie
// discrètement", "envia silenciosamente"). Either is strong when the text
// also names something to hide (a destination, a server, a secret store,
// another tool), weak otherwise: a quiet mode said in Spanish
// ("se ejecuta silenciosamente") names none.

var (
	foreignConcealRe = core.LazyRE(`(?i)` +
		// German
		`\b(?:erwähne|erwähnen|sage|sag|sagen|teile|informiere|informieren|benachrichtige|verrate|zeige|frage|fragen)\b[^.!?\n]{0,60}?\b(?:benutzer|nutzer|anwender)\w*[^.!?\n]{0,30}?\b(?:nicht|niemals|nie)\b` +
		`|\b(?:nicht|niemals|nie)\s+(?:dem|den)\s+(?:benutzer|nutzer|anwender)\w*\s+(?:sagen|mitteilen|erwähnen|zeigen)\b|\bohne\s+(?:den\s+|die\s+|dem\s+)?(?:benutzer|nutzer|anwender)\w*\s+(?:zu\s+)?(?:informieren|fragen|benachrichtigen)\b|\bohne\s+(?:wissen|zustimmung|rückfrage)|\bheimlich\b|\bunbemerkt\b|\bstillschweigend\b` +
		// French
		`|\bne\s+(?:le\s+|lui\s+|leur\s+|rien\s+|en\s+)*(?:dites|dis|mentionnez|mentionne|signalez|signale|informez|informe|demandez|demande|parlez|parle|montrez|montre)\b[^.!?\n]{0,40}?\b(?:pas|jamais|rien)\b|\bn'en\s+(?:parlez|parle|informez|dites)\s+pas\b|\bsans\s+(?:en\s+|le\s+|lui\s+|l'en\s+)?(?:informer|avertir|prévenir|prevenir|demander|le dire|notifier|aviser)\b|discrètement|\bsecrètement|\ben secret\b|\bà l'insu|\bl'insu de` +
		// Spanish
		`|\bno\s+(?:le\s+|les\s+|lo\s+|se\s+lo\s+)*(?:informes|informe|digas|diga|menciones|mencione|avises|avise|comuniques|comunique|cuentes|cuente|preguntes|pregunte|pidas|pida|muestres|muestre)\b|\bsin\s+(?:informar|avisar|decir(?:le)?|notificar|preguntar|consultar|pedir)\b|\bsilenciosamente\b|\ben secreto\b|\ba escondidas\b|\bsin que el usuario\b` +
		// Italian
		`|\bnon\s+(?:lo\s+|gli\s+|le\s+)*(?:dire|dirlo|dirgli|menzionare|informare|avvisare|chiedere|comunicare|mostrare|segnalare|rivelare)\b|\bsenza\s+(?:informare|avvisare|dire|chiedere|notificare)\b|\bdi nascosto\b|\bsilenziosamente\b|\bsegretamente\b|\ball'insaputa` +
		// Portuguese
		`|\bnão\s+(?:o\s+|lhe\s+)*(?:informe|diga|mencione|avise|conte|pergunte|peça|mostre|comunique)\b|\bsem\s+(?:informar|avisar|dizer|perguntar|notificar|pedir)\b|\bsecretamente\b|\bem segredo\b|\bsem que o usu` +
		// Dutch
		`|\bstilletjes\b|\bongemerkt\b|\bheimelijk\b|\bin het geheim\b|\bzonder\s+(?:de gebruiker\s+)?(?:te\s+)?(?:informeren|melden|vragen|waarschuwen|laten weten)\b|\bvertel\s+(?:dit|het)\s+niet\b|\bniet\s+(?:vertellen|melden|vermelden)\b` +
		// Polish
		`|\bnie\s+(?:informuj|mów|wspominaj|pytaj|pokazuj)|\bpo cichu\b|\bpotajemnie\b|\bbez wiedzy\b` +
		// Russian
		`|не\s+(?:сообщай|сообщайте|говори|говорите|упоминай|упоминайте|рассказывай|рассказывайте|спрашивай|спрашивайте|уведомляй|показывай)|тайно|незаметно|скрытно|без ведома|без уведомления|без согласия|без подтверждения` +
		// Chinese
		`|不要(?:告诉|通知|提醒|询问|提及|让用户|向用户)|不要告知|无需(?:告知|通知|确认|询问)|不必(?:告知|通知|确认)|悄悄|秘密地|偷偷|暗中|静默地` +
		// Japanese
		`|(?:伝え|知らせ|確認し|言わ|通知し|尋ね|聞か|見せ)ないで|こっそり|密かに|ひそかに|黙って|内緒で` +
		// Korean
		`|(?:알리지|묻지|말하지|확인하지|보여주지)\s*마|몰래|비밀리에|모르게`)
	// foreignRemoteRe: a server or a partner named in another language.
	foreignRemoteRe = core.LazyRE(`(?i)\b(?:server|serveur|serveurs|servidor|servidores|servizio|parceiros|partenaires|socios|partner|partners|terceiros|terceros|tiers|derden|dritte)\b|сервер|服务器|サーバ|서버`)
	// foreignCovertAdverbs: the matches of foreignConcealRe that say
	// how the tool acts, not what the model must not say.
	foreignCovertAdverbs = []string{"heimlich", "unbemerkt", "stillschweigend", "discrètement", "secrètement", "en secret", "silenciosamente", "en secreto", "a escondidas", "di nascosto", "segretamente", "secretamente", "em segredo", "stilletjes", "ongemerkt", "heimelijk", "in het geheim", "po cichu", "potajemnie", "тайно", "незаметно", "скрытно", "悄悄", "秘密地", "偷偷", "暗中", "静默地", "こっそり", "密かに", "ひそかに", "몰래", "비밀리에"}
)

// toolForeign adds conceal-from-user (an order to keep something from the
// user) or mcp-covert-behavior (the tool acts covertly) for tool text in
// another language: strong when the text also names something to hide.
func (s *scanner) toolForeign(tool, text string) {
	loc := foreignConcealRe.FindStringIndex(text)
	if loc == nil {
		return
	}
	strong := hasHiddenAction(tool, text) || foreignRemoteRe.MatchString(text) || strings.Contains(text, "~/")
	m := strings.ToLower(text[loc[0]:loc[1]])
	for _, a := range foreignCovertAdverbs {
		if m == a {
			s.add(injMcpCovertBehavior, "the tool description says it acts without the user knowing ("+text[loc[0]:loc[1]]+")", loc[0], loc[1], strong)
			return
		}
	}
	s.add(injConcealFromUser, "the tool description tells the model to keep something from the user ("+text[loc[0]:loc[1]]+")", loc[0], loc[1], strong)
}

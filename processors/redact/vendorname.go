package redact

import "strings"

// API vendors whose keys carry no prefix of their own (32 or 40 hex
// digits, a UUID, a run of letters and digits): only the vendor's name
// beside the value tells such a key apart. Secret scanners keep a
// detector per vendor for them; here one rule, vendor-name-value, reads
// a generated value given to a name that is the vendor's alone
// ("amplitude": "…", coveralls = "…", Deepgram VALUE, new Hunter("…")).
// Names that are also common words are left out: their keyword would hit
// prose, and their rule would read values that are not keys.
var apiVendorNames = []string{
	"abuseipdb", "adafruit", "airbrake", "airship", "airtable", "airvisual", "aiven", "alchemy",
	"algolia", "amplitude", "apify", "appcues", "appveyor", "asana", "assemblyai", "auth0",
	"aviationstack", "aylien", "ayrshare", "bannerbear", "baremetrics", "beamer", "bitbar",
	"bitfinex", "bitly", "bitmex", "blazemeter", "bombbomb", "borgbase", "braintree", "brandfetch",
	"browserstack", "bugherd", "bugsnag", "buildkite", "buttercms", "calendarific", "calendly",
	"capsulecrm", "censys", "chartmogul", "circleci", "clearbit", "clicksend", "clickup",
	"clockify", "cloudconvert", "cloudflare", "cloudinary", "cloudsmith", "codacy",
	"codeclimate", "codecov", "codemagic", "coinapi", "coinlayer", "coinmarketcap", "confluent",
	"contentful", "convertkit", "coveralls", "crowdin", "currencylayer", "customerio", "datadog",
	"deepai", "deepgram", "deepl", "delighted", "detectlanguage", "diffbot", "disqus", "docparser",
	"docusign", "dropbox", "dwolla", "dynatrace", "edamam", "elasticemail", "etherscan", "ethplorer",
	"etsy", "eventbrite", "everhour", "exchangerates", "faceplusplus", "fastly", "filestack",
	"finnhub", "fixerio", "flickr", "flightstats", "flutterwave", "foursquare", "freshbooks",
	"freshdesk", "freshservice", "fullstory", "geckoboard", "geocodio", "getresponse", "gitter",
	"gocardless", "graphhopper", "gtmetrix", "gumroad", "gyazo", "hellosign", "helpscout",
	"heroku", "hetzner", "holidayapi", "honeybadger", "honeycomb", "hubspot", "hunter", "hypertrack",
	"iconfinder", "iexcloud", "imagekit", "imagga", "imgur", "infura", "insightly", "instamojo",
	"intercom", "intrinio", "ipapi", "ipgeolocation", "ipinfo", "ipinfodb", "ipstack", "jotform",
	"jumpcloud", "kickbox", "klaviyo", "klipfolio", "kucoin", "lastfm", "launchdarkly", "leadfeeder",
	"linode", "loggly", "logdna", "logzio", "lokalise", "loginradius", "madkudu", "magicbell",
	"mailboxlayer", "mailchimp", "mailerlite", "mailgun", "mailjet", "mailmodo", "mailsac",
	"mandrill", "mapbox", "mapquest", "marketstack", "mattermost", "mavenlink", "maxmind",
	"meaningcloud", "mediastack", "meistertask", "messagebird", "mindmeister", "mixmax",
	"mixpanel", "monkeylearn", "moosend", "moralis", "nasdaqdatalink", "neutrinoapi", "newrelic",
	"newsapi", "newscatcher", "nexmo", "nightfall", "noticeable", "nylas", "oopspam", "opencagedata",
	"openuv", "openweather", "openweathermap", "opsgenie", "optimizely", "packagecloud", "pagerduty",
	"pandadoc", "pandascore", "paperform", "paralleldots", "parsehub", "partnerstack", "pastebin",
	"paymongo", "paystack", "pdflayer", "pdfshift", "peopledatalabs", "pepipost", "pinata",
	"pipedream", "pipedrive", "pivotaltracker", "pixabay", "plivo", "podio", "positionstack",
	"postageapp", "postmark", "pubnub", "purestake", "pushbullet", "pusher", "pushover", "qualaroo",
	"rapidapi", "rawg", "rebrandly", "ringcentral", "ritekit", "rocketreach", "rockset", "rollbar",
	"route4me", "saucelabs", "scaleway", "scraperapi", "scrapestack", "scrapfly", "scrapingant",
	"scrapingbee", "securitytrails", "sendbird", "sendgrid", "sendinblue", "serpapi", "serpstack",
	"sheety", "shodan", "shotstack", "shutterstock", "signalwire", "smartsheet", "smartystreets",
	"snipcart", "snyk", "sonarcloud", "sparkpost", "spoonacular", "spotify", "stormglass",
	"storyblok", "strava", "sumologic", "surveysparrow", "swiftype", "taxjar", "telnyx",
	"testingbot", "textmagic", "thousandeyes", "ticketmaster", "tiingo", "timecamp", "todoist",
	"toggl", "tomtom", "tradier", "travisci", "trello", "twelvedata", "twilio", "twitch", "typeform",
	"ubidots", "unsplash", "uploadcare", "uptimerobot", "urlscan", "userstack", "vatlayer",
	"virustotal", "visualcrossing", "vonage", "vultr", "walkscore", "weatherbit", "weatherstack",
	"webex", "webflow", "whoxy", "wistia", "wrike", "yelp", "zapier", "zendesk", "zenrows",
	"zenscrape", "zenserp", "zeplin", "zerobounce", "zipcodeapi", "zoho", "zoom", "zulip",
}

// vendorNameSuffixes may follow the vendor's name in a name that is still
// the vendor's alone (pusher_app, Trello.io, WEBFLOW_API).
var vendorNameSuffixes = map[string]bool{
	"api": true, "io": true, "com": true, "app": true, "cloud": true, "hq": true, "ai": true,
	"prod": true, "production": true, "live": true,
}

// detectVendorName removes a generated value given to a vendor's name: by
// an operator (amplitude = "…", "rollbar": "…"), after blanks (Pagerduty
// VALUE), or as the first argument of its constructor (new Hunter("…")).
// A name with more words than the vendor's is left to the assignment
// rules, which know secret words (a Trello board id is not a key); the
// value must look generated, or be a UUID (Heroku's, Loggly's and Snyk's
// keys are UUIDs).
func detectVendorName(sc *scan, hits []ruleHit) {
	s := sc.s
	last := -1
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < last {
			continue
		}
		ns, ne := identBounds(s, h.start, h.end)
		sc.charge(ne - ns + 1)
		last = ne
		if !vendorOnlyName(s[ns:ne], h.end-h.start) {
			continue
		}
		var vs, ve int
		var ok bool
		if ne+2 < len(s) && s[ne] == '(' && isQuote(s[ne+1]) {
			vs, ve, _, ok = sc.parseValue(ne+1, false)
		} else if vs, ve, _, ok = sc.assignedValue(ns, ne, false); !ok {
			vs, ve, _, ok = sc.spacedValue(ns, ne)
		}
		if !ok {
			continue
		}
		sc.charge(ve - vs)
		if v := s[vs:ve]; vendorKeyValue(v, sc.r.threshold) && (vs == 0 || s[vs-1] != '@') {
			sc.emit(vs, ve, ns, ve)
		}
	}
}

// vendorOnlyName reports whether name is a vendor's name (the keyword,
// kwLen bytes, at its start) alone or with vendorNameSuffixes.
func vendorOnlyName(name string, kwLen int) bool {
	var buf [16]string
	toks := splitName(strings.Trim(name, "-._"), buf[:0])
	if len(toks) == 0 || len(toks[0]) != kwLen {
		return false
	}
	for _, t := range toks[1:] {
		if !vendorNameSuffixes[t] {
			return false
		}
	}
	return true
}

// vendorKeyValue: a UUID, or a generated token of 16 to 200 letters,
// digits, - and _ that holds a digit and is no digest, path or stand-in.
func vendorKeyValue(v string, threshold float64) bool {
	if len(v) < 16 || len(v) > 200 || !hasDigit(v) || isPlaceholderValue(v) || isDigest(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return isUUIDShape(v) || looksRandomToken(v, 16, max(threshold, 3.0)) && !isWordyPhrase(v)
}

// isUUIDShape reports whether v is a UUID in its 8-4-4-4-12 hex form.
func isUUIDShape(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

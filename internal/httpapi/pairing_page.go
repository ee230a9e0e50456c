package httpapi

import (
	"net/http"
)

// The pairing page: what a browser opening /pair sees. It asks for a code
// (POST /pair), shows it with the command the admin runs, and polls
// GET /pair/{request_id} with its secret until the admin decides; once
// approved, the poll sets the session cookie and the page goes to the
// approval page at /. Like the approval page it sets every field as text
// and runs under the same Content-Security-Policy (its script is
// /pair.js, no inline script). The request's id, code and secret are kept
// in sessionStorage, so a reload polls the same request instead of asking
// for another (which the per-client limit would refuse).

const pairingHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Vigil — pair this device</title>
<link rel="stylesheet" href="/ui/assets/app.css">
<script src="/pair.js" defer></script>
</head>
<body>
<header><h1>Vigil</h1></header>
<main>
  <section id="pairing">
    <h2>Pair this device</h2>
    <p id="pair-status">Asking for a code…</p>
    <p><code id="pair-code" class="pair-code"></code></p>
    <p id="pair-help" hidden>On the host that runs Vigil, the admin runs:<br><code id="pair-command"></code><br>
      This page becomes the approval page once they approve. The code expires at <span id="pair-expires"></span>.</p>
    <p><button type="button" id="pair-again" hidden>Ask for a new code</button></p>
  </section>
</main>
</body>
</html>
`

const pairingJS = `"use strict";
(function () {
  var KEY = "vigil-pairing";
  var $ = function (id) { return document.getElementById(id); };
  function say(text) { $("pair-status").textContent = text; }
  function show(p) {
    $("pair-code").textContent = p.code;
    $("pair-command").textContent = p.approve;
    $("pair-expires").textContent = new Date(p.expires_at).toLocaleTimeString();
    $("pair-help").hidden = false;
  }
  function again(text) {
    sessionStorage.removeItem(KEY);
    say(text);
    $("pair-code").textContent = "";
    $("pair-help").hidden = true;
    $("pair-again").hidden = false;
  }
  function poll(p) {
    fetch(p.status_url, { headers: { "Vigil-Pair-Secret": p.secret }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); })
      .then(function (res) {
        var b = res.body;
        if (res.status === 200 && b.state === "pending") {
          say("Waiting for the admin to approve this code…");
          setTimeout(function () { poll(p); }, 1500);
        } else if (res.status === 200 && b.state === "approved" && b.session) {
          sessionStorage.removeItem(KEY);
          say("Paired as " + b.name + ". Opening the approval page…");
          document.body.dataset.paired = b.name;
          setTimeout(function () { location.assign("/"); }, 500);
        } else if (res.status === 200) {
          again("This request was " + b.state + (b.reason ? " (" + b.reason + ")" : "") + ".");
        } else {
          again(b.error || ("Pairing failed (" + res.status + ")."));
        }
      })
      .catch(function () { setTimeout(function () { poll(p); }, 3000); });
  }
  function start() {
    $("pair-again").hidden = true;
    var kept = sessionStorage.getItem(KEY);
    if (kept) {
      var p = JSON.parse(kept);
      show(p);
      poll(p);
      return;
    }
    say("Asking for a code…");
    fetch("/pair", { method: "POST", credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); })
      .then(function (res) {
        if (res.status !== 201) { again(res.body.error || ("No code (" + res.status + ").")); return; }
        sessionStorage.setItem(KEY, JSON.stringify(res.body));
        show(res.body);
        poll(res.body);
      })
      .catch(function () { again("The server did not answer."); });
  }
  $("pair-again").addEventListener("click", start);
  start();
})();
`

// pairingPage is GET /pair: the page a browser to pair opens.
func (s *Server) pairingPage(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if e := s.refuseAgents(r); e != nil {
		return e
	}
	pageHeaders(w, "text/html; charset=utf-8")
	w.Write([]byte(pairingHTML))
	return nil
}

// pairingScript is GET /pair.js, the pairing page's script.
func (s *Server) pairingScript(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if e := s.refuseAgents(r); e != nil {
		return e
	}
	pageHeaders(w, "text/javascript; charset=utf-8")
	w.Write([]byte(pairingJS))
	return nil
}

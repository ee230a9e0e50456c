// Vigil's approval page. Plain JavaScript, no build step, no library.
//
// The agent writes the commands shown here: treat every field as hostile.
// Nothing received is ever parsed as HTML: elements are made with
// createElement and data goes in as text nodes (el() below); there is no
// innerHTML, insertAdjacentHTML or document.write in this file, and the
// Content-Security-Policy forbids inline script anyway.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);

  // el makes an element with attributes and children; strings become
  // text nodes, never markup.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const state = {
    session: null, // {role, name, csrf, expires}
    cards: new Map(), // action id → {p, node, detail, busy}
    order: [], // action ids, oldest first
    selected: null,
    es: null,
    snapshot: null, // ids received since the stream (re)opened, until "ready"
    history: [], // decisions, newest first
    view: "queue",
  };

  // ---- API ----

  async function api(method, path, body) {
    const opts = { method, headers: {}, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    if (method !== "GET" && state.session) opts.headers["Vigil-CSRF"] = state.session.csrf;
    const resp = await fetch(path, opts);
    let data = null;
    const ct = resp.headers.get("Content-Type") || "";
    if (ct.startsWith("application/json")) {
      try { data = await resp.json(); } catch (_) { data = null; }
    }
    if (resp.status === 401 && path !== "/ui/session") {
      loggedOut("Your session ended; log in again.");
    }
    return { status: resp.status, data };
  }

  function errText(r) {
    return (r.data && r.data.error) ? r.data.error : "HTTP " + r.status;
  }

  // ---- session ----

  async function start() {
    const r = await api("GET", "/ui/session");
    if (r.status === 200) loggedIn(r.data);
    else loggedOut("");
  }

  function loggedIn(sess) {
    state.session = sess;
    $("login").hidden = true;
    $("tabs").hidden = false;
    $("logout").hidden = false;
    $("who").textContent = sess.name + " (" + sess.role + ")";
    show(state.view);
    connect();
  }

  function loggedOut(msg) {
    state.session = null;
    if (state.es) { state.es.close(); state.es = null; }
    for (const id of [...state.order]) removeCard(id);
    setLive("off", "offline");
    $("tabs").hidden = true;
    $("logout").hidden = true;
    $("queue").hidden = true;
    $("history").hidden = true;
    $("who").textContent = "";
    $("login").hidden = false;
    $("login-error").textContent = msg || "";
    $("login-token").focus();
  }

  $("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const token = $("login-token").value.trim();
    const name = $("login-name").value.trim();
    $("login-submit").disabled = true;
    try {
      const r = await api("POST", "/ui/session", { token, name });
      if (r.status === 200) {
        $("login-token").value = "";
        loggedIn(r.data);
      } else {
        $("login-error").textContent = errText(r);
      }
    } catch (e) {
      $("login-error").textContent = "cannot reach Vigil: " + e;
    } finally {
      $("login-submit").disabled = false;
    }
  });

  $("logout").addEventListener("click", async () => {
    await api("DELETE", "/ui/session");
    loggedOut("Logged out.");
  });

  // ---- live stream ----

  function setLive(s, text) {
    const l = $("live");
    l.dataset.state = s;
    l.textContent = text;
  }

  function connect() {
    if (state.es) state.es.close();
    setLive("connecting", "connecting…");
    const es = new EventSource("/v1/stream");
    state.es = es;
    es.addEventListener("open", () => { state.snapshot = new Set(); });
    es.addEventListener("pending", (m) => {
      const p = parse(m.data);
      if (!p || typeof p.id !== "string") return;
      if (state.snapshot) state.snapshot.add(p.id);
      addCard(p);
    });
    es.addEventListener("ready", () => {
      // After a reconnect, what is not in the queue any more was decided
      // while the stream was down.
      if (state.snapshot) {
        for (const id of [...state.order]) if (!state.snapshot.has(id)) removeCard(id);
      }
      state.snapshot = null;
      setLive("on", "live");
      document.body.dataset.ready = "1";
    });
    es.addEventListener("decided", (m) => {
      const d = parse(m.data);
      if (!d || typeof d.action_id !== "string") return;
      const c = state.cards.get(d.action_id);
      if (c && (!d.log_seq || d.log_seq === c.p.seq)) {
        d.command = c.p.command;
        removeCard(d.action_id);
      }
      addHistory(d, true);
    });
    es.addEventListener("overflow", () => { es.close(); setTimeout(connect, 500); });
    es.addEventListener("error", async () => {
      if (es.readyState === EventSource.CLOSED) {
        setLive("off", "offline");
        // Closed for good: the session may have ended (401); else retry.
        const r = await api("GET", "/ui/session");
        if (r.status === 200 && state.es === es) setTimeout(connect, 2000);
        else if (r.status !== 200) loggedOut("Your session ended; log in again.");
      } else {
        setLive("connecting", "reconnecting…");
      }
    });
  }

  function parse(s) {
    try { return JSON.parse(s); } catch (_) { return null; }
  }

  // ---- queue ----

  function levelClass(level) {
    return "level level-" + String(level || "UNKNOWN").toLowerCase().replace(/[^a-z]/g, "");
  }

  function addCard(p) {
    const old = state.cards.get(p.id);
    if (old && old.p.seq === p.seq) return;
    if (old) removeCard(p.id);
    const reason = el("input", { type: "text", class: "reason", maxlength: "2000", placeholder: "reason (sent with the verdict)", "aria-label": "reason" });
    const msg = el("p", { class: "msg", role: "status" });
    const buttons = el("div", { class: "actions" },
      verdictButton(p.id, "once", "Allow once", "o"),
      verdictButton(p.id, "session", "Allow session", "s"),
      verdictButton(p.id, "always", "Always", "a"),
      verdictButton(p.id, "deny", "Deny", "d"));
    const detail = el("div", { class: "detail" }, el("p", { class: "muted", text: "loading details…" }));
    const reasons = el("ul", { class: "reasons" },
      (p.reasons || []).map((r) => el("li", {},
        el("span", { class: levelClass(r.level), text: r.level || "-" }), " ",
        el("code", { text: (r.analyzer || "") + "/" + (r.rule || "") }),
        r.detail ? ": " + r.detail : "")));
    const node = el("li", { class: "card", "data-id": p.id, tabindex: "-1", onclick: () => select(p.id) },
      el("div", { class: "head" },
        el("span", { class: levelClass(p.level), text: p.level || "UNKNOWN" }),
        el("span", { class: "tool", text: p.tool || "" }),
        el("span", { class: "meta", text: [p.conversation, p.agent, p.backend].filter(Boolean).join(" · ") })),
      el("pre", { class: "command" }, el("code", { class: "command-text", text: p.command || "" })),
      (p.reasons && p.reasons.length) ? reasons : el("p", { class: "muted", text: "no rule fired" }),
      detail,
      el("div", { class: "decide" }, reason, buttons),
      msg,
      el("p", { class: "foot muted", text: "log seq " + p.seq + (p.time ? " · " + p.time : "") + (p.timeout ? " · times out after " + p.timeout : "") }));
    const c = { p, node, detail, reason, msg, busy: false };
    state.cards.set(p.id, c);
    state.order.push(p.id);
    $("pending").append(node);
    node.dataset.shown = String(Date.now()); // when it appeared (the benchmark reads it)
    if (!state.selected) select(p.id);
    updateCount();
    loadDetail(c);
  }

  function verdictButton(id, verdict, label, key) {
    return el("button", { type: "button", class: "verdict verdict-" + verdict, "data-verdict": verdict,
      title: label + " (" + key + ")", onclick: (ev) => { ev.stopPropagation(); decide(id, verdict); } },
    label, " ", el("kbd", { text: key }));
  }

  function removeCard(id) {
    const c = state.cards.get(id);
    if (!c) return;
    c.node.remove();
    state.cards.delete(id);
    const i = state.order.indexOf(id);
    if (i >= 0) state.order.splice(i, 1);
    if (state.selected === id) {
      state.selected = null;
      const next = state.order[Math.min(i, state.order.length - 1)];
      if (next) select(next);
    }
    updateCount();
  }

  function updateCount() {
    $("count").textContent = String(state.order.length);
    $("empty").hidden = state.order.length > 0;
    document.title = (state.order.length ? "(" + state.order.length + ") " : "") + "Vigil — approvals";
  }

  function select(id) {
    if (state.selected && state.cards.has(state.selected)) state.cards.get(state.selected).node.classList.remove("selected");
    state.selected = id;
    const c = state.cards.get(id);
    if (c) {
      c.node.classList.add("selected");
      if (document.activeElement === document.body || !document.activeElement || !c.node.contains(document.activeElement)) {
        c.node.scrollIntoView({ block: "nearest" });
      }
    }
  }

  async function loadDetail(c) {
    const r = await api("GET", "/ui/actions/" + encodeURIComponent(c.p.id) + "?seq=" + encodeURIComponent(c.p.seq));
    if (!state.cards.has(c.p.id)) return;
    c.detail.replaceChildren();
    if (r.status !== 200) {
      c.detail.append(el("p", { class: "muted", text: "details unavailable: " + errText(r) }));
      return;
    }
    const d = r.data;
    const parts = [];
    const v = d.view || {};
    if (v.commands && v.commands.length) {
      parts.push(el("details", { class: "parsed", open: true },
        el("summary", { text: "Commands found (" + v.commands.length + ")" }),
        el("ul", {}, v.commands.map((cmd) => el("li", { style: null },
          el("code", { text: "  ".repeat(cmd.depth || 0) + [cmd.name].concat(cmd.argv || []).join(" ") }),
          cmd.sudo ? el("span", { class: "note", text: " as root" }) : null,
          (cmd.via && cmd.via.length) ? el("span", { class: "note", text: " via " + cmd.via.join(" → ") }) : null)))));
    }
    const facts = [];
    if (v.paths && v.paths.length) facts.push(["Paths", v.paths.join(", ")]);
    if (v.hosts && v.hosts.length) facts.push(["Hosts", v.hosts.join(", ")]);
    if (v.parse_error) facts.push(["Parse", v.parse_error]);
    if (d.event && d.event.data && d.event.data.cwd) facts.push(["Cwd", String(d.event.data.cwd)]);
    if (facts.length) {
      parts.push(el("dl", { class: "facts" }, facts.map(([k, val]) => [el("dt", { text: k }), el("dd", { text: val })])));
    }
    const args = d.event && d.event.data ? d.event.data.args : undefined;
    if (args !== undefined) {
      parts.push(el("details", { class: "args" },
        el("summary", { text: "Arguments (as stored, secrets redacted)" }),
        el("pre", {}, el("code", { text: JSON.stringify(args, null, 2) }))));
    }
    if (d.context && d.context.length) {
      parts.push(el("details", { class: "context", open: true },
        el("summary", { text: "Conversation, last " + d.context.length + " events" }),
        el("ol", {}, d.context.map((e) => el("li", {},
          el("span", { class: "kind", text: e.kind }), " ",
          el("span", { class: "ctx-text", text: e.text }))))));
    }
    if (!parts.length) parts.push(el("p", { class: "muted", text: "no more detail" }));
    c.detail.append(...parts);
  }

  async function decide(id, verdict) {
    const c = state.cards.get(id);
    if (!c || c.busy) return;
    const reason = c.reason.value.trim();
    c.busy = true;
    c.node.classList.add("busy");
    c.msg.textContent = "sending " + verdict + "…";
    try {
      const r = await api("POST", "/v1/approvals", { action_id: id, verdict, reason });
      if (r.status === 200 || r.status === 202) {
        c.msg.textContent = (r.status === 200 ? "decided: " : "recorded, waiting for the gate: ") + verdict;
        if (r.status === 200) setTimeout(() => removeCard(id), 300);
      } else {
        c.msg.textContent = "not decided: " + errText(r);
        if (r.status === 404) setTimeout(() => removeCard(id), 1500);
      }
    } catch (e) {
      c.msg.textContent = "not sent: " + e;
    } finally {
      c.busy = false;
      c.node.classList.remove("busy");
    }
  }

  // ---- history ----

  function addHistory(d, live) {
    if (state.history.some((h) => h.action_id === d.action_id && h.log_seq === d.log_seq)) return;
    if (live) state.history.unshift(d);
    else state.history.push(d);
    if (state.history.length > 200) state.history.length = 200;
    if (state.view === "history") renderHistory();
  }

  async function loadHistory() {
    const r = await api("GET", "/ui/history");
    if (r.status !== 200) {
      $("audit").textContent = "history unavailable: " + errText(r);
      return;
    }
    for (const d of r.data.decisions || []) addHistory(d, false);
    state.history.sort((a, b) => (b.decision_seq || 0) - (a.decision_seq || 0));
    const a = r.data.audit || {};
    let text;
    if (a.verified) text = "Audit: verified up to checkpoint of log record " + a.checkpoint + ".";
    else if (a.checkpoint) text = "Audit: log records 1–" + a.checkpoint + " are covered by the last signed checkpoint (not verified by this page). " + (a.note || "");
    else text = "Audit: " + (a.note || "no checkpoint yet");
    $("audit").textContent = text;
    renderHistory();
  }

  function renderHistory() {
    const body = $("decisions-body");
    body.replaceChildren(...state.history.map((d) => el("tr", { class: "outcome-" + (d.outcome === "allow" ? "allow" : "deny") },
      el("td", { text: d.time || "" }),
      el("td", {}, el("code", { text: d.command || d.action_id }), el("div", { class: "muted", text: d.conversation || "" })),
      el("td", { text: (d.outcome || "") + (d.verdict ? " (" + d.verdict + ")" : "") + (d.reason ? ": " + d.reason : "") }),
      el("td", { text: (d.by || "") + (d.approver ? " · " + d.approver : "") }))));
  }

  // ---- views and keys ----

  function show(view) {
    state.view = view;
    $("queue").hidden = view !== "queue";
    $("history").hidden = view !== "history";
    $("tab-queue").setAttribute("aria-pressed", String(view === "queue"));
    $("tab-history").setAttribute("aria-pressed", String(view === "history"));
    if (view === "history") loadHistory();
  }

  $("tab-queue").addEventListener("click", () => show("queue"));
  $("tab-history").addEventListener("click", () => show("history"));
  $("help-toggle").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });

  function move(delta) {
    if (!state.order.length) return;
    let i = state.order.indexOf(state.selected);
    i = i < 0 ? 0 : Math.max(0, Math.min(state.order.length - 1, i + delta));
    select(state.order[i]);
  }

  document.addEventListener("keydown", (ev) => {
    if (!state.session || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA");
    if (typing) {
      if (ev.key === "Escape") t.blur();
      else if (ev.key === "Enter" && t.classList.contains("reason") && state.selected) {
        ev.preventDefault();
        decide(state.selected, "deny");
      }
      return;
    }
    const keys = {
      j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
      o: () => state.selected && decide(state.selected, "once"),
      s: () => state.selected && decide(state.selected, "session"),
      a: () => state.selected && decide(state.selected, "always"),
      d: () => state.selected && decide(state.selected, "deny"),
      r: () => state.selected && state.cards.get(state.selected).reason.focus(),
      q: () => show("queue"), h: () => show("history"),
      "?": () => { $("help").hidden = !$("help").hidden; },
    };
    const f = keys[ev.key];
    if (f) { ev.preventDefault(); f(); }
  });

  start();
})();

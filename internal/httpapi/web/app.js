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

  // ---- showing agent text ----
  //
  // The agent writes the text shown here, and wants to fool the person
  // reading it. visible() turns a string into nodes where every character
  // that could hide or reorder text is shown as an escape, never
  // interpreted: C0 controls and DEL (ESC as \x1b; newline and tab are
  // kept), C1 controls, bidi controls (U+202A–U+202E, U+2066–U+2069,
  // U+061C) and zero-width or invisible characters (U+200B–U+200F,
  // U+2060–U+2065, U+FEFF, U+2028/U+2029) as ⟨U+202E⟩. Escapes are styled
  // elements (span.esc), so a literal "\x1b" the agent typed does not look
  // like one. textBlock() never cuts silently: a long text shows its head
  // and tail with "… N bytes not shown" and a button for the whole text.
  const hiddenRe = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

  function escName(ch) {
    const c = ch.codePointAt(0);
    if (c < 0x20 || c === 0x7f) return "\\x" + c.toString(16).padStart(2, "0");
    return "⟨U+" + c.toString(16).toUpperCase().padStart(4, "0") + "⟩";
  }

  function visible(s) {
    s = String(s === undefined || s === null ? "" : s);
    const out = [];
    let last = 0;
    hiddenRe.lastIndex = 0;
    for (let m; (m = hiddenRe.exec(s)) !== null;) {
      if (m.index > last) out.push(document.createTextNode(s.slice(last, m.index)));
      const e = document.createElement("span");
      e.className = "esc";
      e.textContent = escName(m[0]);
      e.title = "a hidden or control character, shown, not interpreted";
      out.push(e);
      last = m.index + m[0].length;
    }
    if (last < s.length) out.push(document.createTextNode(s.slice(last)));
    return out;
  }

  function hiddenCount(s) {
    const m = String(s || "").match(hiddenRe);
    return m ? m.length : 0;
  }

  const utf8 = new TextEncoder();
  const byteLen = (s) => utf8.encode(s).length;

  // textBlock shows s in a <code> (class cls): whole when short, else its
  // first headLines lines (≤ headChars) and last tailLines lines
  // (≤ tailChars) around a marker saying how many bytes are not shown,
  // with a button showing the whole. notCarried: bytes the server did not
  // send at all, between s (the head) and tailText (the text's last
  // bytes): the tail shown is always the text's true end.
  function textBlock(s, cls, o) {
    o = Object.assign({ maxChars: 1200, maxLines: 14, headChars: 600, headLines: 8, tailChars: 400, tailLines: 4, notCarried: 0, tailText: "" }, o || {});
    s = String(s === undefined || s === null ? "" : s);
    const end = o.notCarried > 0 ? String(o.tailText || "") : "";
    const code = el("code", { class: cls });
    const total = byteLen(s) + o.notCarried + byteLen(end);
    const all = s + end;
    const lines = all.split("\n");
    const long = o.notCarried > 0 || all.length > o.maxChars || lines.length > o.maxLines;
    const whole = () => {
      code.replaceChildren(...visible(s));
      if (o.notCarried > 0) code.append(el("span", { class: "cut", text: "\n… " + o.notCarried + " bytes not sent to the page (in the stored arguments) …\n" }), ...visible(end));
    };
    if (!long) {
      whole();
      return code;
    }
    let head = s.split("\n").slice(0, o.headLines).join("\n");
    if (head.length > o.headChars) head = head.slice(0, o.headChars);
    const from = o.notCarried > 0 ? end : s;
    let tail = from.split("\n").slice(-o.tailLines).join("\n");
    if (tail.length > o.tailChars) tail = tail.slice(-o.tailChars);
    if (o.notCarried === 0 && head.length + tail.length >= s.length) {
      whole();
      return code;
    }
    const hidden = total - byteLen(head) - byteLen(tail);
    const more = el("button", { type: "button", class: "show-all link", onclick: (ev) => {
      ev.stopPropagation();
      whole();
      code.classList.add("whole");
      const pre = code.closest("pre");
      if (pre) pre.classList.add("expanded");
    } },
      "show all " + total + " bytes");
    code.append(...visible(head),
      el("span", { class: "cut" }, "\n… " + hidden + " bytes not shown … ", more, "\n"),
      ...visible(tail));
    return code;
  }

  const state = {
    session: null, // {role, name, csrf, expires}
    cards: new Map(), // action id → {p, node, detail, busy, loaded, arrived}
    order: [], // action ids as shown on this page
    selected: null, // "id@seq" of the card the person selected, never another
    // epoch counts the stream's pending and decided events: a queue read
    // knows every event before the epoch it was sent at, none after.
    epoch: 0,
    // decided are the actions ("id@seq") known decided: by the stream or
    // from this page. A queue read sent before it knew never brings one back.
    decided: new Map(),
    es: null,
    history: [], // decisions, newest first
    view: "queue",
    page: { order: "newest", offset: 0, limit: 50, anchor: 0, conversation: "", total: 0, newer: 0 },
    refreshTimer: null,
    refreshing: false,
    refreshAgain: false,
    lastRefresh: 0,
    auto: { allow: 0, deny: 0 },
    loads: { active: 0, queue: [], failed: 0, retried: 0 },
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
  //
  // The stream says what changed; the queue itself is paged from
  // /ui/pending (at most one reload a second, however fast the agents
  // ask), so a page with thousands waiting stays as fast as one.

  function setLive(s, text) {
    const l = $("live");
    l.dataset.state = s;
    l.textContent = text;
  }

  function connect() {
    if (state.es) state.es.close();
    setLive("connecting", "connecting…");
    const es = new EventSource("/v1/stream?snapshot=none");
    state.es = es;
    es.addEventListener("pending", (m) => {
      state.epoch++;
      showArrived(parse(m.data));
      scheduleRefresh();
    });
    es.addEventListener("ready", () => {
      setLive("on", "live");
      refreshNow();
    });
    es.addEventListener("decided", (m) => {
      const d = parse(m.data);
      if (!d || typeof d.action_id !== "string") return;
      state.epoch++;
      if (d.log_seq) markDecided(d.action_id, d.log_seq);
      const c = state.cards.get(d.action_id);
      if (c && (!d.log_seq || d.log_seq === c.p.seq)) {
        d.command = c.p.command;
        d.command_bytes = c.p.command_bytes;
        d.command_cut = c.p.command_cut;
        d.command_tail = c.p.command_tail;
        removeCard(d.action_id);
        // Fill the page from the next one, if there is more.
        state.page.total = Math.max(0, state.page.total - 1);
        if (state.page.total - state.page.newer > state.page.offset + state.order.length) scheduleRefresh();
        else updateCount();
      } else if (!c && d.waited) {
        scheduleRefresh(); // decided from this page (its card already gone) or elsewhere: recount
      }
      addHistory(d, true);
    });
    es.addEventListener("decided-summary", (m) => {
      const d = parse(m.data);
      if (!d) return;
      state.auto.allow += d.allow || 0;
      state.auto.deny += d.deny || 0;
      $("auto").textContent = "decided without a person since this page opened: " + state.auto.allow + " allowed, " + state.auto.deny + " denied";
    });
    es.addEventListener("gap", (m) => {
      // Events were missed (this page read too slowly): reload the queue.
      const d = parse(m.data) || {};
      document.body.dataset.gaps = String(Number(document.body.dataset.gaps || 0) + 1);
      $("auto").textContent = "the live stream skipped " + (d.missed || "some") + " events; the queue was reloaded";
      scheduleRefresh();
    });
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

  // ---- queue pages ----

  // refreshEvery bounds how often the queue is read (ms): a flood of
  // pending actions costs the page at most this many reloads a second.
  const refreshEvery = 300;

  function scheduleRefresh() {
    if (state.refreshTimer) return;
    const wait = Math.max(0, refreshEvery - (Date.now() - state.lastRefresh));
    state.refreshTimer = setTimeout(() => { state.refreshTimer = null; refreshNow(); }, wait);
  }

  const cardKey = (id, seq) => id + "@" + seq;

  // markDecided remembers that id@seq is decided (the last 5,000).
  function markDecided(id, seq) {
    state.decided.set(cardKey(id, seq), true);
    if (state.decided.size > 5000) state.decided.delete(state.decided.keys().next().value);
  }

  // showArrived shows a card straight from the stream's pending event
  // (which carries the stored command, as the queue does) when the whole
  // queue fits on the page shown, so a person sees a new action without
  // waiting for the queue's next read. The read still follows; a read
  // sent before the card arrived neither removes it nor, once it is
  // decided, brings it back (renderPage).
  function showArrived(p) {
    const pg = state.page;
    if (!p || typeof p.id !== "string" || !p.command_stored || state.cards.has(p.id)) return;
    if (state.decided.has(cardKey(p.id, p.seq))) return;
    if (pg.offset !== 0 || pg.total >= pg.limit || state.order.length >= pg.limit) return;
    if (pg.conversation && p.conversation !== pg.conversation) return;
    if (pg.order !== "newest" && pg.order !== "oldest") return;
    const c = makeCard(p);
    c.arrived = state.epoch;
    c.node.dataset.from = "stream";
    const list = $("pending");
    if (pg.order === "newest") {
      list.prepend(c.node);
      state.order.unshift(p.id);
    } else {
      list.append(c.node);
      state.order.push(p.id);
    }
    pg.total++;
    updateCount();
    watch(c);
  }

  async function refreshNow() {
    if (state.refreshing) { state.refreshAgain = true; return; }
    state.refreshing = true;
    state.lastRefresh = Date.now();
    const sentAt = state.epoch;
    try {
      const pg = state.page;
      // While the whole queue fits on the first page, new actions show at
      // once; past that the newest-first pages keep their anchor (a flood
      // does not move the cards under the person) and "newer" counts the rest.
      if (pg.order === "newest" && pg.offset === 0 && pg.total <= pg.limit) pg.anchor = 0;
      const q = new URLSearchParams({ order: pg.order, offset: String(pg.offset), limit: String(pg.limit) });
      if (pg.order === "newest" && pg.anchor) q.set("before", String(pg.anchor));
      if (pg.conversation) q.set("conversation", pg.conversation);
      const r = await api("GET", "/ui/pending?" + q.toString());
      if (r.status !== 200 || !r.data) {
        $("range").textContent = "the queue could not be read: " + errText(r) + " (retrying)";
        state.refreshAgain = true;
        return;
      }
      const d = r.data;
      if (pg.order === "newest" && !pg.anchor) pg.anchor = d.anchor || 0;
      pg.total = d.total;
      pg.newer = d.newer;
      if (pg.offset > 0 && pg.offset >= d.total - d.newer) {
        pg.offset = Math.max(0, pg.offset - pg.limit);
        state.refreshAgain = true;
      }
      renderPage(d.pending || [], sentAt);
      // Events came while the read was on its way: it may not show them
      // (renderPage kept what it cannot know); read again.
      if (state.epoch !== sentAt) state.refreshAgain = true;
      renderConversations(d.conversations || []);
      if (!document.body.dataset.ready) document.body.dataset.readyAt = String(Math.round(performance.now()));
      document.body.dataset.ready = "1";
      document.body.dataset.reloads = String(Number(document.body.dataset.reloads || 0) + 1);
    } catch (e) {
      $("range").textContent = "the queue could not be read: " + e + " (retrying)";
      state.refreshAgain = true;
    } finally {
      state.refreshing = false;
      if (state.refreshAgain) { state.refreshAgain = false; scheduleRefresh(); }
    }
  }

  // renderPage shows a page of the queue, as read when the stream's
  // epoch was sentAt: a card that arrived after that is kept (the read
  // could not know it), an action known decided is not shown (a read sent
  // before the decision still lists it), and a card whose action is
  // listed at another seq is a new card (the old one, and its selection,
  // are gone).
  function renderPage(items, sentAt) {
    items = items.filter((p) => typeof p.id === "string" && !state.decided.has(cardKey(p.id, p.seq)));
    const keep = new Set(items.map((p) => cardKey(p.id, p.seq)));
    const late = [];
    for (const id of [...state.order]) {
      const c = state.cards.get(id);
      if (c && keep.has(cardKey(id, c.p.seq))) continue;
      if (c && c.arrived > sentAt && !state.decided.has(cardKey(id, c.p.seq)) && !items.some((p) => p.id === id)) {
        late.push(c);
        continue;
      }
      removeCard(id);
    }
    const nodes = [];
    const order = [];
    if (late.length && state.page.order !== "oldest") {
      for (const c of late) { nodes.push(c.node); order.push(c.p.id); }
    }
    let group = null;
    for (const p of items) {
      let c = state.cards.get(p.id);
      if (!c || c.p.seq !== p.seq) c = makeCard(p);
      if (state.page.order === "conversation" && p.conversation !== group) {
        group = p.conversation;
        nodes.push(el("li", { class: "group-head" }, "conversation ", el("code", {}, visible(group))));
      }
      nodes.push(c.node);
      order.push(p.id);
    }
    if (late.length && state.page.order === "oldest") {
      for (const c of late) { nodes.push(c.node); order.push(c.p.id); }
    }
    state.page.total += late.length;
    state.order = order;
    placeChildren($("pending"), nodes);
    updateCount();
    for (const id of order) watch(state.cards.get(id));
  }

  // placeChildren makes nodes the children of parent, in order, moving
  // only what changed: a card that stays is never detached, so a click or
  // a selection on it is not lost to a reload of the queue.
  function placeChildren(parent, nodes) {
    let cur = parent.firstChild;
    for (const n of nodes) {
      if (cur === n) { cur = cur.nextSibling; continue; }
      parent.insertBefore(n, cur);
    }
    while (cur) {
      const next = cur.nextSibling;
      cur.remove();
      cur = next;
    }
  }

  function renderConversations(list) {
    const sel = $("conv-filter");
    const cur = state.page.conversation;
    const opts = [el("option", { value: "" }, "all conversations")];
    for (const c of list) {
      opts.push(el("option", { value: c.conversation, selected: c.conversation === cur },
        visible(c.conversation).map((n) => n.textContent).join("") + " (" + c.count + ", " + (c.level || "UNKNOWN") + ")"));
    }
    if (cur && !list.some((c) => c.conversation === cur)) opts.push(el("option", { value: cur, selected: true }, cur + " (0)"));
    sel.replaceChildren(...opts);
  }

  function levelClass(level) {
    return "level level-" + String(level || "UNKNOWN").toLowerCase().replace(/[^a-z]/g, "");
  }

  function credLabel(o) {
    const c = o || "agent";
    return "sent with the " + c + " credential" + (c === "agent" ? " (what the agent claims)" : "");
  }

  function makeCard(p) {
    const reason = el("input", { type: "text", class: "reason", maxlength: "2000", placeholder: "reason (sent with the verdict)", "aria-label": "reason" });
    const msg = el("p", { class: "msg", role: "status" });
    let self = null;
    const card = () => self;
    const buttons = el("div", { class: "actions" },
      verdictButton(card, "once", "Allow once", "o"),
      verdictButton(card, "session", "Allow session", "s"),
      verdictButton(card, "always", "Always", "a"),
      verdictButton(card, "deny", "Deny", "d"));
    const detail = el("div", { class: "detail" }, el("p", { class: "muted", text: "details load when the card is shown" }));
    const reasons = el("ul", { class: "reasons" },
      (p.reasons || []).map((r) => el("li", {},
        el("span", { class: levelClass(r.level), text: r.level || "-" }), " ",
        el("code", {}, visible((r.analyzer || "") + "/" + (r.rule || ""))),
        r.detail ? [": ", visible(r.detail)] : "")));
    const command = p.command || "";
    const hidden = hiddenCount(command) + hiddenCount(p.command_tail || "");
    const placement = el("span", { class: "placement muted", text: "placement: checking…" });
    // Level and rules first, then the command, then where it claims to run.
    const node = el("li", { class: "card", "data-id": p.id, "data-seq": p.seq, tabindex: "-1", onclick: () => select(self) },
      el("div", { class: "head" },
        el("span", { class: levelClass(p.level), text: p.level || "UNKNOWN" }),
        el("span", { class: "tool" }, visible(p.tool || ""))),
      (p.reasons && p.reasons.length) ? reasons : el("p", { class: "muted", text: "no rule fired" }),
      el("pre", { class: "command" }, textBlock(command, "command-text", { headChars: 400, tailChars: 300, notCarried: p.command_cut || 0, tailText: p.command_tail })),
      hidden ? el("p", { class: "warn hidden-chars", text: hidden + " hidden or control character" + (hidden > 1 ? "s" : "") + " in the command, shown as ⟨…⟩ or \\x.." }) : null,
      el("p", { class: "meta" },
        el("span", {}, "conversation ", el("code", {}, visible(p.conversation || ""))),
        " · agent ", el("code", {}, visible(p.agent || "?")),
        " · backend ", el("code", {}, visible(p.backend || "local")), " · ", placement),
      el("p", { class: "sentby muted", text: credLabel(p.credential) }),
      detail,
      el("div", { class: "decide" }, reason, buttons),
      msg,
      el("p", { class: "foot muted", text: "log seq " + p.seq + (p.time ? " · " + p.time : "") + (p.timeout ? " · times out after " + p.timeout : "") }));
    const c = { p, node, detail, reason, msg, placement, busy: false, loaded: false, loading: false, tries: 0, arrived: -1 };
    self = c;
    const old = state.cards.get(p.id);
    if (old && old !== c) removeCard(p.id); // the same id at another seq: another action
    state.cards.set(p.id, c);
    node.dataset.shown = String(Date.now()); // when it appeared (the benchmark reads it)
    return c;
  }

  function verdictButton(card, verdict, label, key) {
    return el("button", { type: "button", class: "verdict verdict-" + verdict, "data-verdict": verdict,
      title: label + " (" + key + ")", onclick: (ev) => {
        ev.stopPropagation();
        const c = card();
        // A pointer click (detail > 0) on a card that just moved under
        // it is not a verdict; the keyboard and a second click are.
        if (c && ev.detail > 0 && c.movedAt && performance.now() - c.movedAt < movedGuard) {
          c.msg.textContent = "the cards moved as you clicked: nothing was sent; click again";
          return;
        }
        decide(c, verdict);
      } },
    label, " ", el("kbd", { text: key }));
  }

  function removeCard(id) {
    const c = state.cards.get(id);
    if (!c) return;
    c.gone = true;
    if (observer) observer.unobserve(c.node);
    c.node.remove();
    state.cards.delete(id);
    const i = state.order.indexOf(id);
    if (i >= 0) state.order.splice(i, 1);
    // Never select another card for the person: the next key press must
    // not decide an action they did not choose.
    if (state.selected === cardKey(id, c.p.seq)) {
      state.selected = null;
      hint("The action you selected is gone. Select another (click, or j / k).");
    }
    updateCount();
  }

  // movedGuard is how long (ms) after a card moved on the page (a card
  // arrived or went above it, a detail loaded) a pointer click on its
  // verdict buttons is not taken: the person aimed at what was there
  // before.
  const movedGuard = 400;

  // noteMoves records, for each card shown, where it is on the page and
  // when it last moved.
  function noteMoves() {
    const now = performance.now();
    for (const id of state.order) {
      const c = state.cards.get(id);
      if (!c || !c.node.isConnected) continue;
      const top = Math.round(c.node.getBoundingClientRect().top + window.scrollY);
      if (c.top !== undefined && c.top !== top) c.movedAt = now;
      c.top = top;
    }
  }

  function updateCount() {
    const pg = state.page;
    const paged = pg.total - pg.newer;
    $("count").textContent = String(pg.total);
    $("empty").hidden = pg.total > 0;
    document.title = (pg.total ? "(" + pg.total + ") " : "") + "Vigil — approvals";
    $("range").textContent = state.order.length
      ? "showing " + (pg.offset + 1) + "–" + (pg.offset + state.order.length) + " of " + paged + " (" + pg.order + " first)"
      : (paged ? "no actions on this page" : "");
    $("newer").hidden = !(pg.order === "newest" && pg.newer > 0);
    $("newer").textContent = pg.newer + " newer waiting: show (n)";
    $("prev-page").disabled = pg.offset === 0;
    $("next-page").disabled = pg.offset + pg.limit >= paged;
    noteMoves();
  }

  function hint(text) { $("hint").textContent = text || ""; }

  // selectedCard is the card the person selected, if it is still shown:
  // the same action id at the same log seq.
  function selectedCard() {
    if (!state.selected) return null;
    const at = state.selected.lastIndexOf("@");
    const c = state.cards.get(state.selected.slice(0, at));
    return c && !c.gone && cardKey(c.p.id, c.p.seq) === state.selected ? c : null;
  }

  function select(c) {
    const prev = selectedCard();
    if (prev) prev.node.classList.remove("selected");
    state.selected = null;
    hint("");
    if (c && !c.gone && state.cards.get(c.p.id) === c) {
      state.selected = cardKey(c.p.id, c.p.seq);
      c.node.classList.add("selected");
      loadDetail(c, true);
      if (document.activeElement === document.body || !document.activeElement || !c.node.contains(document.activeElement)) {
        c.node.scrollIntoView({ block: "nearest" });
      }
    }
  }

  // ---- details, loaded lazily ----
  //
  // A card's detail is loaded when the card is on screen or selected, a
  // few at a time; a load that fails (the node busy) is retried, so a
  // page of thousands makes no burst of requests and loses none.

  const observer = ("IntersectionObserver" in window) ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      const c = state.cards.get(e.target.dataset.id);
      if (c) loadDetail(c, false);
    }
  }, { rootMargin: "200px" }) : null;

  function watch(c) {
    if (!c || c.loaded || c.loading) return;
    if (observer) observer.observe(c.node);
    else loadDetail(c, false);
  }

  const maxLoads = 3;

  function loadDetail(c, first) {
    if (c.loaded || c.loading) return;
    c.loading = true;
    if (first) state.loads.queue.unshift(c);
    else state.loads.queue.push(c);
    pumpLoads();
  }

  function pumpLoads() {
    while (state.loads.active < maxLoads && state.loads.queue.length) {
      const c = state.loads.queue.shift();
      if (!state.cards.has(c.p.id)) { c.loading = false; continue; }
      state.loads.active++;
      fetchDetail(c).finally(() => { state.loads.active--; pumpLoads(); });
    }
  }

  async function fetchDetail(c) {
    let r;
    try {
      r = await api("GET", "/ui/actions/" + encodeURIComponent(c.p.id) + "?seq=" + encodeURIComponent(c.p.seq));
    } catch (e) {
      r = { status: 0, data: { error: String(e) } };
    }
    if (!state.cards.has(c.p.id)) { c.loading = false; return; }
    if (r.status === 200) {
      c.loaded = true;
      c.loading = false;
      if (observer) observer.unobserve(c.node);
      renderDetail(c, r.data);
      return;
    }
    if (r.status !== 404 && r.status !== 401 && r.status !== 403 && c.tries < 6) {
      c.tries++;
      state.loads.retried++;
      document.body.dataset.detailRetries = String(state.loads.retried);
      setTimeout(() => { c.loading = false; loadDetail(c, false); }, 500 * (2 ** Math.min(c.tries, 4)));
      return;
    }
    c.loading = false;
    state.loads.failed++;
    document.body.dataset.detailFailures = String(state.loads.failed);
    c.detail.replaceChildren(el("p", { class: "muted", text: "details unavailable: " + errText(r) }));
  }

  function renderDetail(c, d) {
    const parts = [];
    const pl = d.placement || {};
    c.placement.className = "placement " + (pl.attested && pl.agent_matches ? "attested" : "warn");
    c.placement.replaceChildren(...visible(pl.attested
      ? (pl.agent_matches ? "placement attested by the " + pl.attested_by + " credential (log seq " + pl.started_seq + ")" : pl.note)
      : "not attested: no runtime credential placed this conversation; its id, agent and backend are the agent's claims" +
        (pl.backend_claimed ? " (it claims backend " + pl.backend_claimed + ")" : "")));
    const v = d.view || {};
    if (v.commands && v.commands.length) {
      parts.push(el("details", { class: "parsed", open: true },
        el("summary", { text: "Commands found (" + v.commands.length + ")" }),
        el("ul", {}, v.commands.map((cmd) => el("li", {},
          el("code", {}, visible("  ".repeat(cmd.depth || 0) + [cmd.name].concat(cmd.argv || []).join(" "))),
          cmd.sudo ? el("span", { class: "note", text: " as root" }) : null,
          (cmd.via && cmd.via.length) ? el("span", { class: "note" }, " via ", visible(cmd.via.join(" → "))) : null)))));
    }
    const facts = [];
    if (v.paths && v.paths.length) facts.push(["Paths", v.paths.join(", ")]);
    if (v.hosts && v.hosts.length) facts.push(["Hosts", v.hosts.join(", ")]);
    if (v.parse_error) facts.push(["Parse", v.parse_error]);
    if (d.event && d.event.data && d.event.data.cwd) facts.push(["Cwd", String(d.event.data.cwd)]);
    if (facts.length) {
      parts.push(el("dl", { class: "facts" }, facts.map(([k, val]) => [el("dt", { text: k }), el("dd", {}, visible(val))])));
    }
    const args = d.event && d.event.data ? d.event.data.args : undefined;
    if (args !== undefined) {
      parts.push(el("details", { class: "args" },
        el("summary", { text: "Arguments (as stored, secrets redacted)" }),
        el("pre", {}, el("code", {}, visible(JSON.stringify(args, null, 2))))));
    }
    if (d.context && d.context.length) {
      parts.push(el("details", { class: "context", open: true },
        el("summary", { text: "Conversation, last " + d.context.length + " events (each with the credential that sent it)" }),
        el("ol", {}, d.context.map((e) => el("li", { class: e.claim ? "claimed" : null },
          el("span", { class: "kind", text: e.kind }), " ",
          el("span", { class: "cred cred-" + String(e.credential || "agent").replace(/[^a-z]/g, ""), text: "[" + (e.credential || "agent") + "]" }), " ",
          e.claim ? el("span", { class: "claim warn", text: e.claim + ":" }) : (e.role ? el("span", { class: "role", text: e.role + ":" }) : null), " ",
          el("span", { class: "ctx-text" }, textBlock(e.text, "ctx-code", { maxChars: 600, headChars: 300, tailChars: 200, notCarried: e.cut || 0 })))))));
    }
    if (!parts.length) parts.push(el("p", { class: "muted", text: "no more detail" }));
    c.detail.replaceChildren(...parts);
    c.node.dataset.detail = "1";
    noteMoves();
  }

  // decide sends verdict on card c: the action id and the log seq the
  // person sees on it, so the server refuses it (409) if the id now names
  // another action or the action was decided already. A card decided (or
  // in flight) takes no second verdict.
  async function decide(c, verdict) {
    if (!c || c.gone || c.busy || c.sent || state.cards.get(c.p.id) !== c) return;
    const id = c.p.id;
    const reason = c.reason.value.trim();
    c.busy = true;
    c.node.classList.add("busy");
    c.msg.textContent = "sending " + verdict + "…";
    try {
      const r = await api("POST", "/v1/approvals", { action_id: id, seq: c.p.seq, verdict, reason });
      if (r.status === 200 || r.status === 202) {
        c.sent = true;
        markDecided(id, c.p.seq);
        c.msg.textContent = (r.status === 200 ? "decided: " : "recorded, waiting for the gate: ") + verdict;
        if (r.status === 200) setTimeout(() => { if (state.cards.get(id) === c) removeCard(id); }, 300);
      } else {
        c.msg.textContent = "not decided: " + errText(r);
        if (r.status === 409 && r.data && r.data.field === "action_id") { // a verdict was given already
          c.sent = true;
          markDecided(id, c.p.seq);
        }
        if (r.status === 404 || r.status === 409) setTimeout(() => { if (state.cards.get(id) === c) removeCard(id); scheduleRefresh(); }, 1500);
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
    body.replaceChildren(...state.history.map((d) => {
      const cmd = d.command || d.action_id || "";
      return el("tr", { class: "outcome-" + (d.outcome === "allow" ? "allow" : "deny") },
        el("td", { text: d.time || "" }),
        el("td", {}, textBlock(cmd, "hist-cmd", { maxChars: 400, headChars: 200, tailChars: 120, notCarried: d.command_cut || 0, tailText: d.command_tail }),
          el("div", { class: "muted" }, visible(d.conversation || ""))),
        el("td", {}, visible((d.outcome || "") + (d.verdict ? " (" + d.verdict + ")" : "") + (d.reason ? ": " + d.reason : ""))),
        el("td", {}, visible((d.by || "") + (d.approver ? " · " + d.approver : ""))));
    }));
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

  function goPage(delta) {
    const pg = state.page;
    const next = Math.max(0, pg.offset + delta * pg.limit);
    if (next === pg.offset || next >= pg.total - pg.newer) return;
    pg.offset = next;
    refreshNow();
    window.scrollTo(0, 0);
  }

  function showNewer() {
    state.page.anchor = 0;
    state.page.offset = 0;
    refreshNow();
  }

  $("order").addEventListener("change", (ev) => {
    state.page.order = ev.target.value;
    state.page.offset = 0;
    state.page.anchor = 0;
    refreshNow();
  });
  $("conv-filter").addEventListener("change", (ev) => {
    state.page.conversation = ev.target.value;
    state.page.offset = 0;
    state.page.anchor = 0;
    refreshNow();
  });
  $("newer").addEventListener("click", showNewer);
  $("prev-page").addEventListener("click", () => goPage(-1));
  $("next-page").addEventListener("click", () => goPage(1));

  function move(delta) {
    if (!state.order.length) return;
    const cur = selectedCard();
    let i = cur ? state.order.indexOf(cur.p.id) : -1;
    i = i < 0 ? (delta > 0 ? 0 : state.order.length - 1) : Math.max(0, Math.min(state.order.length - 1, i + delta));
    select(state.cards.get(state.order[i]));
  }

  // onSelected runs f on the card the person selected, or says to select one.
  function onSelected(f) {
    const c = selectedCard();
    if (c) f(c);
    else hint("Select an action first (click it, or j / k): a key never decides an action you did not select.");
  }

  document.addEventListener("keydown", (ev) => {
    if (!state.session || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
    if (typing) {
      if (ev.key === "Escape") t.blur();
      else if (ev.key === "Enter" && t.classList.contains("reason")) {
        const card = t.closest("li.card");
        const c = card && state.cards.get(card.dataset.id);
        if (c && c.node === card) {
          ev.preventDefault();
          decide(c, "deny");
        }
      }
      return;
    }
    const keys = {
      j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
      o: () => onSelected((c) => decide(c, "once")),
      s: () => onSelected((c) => decide(c, "session")),
      a: () => onSelected((c) => decide(c, "always")),
      d: () => onSelected((c) => decide(c, "deny")),
      r: () => onSelected((c) => c.reason.focus()),
      n: () => showNewer(),
      "]": () => goPage(1), "[": () => goPage(-1),
      q: () => show("queue"), h: () => show("history"),
      "?": () => { $("help").hidden = !$("help").hidden; },
    };
    const f = keys[ev.key];
    if (f) { ev.preventDefault(); f(); }
  });

  start();
})();

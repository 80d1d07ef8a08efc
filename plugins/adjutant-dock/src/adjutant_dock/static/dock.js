// The Copilot Dock's page: plain JavaScript, no build step, no third-party code.
// It speaks AG-UI over SSE (fetch + a small parser: EventSource cannot POST), applies
// each envelope once (by seq), reconnects with ?after=<last seq>, and answers
// interrupts with a RunAgentInput carrying `resume`. Untrusted text is set with
// textContent only.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...kids) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const kid of kids) node.append(kid);
  return node;
};
const uid = () => (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2)).replace(/-/g, "");

// Each tab is its own client session; the thread is shared by the tabs of this browser
// only when chosen (here: one per tab unless ?thread= names one).
const session = sessionStorage.getItem("dock.session") || `tab-${uid().slice(0, 12)}`;
sessionStorage.setItem("dock.session", session);
const thread = new URLSearchParams(location.search).get("thread") || sessionStorage.getItem("dock.thread") || `thread-${uid().slice(0, 12)}`;
sessionStorage.setItem("dock.thread", thread);

const MODE_KEYS = { "off": "off", "listen-only": "listen", "propose-only": "propose",
  "execute-with-confirmation": "confirm", "execute-auto": "auto" };
const dock = { state: null, run: null, lastSeq: {}, live: new Set(), question: null,
  model: null, bubbles: {}, tools: {}, previews: {} };
window.dock = dock; // for tests and the curious

// -- server calls ----------------------------------------------------------------------

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" } };
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) throw new Error((data && (data.error || (data.problems || []).join("; "))) || `${response.status}`);
  return data;
}

async function loadRoles() {
  const data = await api("/api/roles");
  const select = $("#role");
  const chosen = localStorage.getItem("dock.role") || "";
  for (const r of data.roles) select.append(el("option", { value: r.role, text: `${r.role} (${r.path})` }));
  if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
  select.addEventListener("change", () => localStorage.setItem("dock.role", select.value));
}

async function loadState() {
  dock.state = await api("/api/state");
  renderState();
  for (const open of dock.state.openInterrupts || []) {
    if (open.threadId === thread) showQuestion(open.interrupt, open.runId);
  }
}

// -- SSE over fetch --------------------------------------------------------------------

async function consume(response, runId) {
  if (!response.ok) {
    setBusy(false);
    let why = `${response.status}`;
    try { why = (await response.json()).error || why; } catch { /* text */ }
    throw Object.assign(new Error(why), { status: response.status });
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const data = block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (!data) continue; // a keepalive comment
      if (apply(JSON.parse(data))) ended = true;
    }
  }
  return ended;
}

// Stream a run to its end; if the connection drops first, reconnect with the last
// applied seq (the server replays what was missed, then goes live).
async function follow(first, runId) {
  dock.live.add(runId);
  let response = first;
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      if (await consume(response, runId)) break;
    } catch (err) {
      if (err.status || attempt === 7) { addMessage("error", err.message, err.status ? "refused" : "stream"); break; }
    }
    setStatus(`Connection lost; reconnecting (${attempt + 1})…`);
    await new Promise((r) => setTimeout(r, Math.min(2000, 150 * 2 ** attempt)));
    try {
      response = await fetch(`/api/copilot/runs/${runId}/events?after=${dock.lastSeq[runId] || 0}`);
    } catch { response = null; }
    if (!response) continue;
  }
  dock.live.delete(runId);
}

// Apply one envelope (once); true when it ends its run.
function apply(env) {
  const last = dock.lastSeq[env.runId] || 0;
  if (env.event === "restart_required") { restart(env.data.value); return true; }
  if (env.seq <= last) return false; // a replayed duplicate
  dock.lastSeq[env.runId] = env.seq;
  const d = env.data;
  switch (d.type) {
    case "RUN_STARTED":
      if (dock.historical) {
        const said = ((d.input || {}).messages || []).filter((m) => m.role === "user").pop();
        if (said && typeof said.content === "string") addMessage("user", said.content, "you");
      } else { dock.run = env.runId; setBusy(true); setStatus("Working…"); }
      break;
    case "TEXT_MESSAGE_START": modelStart(d.messageId); break;
    case "TEXT_MESSAGE_CONTENT": modelDelta(d.messageId, d.delta); break;
    case "TEXT_MESSAGE_END": modelEnd(d.messageId); break;
    case "TOOL_CALL_START": toolStart(d.toolCallId, d.toolCallName); break;
    case "TOOL_CALL_ARGS": toolArgs(d.toolCallId, d.delta); break;
    case "TOOL_CALL_RESULT": toolResult(d.toolCallId, d.content); break;
    case "ACTIVITY_SNAPSHOT": activity(d, env.runId); break;
    case "STATE_SNAPSHOT": Object.assign(dock.state || (dock.state = {}), d.snapshot); renderState(); break;
    case "STATE_DELTA": patch(d.delta); break;
    case "CUSTOM": custom(d.name, d.value); break;
    case "RUN_FINISHED": finished(env, d); return true;
    case "RUN_ERROR": setBusy(false); addMessage("error", d.message); setStatus(""); return true;
  }
  return false;
}

function restart(value) {
  setStatus("The stream's history is gone; reloaded the current state.");
  if (value && value.snapshot) { dock.state = value.snapshot; renderState(); }
  setBusy(false);
}

function patch(ops) {
  if (!dock.state) return;
  for (const op of ops) {
    const key = op.path.replace(/^\//, "").split("/")[0];
    if (op.op === "replace" || op.op === "add") dock.state[key] = op.value;
    if (op.op === "remove") delete dock.state[key];
    if (key === "grants") loadState().catch(() => {}); // their expiries come with the state
  }
  renderState();
}

// -- chat ------------------------------------------------------------------------------

function addMessage(kind, text, who) {
  const item = el("li", { class: `msg ${kind}` }, el("span", { class: "who", text: who || kind }), el("div", { text }));
  $("#messages").append(item);
  item.scrollIntoView({ block: "nearest" });
  return item;
}

function modelStart(id) {
  const pre = el("pre", { class: "stream", "data-message": id });
  const box = el("details", { class: "model", open: "" }, el("summary", { text: "Model output (streaming)" }), pre);
  const item = el("li", { class: "msg model" }, box);
  $("#messages").append(item);
  dock.bubbles[id] = { pre, box };
}
function modelDelta(id, delta) {
  const b = dock.bubbles[id];
  if (b) { b.pre.append(delta); b.pre.scrollTop = b.pre.scrollHeight; }
}
function modelEnd(id) {
  const b = dock.bubbles[id];
  if (b) { b.box.removeAttribute("open"); b.box.querySelector("summary").textContent = "Model output"; }
}

function toolStart(id, name) {
  const args = el("pre", { class: "args" });
  const result = el("pre", { class: "result" });
  const item = addMessage("tool", "", `tool: ${name}`);
  item.querySelector("div").replaceWith(el("div", {}, args, result));
  dock.tools[id] = { args, result, item };
}
function toolArgs(id, delta) { if (dock.tools[id]) dock.tools[id].args.append(delta); }
function toolResult(id, content) {
  const t = dock.tools[id];
  if (!t) return;
  t.result.textContent = `→ ${content}`;
  const widget = resultWidget(String(content || ""));
  const preview = dock.previews[id];
  if (widget) { // structure shown as such; the raw text one click away
    const raw = el("details", { class: "raw" }, el("summary", { text: "Raw text" }));
    t.result.before(widget, raw);
    raw.append(t.result);
  } else if (isDiff(preview)) { // a write: the change it made, as previewed and approved
    t.result.after(el("details", { class: "applied", open: "" }, el("summary", { text: "Changes (the approved preview)" }), diffView(preview)));
  }
}

// -- result widgets: a tool's text result, where it has structure, as a table or a diff.
// Tool output is untrusted: every cell is set with textContent.

function isDiff(text) {
  return typeof text === "string" && /^@@ /m.test(text) && /^\+\+\+ /m.test(text);
}

const NUMERIC = /^-?\d+(\.\d+)?( ?(B|KiB|MiB|GiB))?%?$/;

function table(headers, rows, caption, notes) {
  const cell = (tag, text) => el(tag, NUMERIC.test(text) ? { class: "num", text } : { text });
  const widget = el("div", { class: "result-widget" });
  if (caption) widget.append(el("div", { class: "muted", text: caption }));
  widget.append(el("div", { class: "table-scroll" }, el("table", { class: "result-table" },
    el("thead", {}, el("tr", {}, ...headers.map((h) => cell("th", h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => cell("td", c))))))));
  for (const n of notes) widget.append(el("div", { class: "muted", text: n }));
  return widget;
}

// A header of upper-case column names, then rows of as many columns (the last takes the
// rest of the line), then notes in brackets: proc.list's shape.
function columnTable(lines) {
  const headers = lines[0].trim().split(/\s+/);
  if (headers.length < 2 || !headers.every((h) => /^[A-Z][A-Z0-9_%]*$/.test(h))) return null;
  const rows = [];
  const notes = [];
  for (const line of lines.slice(1)) {
    if (/^\s*[([]/.test(line)) { notes.push(line.trim()); continue; }
    const parts = line.trim().split(/\s+/);
    if (parts.length < headers.length) return null;
    rows.push([...parts.slice(0, headers.length - 1), line.trim().split(/\s+/).slice(headers.length - 1).join(" ")]);
  }
  return rows.length ? table(headers, rows, "", notes) : null;
}

// "<dir>/: N entries", then "kind size date time name": fs.list's shape.
const ENTRY = /^(file|dir|link|other)\s+((?:\d+(?:\.\d+)? (?:B|KiB|MiB|GiB))?)\s+(\d{4}-\d\d-\d\d \d\d:\d\d)\s+(.+)$/;
function listingTable(lines) {
  if (!/^.*: \d+ entr(y|ies)$/.test(lines[0])) return null;
  const rows = [];
  const notes = [];
  for (const line of lines.slice(1)) {
    const m = ENTRY.exec(line);
    if (m) rows.push([m[1], m[2], m[3], m[4]]);
    else if (/^\[/.test(line)) notes.push(line);
    else return null;
  }
  return table(["Kind", "Size", "Modified", "Name"], rows, lines[0], notes);
}

function resultWidget(text) {
  if (isDiff(text)) return el("div", { class: "result-widget" }, diffView(text));
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length < 2) return null;
  return listingTable(lines) || columnTable(lines);
}

function stackItem(kind, text) {
  const list = $("#context-stack");
  for (const old of list.querySelectorAll(`li[data-kind="${kind}"], li.muted`)) old.remove();
  list.append(el("li", { "data-kind": kind, text }));
}

function activity(d, runId) {
  if (d.activityType === "plan") {
    renderPlan(d.content);
    (d.content.steps || []).forEach((step, i) => { dock.previews[`${runId}-step-${i}`] = step.preview; });
  }
  else if (d.activityType === "context") {
    const c = d.content || {};
    stackItem("bulletin", `Context bulletin: cwd ${c.cwd || "?"}${c.git && c.git.branch ? `, git ${c.git.branch}` : ""}${(c.selected_files || []).length ? `, files ${c.selected_files.join(", ")}` : ""}${(c.recent_shell || []).length ? `, ${c.recent_shell.length} recent shell lines` : ""}`);
    setStatus(`Context: ${c.cwd || ""}${c.git && c.git.branch ? ` (branch ${c.git.branch})` : ""}`);
  } else if (d.activityType === "warning") addMessage("error", d.content.text, "warning");
}

function custom(name, value) {
  if (name === "adjutant.dock.queued") { dock.queuedAt = value.position; setStatus(`Queued: ${value.position} ahead of this request`); }
  else if (name === "adjutant.step.denied") addMessage("error", `Step ${value.step + 1} (${value.tool}) not run: ${value.reason}`, `refused by ${value.by}`);
  else if (name === "adjutant.approval.decided") clearQuestion();
  else if (name === "adjutant.dock.context_stack" && value.skill) {
    const k = value.skill;
    stackItem("skill", `Role ${k.role}: ${k.path} (${k.bytes} bytes, sha256 ${k.sha256}) in the system prompt`);
  }
}

function finished(env, d) {
  if (d.outcome && d.outcome.type === "interrupt") {
    for (const interrupt of d.outcome.interrupts) showQuestion(interrupt, env.runId);
    setStatus("Waiting for your answer (Plan & Permissions).");
    return;
  }
  setBusy(false);
  setStatus("");
  const r = d.result || {};
  if (r.text) addMessage("assistant", r.text, "adjutant");
  const said = { executed: "Done.", denied: "Nothing ran: every step was refused or denied.",
    proposed: "Proposed only (the mode is Propose): see the plan.", ignored: `Ignored: ${r.text || "the mode"}` };
  if (!r.text && said[r.status]) addMessage("assistant", said[r.status], `adjutant · ${r.status}`);
  else if (r.status && r.status !== "answered") setStatus(`Run ended: ${r.status}`);
  if (!dock.historical) refreshLog();
}

function setStatus(text) { $("#status").textContent = text; }
function setBusy(busy) {
  $("#stop").disabled = !busy;
  $("#send").disabled = false;
  if (!busy) dock.run = null;
}

async function send(prompt, who = "you") {
  if (!prompt.trim()) return;
  addMessage("user", prompt, who);
  const runId = `run-${uid()}`;
  const role = $("#role").value;
  const input = { threadId: thread, runId, messages: [{ id: `msg-${uid()}`, role: "user", content: prompt }],
    tools: [], context: [], forwardedProps: { clientSessionId: session, ...(role ? { role } : {}) } };
  setBusy(true);
  const response = await fetch("/api/copilot/run", { method: "POST", body: JSON.stringify(input),
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" } });
  await follow(response, runId).catch((err) => addMessage("error", err.message));
}

async function stop() {
  if (dock.question) { await answer("deny"); return; }
  if (!dock.run) return;
  setStatus("Stopping…");
  try { await api(`/api/copilot/runs/${dock.run}/stop`, {}); } catch (err) { setStatus(err.message); }
}

// -- plan and permissions --------------------------------------------------------------

function diffView(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of String(text || "").split("\n")) {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "";
    pre.append(cls ? el("span", { class: cls, text: line }) : document.createTextNode(`${line}\n`));
  }
  return pre;
}

function renderPlan(content) {
  const list = $("#plan");
  list.replaceChildren();
  const steps = content.steps || [];
  steps.forEach((step, i) => {
    const verdict = (content.verdicts || [])[i] || "";
    const item = el("li", { "data-step": String(i) },
      el("strong", { text: `${step.tool} ` }), el("span", { class: "verdict-word", text: `[${verdict}]` }),
      el("div", { class: "muted", text: step.intent || "" }),
      el("pre", { text: JSON.stringify(step.args, null, 1) }), diffView(step.preview));
    if (step.reasons && step.reasons.length) item.append(el("div", { class: "muted", text: `Why it asks: ${step.reasons.join("; ")}` }));
    if (step.would) item.append(el("div", { class: "muted", text: `In Confirm it would: ${step.would.decision} (${step.would.reason})` }));
    list.append(item);
  });
  if (!steps.length) list.append(el("li", { class: "muted", text: "The plan has no steps." }));
}

function showQuestion(interrupt, runId) {
  if (dock.historical) { addMessage("tool", `${interrupt.message} (asked)`, "approval asked"); return; }
  dock.question = { interrupt, runId };
  const box = $("#question");
  box.replaceChildren();
  const meta = interrupt.metadata || {};
  box.append(el("h3", { text: interrupt.message || "Approve?" }));
  if (meta.packet) {
    const p = meta.packet;
    if (interrupt.toolCallId) dock.previews[interrupt.toolCallId] = p.preview; // what is granted
    box.append(el("div", { text: `Tool ${p.tool} · level ${p.level}` }),
      el("div", { class: "muted", text: p.intent || "" }));
    if (p.reasons && p.reasons.length) box.append(el("div", { text: `Why it asks: ${p.reasons.join("; ")}` }));
    box.append(el("strong", { text: "Preview (exactly what will happen):" }), diffView(p.preview));
    const edit = el("textarea", { id: "edit-args", rows: "5", "aria-label": "Arguments (JSON)", spellcheck: "false" });
    edit.value = JSON.stringify(p.args, null, 2);
    box.append(el("label", { for: "edit-args", text: "Arguments (edit, then “Preview edit”):" }), edit);
    box.append(el("div", { class: "actions" },
      el("button", { type: "button", id: "grant", text: "Grant (run this step)", onclick: () => answer("grant") }),
      el("button", { type: "button", id: "deny", text: "Deny", onclick: () => answer("deny") }),
      el("button", { type: "button", id: "edit", text: "Preview edit", onclick: () => answer("edit") })));
  } else {
    for (const s of meta.steps || []) box.append(el("div", { text: `${s.index + 1}. ${s.tool}` }), diffView(s.preview));
    box.append(el("div", { class: "actions" },
      el("button", { type: "button", id: "execute", text: "Execute plan", onclick: () => answer("execute") }),
      el("button", { type: "button", id: "step", text: "Run step by step", onclick: () => answer("step") }),
      el("button", { type: "button", id: "deny", text: "Deny", onclick: () => answer("deny") })));
  }
  box.hidden = false;
  $("#plan-badge").hidden = false;
  addMessage("tool", `${interrupt.message} — answer in Plan & Permissions (Alt+2).`, "needs your approval");
  showTab("plan");
  box.querySelector("button").focus();
}

function clearQuestion() {
  dock.question = null;
  $("#question").hidden = true;
  $("#plan-badge").hidden = true;
}

async function answer(action) {
  const q = dock.question;
  if (!q) return;
  const payload = { action, packetId: (q.interrupt.metadata || {}).packetId };
  if (action === "edit") {
    try { payload.args = JSON.parse($("#edit-args").value); } catch (err) { setStatus(`The arguments are not JSON: ${err.message}`); return; }
  }
  const runId = `run-${uid()}`;
  const input = { threadId: thread, runId, parentRunId: q.runId, messages: [], forwardedProps: { clientSessionId: session },
    resume: [{ interruptId: q.interrupt.id, status: "resolved", payload }] };
  clearQuestion();
  showTab("chat");
  const response = await fetch("/api/copilot/run", { method: "POST", body: JSON.stringify(input),
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" } });
  if (!response.ok) {
    const why = (await response.json().catch(() => ({}))).error || response.status;
    addMessage("error", `Answer refused: ${why}`);
    await loadState();
    return;
  }
  await follow(response, runId).catch((err) => addMessage("error", err.message));
}

// -- state, mode, chips ----------------------------------------------------------------

function renderState() {
  const s = dock.state;
  if (!s) return;
  const current = MODE_KEYS[s.mode] || s.mode;
  for (const b of document.querySelectorAll("#modes button")) b.setAttribute("aria-checked", String(b.dataset.mode === current));
  document.body.dataset.mode = current;
  const chips = $("#chips");
  chips.replaceChildren();
  const chip = (text, warn) => chips.append(el("span", { class: `chip${warn ? " warn" : ""}`, text }));
  chip(`mode: ${s.mode}`);
  if (s.model) chip(`model: ${s.model.name || s.model.provider}${s.model.contextSize ? ` · ${s.model.contextSize} ctx` : ""}`);
  chip(`preset: ${s.preset}`);
  if (s.cwd) chip(`project: ${s.cwd.split("/").filter(Boolean).pop() || s.cwd}`);
  for (const p of s.policies || []) chip(p === "guard" ? "no-sudo · caged FS" : `policy: ${p}`);
  chip(s.sandbox ? "sandbox: on" : "sandbox: missing", !s.sandbox);
  if (s.memoryMb) chip(`memory: ${Math.round(s.memoryMb)} MB`);
  if (s.voice && s.voice.remote) chip(`speech in: ${s.voice.remote.engine} @ ${s.voice.remote.host} (asks each time)`, true);
  renderGrants(chips, s);
  if (typeof renderVoice === "function") renderVoice(); // voice.js: the mic button follows the mode
}

// Each live grant as a chip with its time left (counted down here, from the expiry and
// the server's clock in the state) and a button that revokes it at once.
function renderGrants(chips, s) {
  const expire = s.grantsExpire || {};
  const offset = Date.now() - (s.serverNow || Date.now()); // this page's clock minus the server's
  for (const g of s.grants || []) {
    const left = el("span", { class: "grant-left" });
    if (expire[g]) left.dataset.expires = String(expire[g] + offset);
    chips.append(el("span", { class: "chip warn grant", "data-grant": g }, `grant: ${g} `, left,
      el("button", { type: "button", class: "revoke", title: `Revoke the grant ${g} now`, "aria-label": `Revoke the grant ${g}`, text: "×", onclick: () => revokeGrant(g) })));
  }
  tickGrants();
}

function clock(seconds) {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const sec = String(seconds % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

function tickGrants() {
  let expired = false;
  for (const left of document.querySelectorAll("#chips .grant-left[data-expires]")) {
    const ms = Number(left.dataset.expires) - Date.now();
    if (ms <= 0) { expired = true; left.textContent = "· expired"; continue; }
    left.textContent = `· ${clock(Math.ceil(ms / 1000))} left`;
    left.parentElement.title = `Expires at ${new Date(Number(left.dataset.expires)).toLocaleTimeString()}`;
  }
  if (expired && !dock.reloadingGrants) { // the server drops it: show the state as it is now
    dock.reloadingGrants = true;
    setTimeout(() => loadState().catch(() => {}).finally(() => { dock.reloadingGrants = false; }), 1000);
  }
}
setInterval(tickGrants, 1000);

async function revokeGrant(grant) {
  try { dock.state = await api("/api/grants/revoke", { grant }); renderState(); setStatus(`Grant revoked: ${grant}`); }
  catch (err) { setStatus(`Grant not revoked: ${err.message}`); loadState().catch(() => {}); }
}

async function setMode(key) {
  try { dock.state = await api("/api/mode", { mode: key }); renderState(); setStatus(`Mode: ${dock.state.mode}`); }
  catch (err) { setStatus(`Mode not changed: ${err.message}`); }
}

// -- action log ------------------------------------------------------------------------

// The last requests, how they ended and how long they took (from the history).
async function refreshRecent() {
  const list = $("#recent");
  let data;
  try { data = await api("/api/sessions"); } catch (err) { list.replaceChildren(el("li", { text: err.message })); return; }
  const runs = data.sessions.slice(0, 8);
  list.replaceChildren(...runs.map((r) => {
    const ms = r.endedAt ? Date.parse(r.endedAt) - Date.parse(r.startedAt) : null;
    return el("li", {}, el("span", { class: "verdict-word", text: `[${r.status}] ` }),
      el("span", { text: r.prompt || (r.parentRunId ? "(continued after an answer)" : "") }),
      el("span", { class: "muted", text: ms === null ? " · running" : ` · ${ms} ms` }));
  }));
  if (!runs.length) list.append(el("li", { class: "muted", text: data.available ? "No requests yet." : "No store: runs are not kept." }));
}

async function refreshLog() {
  refreshRecent();
  let data;
  try { data = await api("/api/log?limit=300"); } catch (err) { $("#verdict").textContent = err.message; return; }
  dock.records = data.records;
  renderLog();
}

function renderLog() {
  const filter = $("#log-filter").value.trim().toLowerCase();
  const list = $("#timeline");
  list.replaceChildren();
  for (const r of (dock.records || []).slice().reverse()) {
    const text = JSON.stringify(r);
    if (filter && !text.toLowerCase().includes(filter)) continue;
    const detail = r.text || r.tool || r.status || r.action || r.mode || "";
    const item = el("li", { class: r.kind },
      el("span", { class: "kind", text: r.kind }), el("span", { text: ` ${detail}` }),
      el("span", { class: "muted", text: r.run_id ? ` · run ${String(r.run_id).slice(0, 8)}` : "" }));
    if (r.kind === "tool_call" && r.run_id && Number.isInteger(r.step)) {
      item.append(" ",
        el("button", { type: "button", class: "dry-run", text: "Dry-run again", onclick: () => replay(r.run_id, r.step, true) }), " ",
        el("button", { type: "button", class: "replay", text: "Replay", onclick: () => replay(r.run_id, r.step, false) }));
    }
    list.append(item);
  }
}

// Run or dry-run a logged step again: a new run through the whole pipeline (a write
// still asks), streamed like any other.
async function replay(runId, step, dryRun) {
  showTab("chat");
  addMessage("user", `${dryRun ? "Dry-run" : "Replay"} step ${step + 1} of run ${runId.slice(0, 8)}`, "you");
  const newId = `run-${uid()}`;
  const input = { threadId: thread, runId: newId, messages: [], forwardedProps: { clientSessionId: session, replay: { runId, step, dryRun } } };
  setBusy(true);
  const response = await fetch("/api/copilot/run", { method: "POST", body: JSON.stringify(input),
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" } });
  await follow(response, newId).catch((err) => addMessage("error", err.message));
}

async function exportBundle() {
  try {
    const b = await api("/api/bundle", {});
    const link = el("a", { href: b.download, text: `Download ${b.download.split("/").pop()}` });
    $("#verdict").replaceChildren(`Bug bundle written to ${b.path} (secrets redacted). `, link);
  } catch (err) { $("#verdict").textContent = `Bundle failed: ${err.message}`; }
}

async function verifyLog() {
  try { const v = await api("/api/log/verify"); $("#verdict").textContent = `Log verify: ${v.verdict}`; }
  catch (err) { $("#verdict").textContent = `Log verify failed: ${err.message}`; }
}

// -- settings --------------------------------------------------------------------------

async function loadSettings() {
  const data = await api("/api/settings");
  $("#profile-current").textContent = JSON.stringify(data.current, null, 2);
  if (!$("#profile-text").value) $("#profile-text").value = JSON.stringify(data.current, null, 2);
  const list = $("#profiles");
  list.replaceChildren();
  for (const p of data.profiles) {
    const item = el("li", { class: p.ok ? "" : "bad" }, el("strong", { text: p.name }),
      el("span", { text: p.ok ? " — valid " : ` — invalid: ${p.problems.join("; ")} ` }));
    if (p.ok) item.append(el("button", { type: "button", text: "Use for the next request", onclick: () => usePreset(p.name) }));
    list.append(item);
  }
  if (!data.profiles.length) list.append(el("li", { class: "muted", text: "No saved profiles: the built-in default is in use." }));
}

// The MCP servers the configuration names (adjutant-mcp's bridge): read-only.
async function loadMcp() {
  const list = $("#mcp-servers");
  let data;
  try { data = await api("/api/mcp"); } catch (err) { list.replaceChildren(el("li", { class: "bad", text: err.message })); return; }
  list.replaceChildren();
  if (!data.available) { list.append(el("li", { class: "muted", text: data.missing })); return; }
  const said = { running: "connected", stopped: "not connected now (connects on use)", starting: "connecting…", error: "cannot connect", off: "disabled" };
  for (const s of data.servers) {
    const item = el("li", { "data-server": s.name, "data-state": s.state },
      el("strong", { text: s.name }), el("span", { class: "mcp-state", text: ` ${said[s.state] || s.state}` }),
      el("span", { class: "muted", text: ` · ${s.transport} ${s.target} · ${s.tools} tool${s.tools === 1 ? "" : "s"} · ${s.source}` }));
    if (s.note) item.append(el("div", { class: "muted", text: s.note }));
    for (const [tool, why] of Object.entries(s.skipped || {})) item.append(el("div", { class: "muted", text: `tool ${tool} not mounted: ${why}` }));
    list.append(item);
  }
  for (const p of data.problems) list.append(el("li", { class: "bad", text: `problem: ${p}` }));
  if (!list.children.length) list.append(el("li", { class: "muted", text: "No MCP servers configured: `adjutant mcp add NAME -- COMMAND ARGS...` adds one." }));
}

async function usePreset(name) {
  try { dock.state = await api("/api/preset", { name }); renderState(); setStatus(`Preset: ${name}`); }
  catch (err) { setStatus(err.message); }
}

async function checkProfile() {
  const errors = $("#profile-errors");
  errors.replaceChildren();
  let body;
  try { body = JSON.parse($("#profile-text").value); } catch (err) { errors.append(el("li", { text: `not JSON: ${err.message}` })); return; }
  const response = await fetch("/api/settings/check", { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
  const data = await response.json();
  if (data.ok) errors.append(el("li", { class: "ok", text: "valid" }));
  for (const p of data.problems) errors.append(el("li", { text: p }));
}

// -- session history -------------------------------------------------------------------

async function loadSessions() {
  const data = await api("/api/sessions");
  $("#history-note").textContent = data.available
    ? `${data.sessions.length} stored runs${data.quarantined.length ? `; ${data.quarantined.length} unreadable record(s) set aside: ${data.quarantined.map((q) => q.error).join("; ")}` : ""}.`
    : "No store is installed: runs are not kept.";
  const list = $("#sessions");
  list.replaceChildren();
  dock.compare = [];
  for (const s of data.sessions.filter((x) => !x.parentRunId)) {
    const pick = el("input", { type: "checkbox", "aria-label": `compare ${s.prompt}` });
    pick.addEventListener("change", () => compare(s, pick.checked));
    list.append(el("li", { "data-thread": s.threadId },
      el("span", { class: "pin", text: s.pinned ? "📌 pinned" : "" }),
      el("span", { class: "prompt", text: s.prompt || "(no prompt)" }),
      el("span", { class: "muted", text: `${s.status} · ${s.startedAt}` }),
      el("button", { type: "button", text: "Load", onclick: () => loadSession(s.threadId) }),
      el("button", { type: "button", text: s.pinned ? "Unpin" : "Pin", onclick: () => pin(s.runId, !s.pinned) }),
      el("label", {}, pick, " compare")));
  }
  if (!list.children.length) list.append(el("li", { class: "muted", text: "No stored sessions yet." }));
}

async function pin(runId, pinned) {
  await api(`/api/sessions/${runId}/pin`, { pinned });
  await loadSessions();
}

async function compare(entry, on) {
  dock.compare = dock.compare.filter((e) => e.runId !== entry.runId);
  if (on) dock.compare.push(entry);
  const box = $("#compare");
  if (dock.compare.length < 2) { box.hidden = true; return; }
  const [a, b] = dock.compare.slice(-2);
  const tools = async (e) => {
    const data = await api(`/api/sessions/${e.threadId}`);
    const names = [];
    for (const run of data.runs) for (const env of run.events) if (env.data.type === "TOOL_CALL_START") names.push(env.data.toolCallName);
    return names.join(", ") || "none";
  };
  const rows = [["Prompt", a.prompt, b.prompt], ["Status", a.status, b.status],
    ["Started", a.startedAt, b.startedAt], ["Ended", a.endedAt || "", b.endedAt || ""],
    ["Tools run", await tools(a), await tools(b)]];
  box.replaceChildren(el("table", {}, ...rows.map(([k, x, y]) => el("tr", {}, el("th", { text: k }), el("td", { text: x || "" }), el("td", { text: y || "" })))));
  box.hidden = false;
}

// Rebuild the chat from a stored session: each run's snapshot, then its events in
// order, through the same code as the live stream, marked historical.
async function loadSession(threadId) {
  const data = await api(`/api/sessions/${threadId}`);
  dock.live_ = { lastSeq: dock.lastSeq, state: dock.state };
  dock.lastSeq = {};
  dock.historical = threadId;
  $("#messages").replaceChildren();
  $("#historical-name").textContent = `(${threadId}, ${data.runs.length} run(s))`;
  $("#historical").hidden = false;
  $("#ask").hidden = true;
  $(".quick").hidden = true;
  for (const run of data.runs) {
    if (run.snapshot) { dock.state = { ...dock.state, ...run.snapshot }; }
    for (const env of run.events) apply(env);
    if (run.incomplete) addMessage("error", "Part of this run could not be read (set aside).", "history");
  }
  setBusy(false);
  setStatus("");
  showTab("chat");
}

async function backToLive() {
  dock.historical = null;
  if (dock.live_) { dock.lastSeq = dock.live_.lastSeq; }
  $("#messages").replaceChildren();
  $("#historical").hidden = true;
  $("#ask").hidden = false;
  $(".quick").hidden = false;
  await loadState();
}

// -- tabs, keyboard, palette -----------------------------------------------------------

function showTab(name) {
  for (const b of document.querySelectorAll(".tabs button")) b.setAttribute("aria-selected", String(b.dataset.tab === name));
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== `tab-${name}`;
  if (name === "log") refreshLog();
  if (name === "settings") { loadSettings().catch((err) => setStatus(err.message)); loadMcp(); }
  if (name === "history") loadSessions().catch((err) => setStatus(err.message));
}

const COMMANDS = [
  ["Mode: Off", () => setMode("off")], ["Mode: Listen", () => setMode("listen")],
  ["Mode: Propose", () => setMode("propose")], ["Mode: Confirm", () => setMode("confirm")],
  ["Mode: Auto", () => setMode("auto")], ["Stop", () => stop()],
  ["Show chat", () => showTab("chat")], ["Show plan & permissions", () => showTab("plan")],
  ["Show action log", () => showTab("log")], ["Verify the action log", () => { showTab("log"); verifyLog(); }],
  ["Show settings", () => showTab("settings")], ["Show session history", () => showTab("history")],
  ["Summarize current folder", () => send("Summarize current folder")],
];

function openPalette() {
  const dialog = $("#palette");
  const input = $("#palette-input");
  const list = $("#palette-list");
  let chosen = 0;
  const render = () => {
    const q = input.value.toLowerCase();
    const hits = COMMANDS.filter(([name]) => name.toLowerCase().includes(q));
    chosen = Math.min(chosen, Math.max(hits.length - 1, 0));
    list.replaceChildren(...hits.map(([name, run], i) => el("li", { "aria-selected": String(i === chosen), text: name,
      onclick: () => { dialog.close(); run(); } })));
    return hits;
  };
  input.value = "";
  render();
  input.onkeydown = (e) => {
    const hits = render();
    if (e.key === "ArrowDown") { chosen = Math.min(chosen + 1, hits.length - 1); render(); e.preventDefault(); }
    if (e.key === "ArrowUp") { chosen = Math.max(chosen - 1, 0); render(); e.preventDefault(); }
    if (e.key === "Enter" && hits[chosen]) { dialog.close(); hits[chosen][1](); e.preventDefault(); }
  };
  input.oninput = () => { chosen = 0; render(); };
  dialog.showModal();
  input.focus();
}

document.addEventListener("keydown", (e) => {
  // Esc: a recording is cancelled, else speech stops (voice.js); only then does it stop
  // the run or deny the open question
  if (e.key === "Escape" && !$("#palette").open) {
    if (typeof voiceEscape === "function" && voiceEscape()) e.preventDefault();
    else if (dock.run || dock.question) { e.preventDefault(); stop(); }
  }
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") { e.preventDefault(); openPalette(); }
  if (e.altKey && ["1", "2", "3", "4", "5"].includes(e.key)) { e.preventDefault(); showTab(["chat", "plan", "log", "settings", "history"][Number(e.key) - 1]); }
});

function init() {
  for (const b of document.querySelectorAll("#modes button")) b.addEventListener("click", () => setMode(b.dataset.mode));
  for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  for (const b of document.querySelectorAll(".quick button")) b.addEventListener("click", () => send(b.dataset.prompt));
  $("#ask").addEventListener("submit", (e) => { e.preventDefault(); const t = $("#prompt"); const text = t.value; t.value = ""; send(text); });
  $("#prompt").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#ask").requestSubmit(); } });
  $("#stop").addEventListener("click", stop);
  $("#log-refresh").addEventListener("click", refreshLog);
  $("#log-verify").addEventListener("click", verifyLog);
  $("#log-bundle").addEventListener("click", exportBundle);
  $("#log-filter").addEventListener("input", renderLog);
  $("#profile-check").addEventListener("click", checkProfile);
  $("#back-live").addEventListener("click", backToLive);
  loadState().catch((err) => setStatus(`Could not load the state: ${err.message}`));
  loadRoles().catch((err) => setStatus(`Roles: ${err.message}`));
  $("#prompt").focus();
}
init();

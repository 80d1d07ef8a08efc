// A question in the chat, where the request was made: the step in plain words, one main
// reason (the others behind "why?"), the preview once, Allow once / Deny / Edit, and the
// scoped allows that question offers. Answered, it collapses to what was decided and
// when ("✓ Granted by you · 05:42:55"), live and when a stored session is loaded. Plan &
// Permissions keeps an overview with a link here.

import { $, el, setStatus, showTab, uid } from "./dom.js";
import { printableJSON } from "./printable.js";
import { dock, follow, loadState, on, postRun, session, thread } from "./stream.js";
import { diffView } from "./widgets.js";

const asked = {}; // the question's chat item, by interrupt id
const scopeSent = {}; // the scoped allow sent with an answer, by interrupt id

// Why it asks, in the user's words: the mode and the write-gate say what every change
// gets; anything else (a path outside the working folders, a hard link) is the news.
const ROUTINE = /^(mode|write-gate|kernel):|^guard: \S+ changes things \(/;

function plain(reason) { return reason.replace(/^[a-z-]+: (path: )?/, ""); }

function mainReason(p) {
  const reasons = p.reasons || [];
  const news = reasons.find((r) => !ROUTINE.test(r));
  if (news) return plain(news);
  if (p.level !== "read") return "It changes something on your machine: every change waits for your yes.";
  return reasons.length ? plain(reasons[0]) : "It needs your yes.";
}

function when(ms) { return new Date(ms || Date.now()).toLocaleTimeString([], { hour12: false }); }

export function showQuestion(interrupt, runId) {
  if (asked[interrupt.id]) { if (!dock.historical && !dock.restoring) activate(interrupt, runId); return; }
  const meta = interrupt.metadata || {};
  const item = el("li", { class: `msg question${meta.escalation ? " escalation" : ""}`, "data-interrupt": interrupt.id, tabindex: "-1" });
  item.append(el("span", { class: "who", text: "needs your yes" }), el("h3", { text: interrupt.message || "Allow this?" }));
  if (meta.escalation) { // the router's question: this request would leave the machine
    const e = meta.escalation;
    item.append(el("p", { class: "reason", text: `It leaves this machine: ${e.model} receives the request. At most $${Number(e.cost).toFixed(4)} (about ${e.tokens} tokens).` }),
      el("details", { class: "why" }, el("summary", { text: "why?" }), el("div", { text: e.reason })),
      el("div", { class: "actions" },
        el("button", { type: "button", id: "deny", class: "yes", text: "No, keep it here", onclick: () => answer("deny") }),
        el("button", { type: "button", id: "allow", text: `Yes, send it to ${e.preset}`, onclick: () => answer("allow") })));
  } else if (meta.packet) {
    const p = meta.packet;
    if (interrupt.toolCallId) dock.previews[interrupt.toolCallId] = p.preview; // what is granted
    item.append(el("p", { class: "reason", text: mainReason(p) }));
    const why = el("details", { class: "why" }, el("summary", { text: "why?" }),
      el("ul", {}, ...(p.reasons || []).map((r) => el("li", { text: r }))),
      el("div", { class: "muted", text: `${p.tool} · ${p.level}${p.intent ? ` · the model's reason: ${p.intent}` : ""}` }));
    item.append(why, diffView(p.preview));
    const edit = el("div", { class: "edit-box", hidden: "" });
    const args = el("textarea", { id: "edit-args", rows: "4", "aria-label": "Arguments (JSON)", spellcheck: "false" });
    args.value = printableJSON(p.args); // valid JSON: edits parse back
    edit.append(el("label", { for: "edit-args", text: "Arguments (JSON), then Preview edit:" }), args,
      el("button", { type: "button", id: "edit-preview", text: "Preview edit", onclick: () => answer("edit") }));
    item.append(el("div", { class: "actions" },
      el("button", { type: "button", id: "grant", class: "yes", text: "Allow once", onclick: () => answer("grant") }),
      el("button", { type: "button", id: "deny", text: "Deny", onclick: () => answer("deny") }),
      el("button", { type: "button", id: "edit", text: "Edit", "aria-expanded": "false",
        onclick: (e) => { edit.hidden = !edit.hidden; e.target.setAttribute("aria-expanded", String(!edit.hidden)); if (!edit.hidden) args.focus(); } })), edit);
    const scopes = meta.scopes || [];
    if (scopes.length) {
      item.append(el("div", { class: "scopes" }, el("span", { class: "muted", text: "Or allow more: " }),
        ...scopes.map((s) => el("button", { type: "button", class: "scope", "data-grant": s.grant, "data-seconds": String(s.seconds),
          text: s.label, onclick: () => answer("grant", s) }))));
    }
  } else {
    for (const s of meta.steps || []) item.append(el("div", { text: `${s.index + 1}. ${s.summary || s.tool}` }), diffView(s.preview));
    item.append(el("div", { class: "actions" },
      el("button", { type: "button", id: "execute", class: "yes", text: "Run the plan", onclick: () => answer("execute") }),
      el("button", { type: "button", id: "step", text: "Ask me step by step", onclick: () => answer("step") }),
      el("button", { type: "button", id: "deny", text: "Deny", onclick: () => answer("deny") })));
  }
  asked[interrupt.id] = item;
  $("#messages").append(item);
  if (dock.historical || dock.restoring) { item.classList.add("asked-then"); return; }
  activate(interrupt, runId);
}

// The question waiting now: its buttons live, the overview and the status say so.
function activate(interrupt, runId) {
  const item = asked[interrupt.id];
  dock.question = { interrupt, runId };
  item.id = "question";
  item.classList.remove("asked-then");
  item.classList.add("open");
  $("#plan-badge").hidden = false;
  $("#question-overview").replaceChildren(el("strong", { text: `Waiting for your answer: ${interrupt.message || "a question"}` }), " ",
    el("a", { href: "#question", id: "go-to-question", text: "Go to it", onclick: (e) => { e.preventDefault(); goToQuestion(); } }));
  $("#question-overview").hidden = false;
  setStatus("Waiting for your answer.");
  item.scrollIntoView({ block: "nearest" });
  (item.querySelector("button.yes") || item.querySelector("button")).focus({ preventScroll: true });
}

export function goToQuestion() {
  showTab("chat");
  const item = $("#question");
  if (item) { item.scrollIntoView({ block: "center" }); (item.querySelector("button.yes") || item).focus(); }
}

function closeOverview() {
  dock.question = null;
  $("#plan-badge").hidden = true;
  $("#question-overview").hidden = true;
}

// What was decided, in place of the buttons ("✓ Granted by you · 05:42:55").
function decided(d, env) {
  if (d.name !== "adjutant.approval.decided") return;
  const v = d.value || {};
  const id = (v.resume || {}).interruptId;
  const item = asked[id];
  if (!item) return;
  const action = v.decision || ((v.resume || {}).payload || {}).action;
  const unanswered = v.unanswered || (v.resume || {}).status === "cancelled";
  const said = unanswered ? ["none", "– nobody answered"]
    : { grant: ["yes", "✓ Granted by you"], execute: ["yes", "✓ Plan run by you"], step: ["yes", "✓ Step by step, by you"],
      deny: ["no", "✗ Denied by you"], edit: ["edit", "✎ Edited by you"],
      send: ["yes", "✓ Sent off this machine by you"], keep: ["no", "✗ Kept on this machine by you"] }[action] || ["none", action];
  const scope = scopeSent[id];
  const line = el("div", { class: `decided ${said[0]}`, text: `${said[1]} · ${when(env && env.timestamp)}${scope ? ` · and: ${scope.label}` : ""}` });
  const title = item.querySelector("h3");
  item.replaceChildren(el("span", { class: "who", text: "your answer" }), line);
  if (title) line.prepend(el("span", { class: "what", text: `${title.textContent} ` }));
  item.classList.remove("open");
  item.classList.add("answered");
  item.removeAttribute("id");
  if (dock.question && dock.question.interrupt.id === id) closeOverview();
}

// An answer the operator publishes no event for (the router's question): read from the
// run it started, live or stored.
function resumed(d, env) {
  const entry = ((d.input || {}).resume || [])[0];
  const item = entry && asked[entry.interruptId];
  if (!item || !item.classList.contains("escalation")) return;
  const yes = (entry.payload || {}).action === "allow" && entry.status !== "cancelled";
  decided({ name: "adjutant.approval.decided", value: { decision: yes ? "send" : "keep", resume: entry } }, env);
}

export async function answer(action, scope) {
  const q = dock.question;
  if (!q) return;
  const payload = { action, packetId: (q.interrupt.metadata || {}).packetId };
  if (scope) { payload.scope = { grant: scope.grant, seconds: scope.seconds }; scopeSent[q.interrupt.id] = scope; }
  if (action === "edit") {
    try { payload.args = JSON.parse($("#edit-args").value); } catch (err) { setStatus(`The arguments are not JSON: ${err.message}`); return; }
  }
  const runId = `run-${uid()}`;
  const input = { threadId: thread, runId, parentRunId: q.runId, messages: [], forwardedProps: { clientSessionId: session },
    resume: [{ interruptId: q.interrupt.id, status: "resolved", payload }] };
  for (const b of asked[q.interrupt.id].querySelectorAll("button")) b.disabled = true;
  const response = await postRun(input);
  if (!response.ok) {
    const why = (await response.json().catch(() => ({}))).error || response.status;
    for (const b of asked[q.interrupt.id].querySelectorAll("button")) b.disabled = false;
    delete scopeSent[q.interrupt.id];
    setStatus(`Answer refused: ${why}`);
    await loadState();
    return;
  }
  closeOverview();
  setStatus("Working…");
  if (scope) loadState().catch(() => {}); // the new grant's chip, with its time left
  await follow(response, runId).catch((err) => setStatus(err.message));
}

export function forgetQuestions() { for (const id of Object.keys(asked)) delete asked[id]; closeOverview(); }

export function initQuestions() {
  on("CUSTOM", decided);
  on("RUN_STARTED", resumed);
  on("interrupt", showQuestion);
  on("RUN_FINISHED", (d, env) => {
    if (d.outcome && d.outcome.type === "interrupt") for (const i of d.outcome.interrupts) showQuestion(i, env.runId);
  });
}

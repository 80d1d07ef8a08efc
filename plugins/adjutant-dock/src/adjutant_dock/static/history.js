// History: every stored run (from the key/value store): Load rehydrates the chat,
// marked historical and read-only; Pin; tick two to compare.

import { $, addMessage, api, el, onTab, setStatus, setText, showTab } from "./dom.js";
import { forgetQuestions } from "./question.js";
import { restoreThread } from "./restore.js";
import { apply, dock, setBusy } from "./stream.js";

let compared = [];

// One row per request ("[executed] add a line · 1 question: granted"): its runs (one per
// answer) folded by the server, the status the last one ended with.
export function requestLine(r) {
  const answers = r.answers || [];
  const asked = r.questions || 0;
  return asked ? ` · ${asked} question${asked === 1 ? "" : "s"}: ${answers.length ? answers.join(", ") : "no answer yet"}${asked > answers.length && answers.length ? ", waiting" : ""}` : "";
}

async function loadSessions() {
  const data = await api("/api/sessions");
  const requests = data.requests || [];
  $("#history-note").textContent = data.available
    ? `${requests.length} stored request${requests.length === 1 ? "" : "s"}${data.quarantined.length ? `; ${data.quarantined.length} unreadable record(s) set aside: ${data.quarantined.map((q) => q.error).join("; ")}` : ""}.`
    : "No store is installed: runs are not kept.";
  const list = $("#sessions");
  list.replaceChildren();
  compared = [];
  for (const s of requests) {
    const pick = el("input", { type: "checkbox", "aria-label": `compare ${s.prompt}` });
    pick.addEventListener("change", () => compare(s, pick.checked));
    list.append(el("li", { "data-thread": s.threadId, "data-status": s.status },
      el("span", { class: "pin", text: s.pinned ? "📌 pinned" : "" }),
      el("span", { class: "verdict-word", text: `[${s.status}]` }),
      el("span", { class: "prompt", text: `${s.prompt || "(no prompt)"}${requestLine(s)}` }),
      el("span", { class: "muted", text: new Date(s.startedAt).toLocaleString() }),
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
  compared = compared.filter((e) => e.runId !== entry.runId);
  if (on) compared.push(entry);
  const box = $("#compare");
  if (compared.length < 2) { box.hidden = true; return; }
  const [a, b] = compared.slice(-2);
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
  forgetQuestions();
  $("#messages").replaceChildren();
  setText($("#historical-name"), `(${threadId}, ${data.runs.length} run(s))`);
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
  dock.lastSeq = {}; // the live thread is read back whole
  forgetQuestions();
  $("#messages").replaceChildren();
  $("#historical").hidden = true;
  $("#ask").hidden = false;
  $(".quick").hidden = false;
  await restoreThread();
}

export function initHistory() {
  onTab("history", () => loadSessions().catch((err) => setStatus(err.message)));
  $("#back-live").addEventListener("click", backToLive);
}

// The chat: what was asked, the model's output as it streams, each tool call with its
// arguments and result, how the run ended; sending a request (with a role), stopping.

import { $, addMessage, api, el, setStatus, setText, uid } from "./dom.js";
import { answer } from "./question.js";
import { dock, follow, on, postRun, session, setBusy, thread } from "./stream.js";
import { printable } from "./printable.js";
import { diffView, isDiff, resultWidget } from "./widgets.js";

const bubbles = {}; // model output by message id
const tools = {}; // tool calls by id

// "Thinking… N s" from the moment a request is sent until the model's first words, a
// question, or the end.
let thinking = null;
export function startThinking() {
  stopThinking();
  const since = Date.now();
  const box = $("#thinking");
  const tick = () => setText(box, `Thinking… ${Math.floor((Date.now() - since) / 1000)} s`);
  tick();
  box.hidden = false;
  thinking = setInterval(tick, 1000);
}
export function stopThinking() { clearInterval(thinking); thinking = null; $("#thinking").hidden = true; }

// The planner's request-length limit (from the state): an over-long request stays in
// the box with the counter, never sent and never wiped.
export function fitsLimit() {
  const limit = (dock.state && dock.state.maxRequest) || Infinity;
  const length = $("#prompt").value.length;
  const counter = $("#prompt-count");
  counter.hidden = length < limit * 0.8;
  setText(counter, `${length.toLocaleString()} / ${limit.toLocaleString()} characters${length > limit ? " — too long: shorten it, or save the text in a file and name the file" : ""}`);
  counter.classList.toggle("over", length > limit);
  return length <= limit;
}

export async function send(prompt, who = "you") {
  if (!prompt.trim()) return;
  addMessage("user", prompt, who);
  startThinking();
  const runId = `run-${uid()}`;
  const role = $("#role").value;
  const input = { threadId: thread, runId, messages: [{ id: `msg-${uid()}`, role: "user", content: prompt }],
    tools: [], context: [], forwardedProps: { clientSessionId: session, ...(role ? { role } : {}) } };
  setBusy(true);
  const response = await postRun(input);
  await follow(response, runId).catch((err) => addMessage("error", err.message));
}

export async function stop() {
  if (dock.question) { await answer("deny"); return; }
  if (!dock.run) return;
  setStatus("Stopping…");
  try { await api(`/api/copilot/runs/${dock.run}/stop`, {}); } catch (err) { setStatus(err.message); }
}

async function loadRoles() {
  const data = await api("/api/roles");
  const select = $("#role");
  const chosen = localStorage.getItem("dock.role") || "";
  for (const r of data.roles) select.append(el("option", { value: r.role, text: `${r.role} (${r.path})` }));
  if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
  select.addEventListener("change", () => localStorage.setItem("dock.role", select.value));
}

// -- the run's events ------------------------------------------------------------------

function started(d, env) {
  if (dock.historical || dock.restoring) {
    const said = ((d.input || {}).messages || []).filter((m) => m.role === "user").pop();
    if (said && typeof said.content === "string") addMessage("user", said.content, "you");
  } else { dock.run = env.runId; setBusy(true); setStatus("Working…"); }
}

function modelStart(d) {
  const pre = el("pre", { class: "stream", "data-message": d.messageId });
  const box = el("details", { class: "model", open: "" }, el("summary", { text: "Model output (streaming)" }), pre);
  const item = el("li", { class: "msg model" }, box);
  $("#messages").append(item);
  bubbles[d.messageId] = { pre, box };
}
function modelDelta(d) {
  if (thinking) stopThinking(); // the first words are here
  const b = bubbles[d.messageId];
  if (b) { b.pre.append(printable(d.delta)); b.pre.scrollTop = b.pre.scrollHeight; }
}
function modelEnd(d) {
  const b = bubbles[d.messageId];
  if (b) { b.box.removeAttribute("open"); b.box.querySelector("summary").textContent = "Model output"; }
}

function toolStart(d) {
  const args = el("pre", { class: "args" });
  const result = el("pre", { class: "result" });
  const item = addMessage("tool", "", `tool: ${d.toolCallName}`);
  item.querySelector("div").replaceWith(el("div", {}, args, result));
  tools[d.toolCallId] = { args, result, item };
}
function toolArgs(d) { if (tools[d.toolCallId]) tools[d.toolCallId].args.append(printable(d.delta)); }
function toolResult(d) {
  const t = tools[d.toolCallId];
  if (!t) return;
  setText(t.result, `→ ${d.content}`);
  const widget = resultWidget(String(d.content || ""));
  const preview = dock.previews[d.toolCallId];
  if (widget) { // structure shown as such; the raw text one click away
    const raw = el("details", { class: "raw" }, el("summary", { text: "Raw text" }));
    t.result.before(widget, raw);
    raw.append(t.result);
  } else if (isDiff(preview)) { // a write: the change it made, as previewed and approved
    t.result.after(el("details", { class: "applied", open: "" }, el("summary", { text: "Changes (the approved preview)" }), diffView(preview)));
  }
}

function custom(d) {
  const value = d.value;
  if (d.name === "adjutant.dock.queued") { dock.queuedAt = value.position; setStatus(`Queued: ${value.position} ahead of this request`); }
  // a step the user denied is said by its question ("✗ Denied by you")
  else if (d.name === "adjutant.step.denied" && value.by !== "user") addMessage("error", `Step ${value.step + 1} (${value.tool}) not run: ${value.reason}`, `refused by ${value.by}`);
}

// The run's end (a question is question.js's to show).
function finished(d) {
  stopThinking();
  if (d.outcome && d.outcome.type === "interrupt") return;
  setBusy(false);
  setStatus("");
  const r = d.result || {};
  if (r.text) addMessage("assistant", r.text, "adjutant");
  const said = { executed: "Done.", denied: "Nothing ran: every step was refused or denied.",
    proposed: "Proposed only (the mode is Propose): see the plan.", ignored: `Ignored: ${r.text || "the mode"}` };
  if (!r.text && said[r.status]) addMessage("assistant", said[r.status], `adjutant · ${r.status}`);
  else if (r.status && r.status !== "answered") setStatus(`Run ended: ${r.status}`);
}

function failed(d) { stopThinking(); setBusy(false); addMessage("error", d.message); setStatus(""); }

export function initChat() {
  on("RUN_STARTED", started);
  on("TEXT_MESSAGE_START", modelStart);
  on("TEXT_MESSAGE_CONTENT", modelDelta);
  on("TEXT_MESSAGE_END", modelEnd);
  on("TOOL_CALL_START", toolStart);
  on("TOOL_CALL_ARGS", toolArgs);
  on("TOOL_CALL_RESULT", toolResult);
  on("CUSTOM", custom);
  on("RUN_FINISHED", finished);
  on("RUN_ERROR", failed);
  for (const b of document.querySelectorAll(".quick button")) b.addEventListener("click", () => send(b.dataset.prompt));
  $("#ask").addEventListener("submit", (e) => {
    e.preventDefault();
    const t = $("#prompt");
    if (!fitsLimit()) { setStatus("Not sent: the request is longer than the planner reads. It is still in the box."); return; }
    const text = t.value;
    t.value = "";
    fitsLimit();
    send(text);
  });
  $("#prompt").addEventListener("input", fitsLimit);
  $("#prompt").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#ask").requestSubmit(); } });
  $("#stop").addEventListener("click", stop);
  loadRoles().catch((err) => setStatus(`Roles: ${err.message}`));
}

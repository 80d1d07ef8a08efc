// Plan & Permissions: the plan before anything runs (each step's arguments, verdict,
// preview, why it asks), the context stack, and the open question, answered with a
// RunAgentInput carrying `resume` (Grant / Deny / Preview edit, or Execute plan / Run
// step by step / Deny).

import { $, addMessage, el, setStatus, showTab, uid } from "./dom.js";
import { printableJSON } from "./printable.js";
import { dock, follow, loadState, on, postRun, session, thread } from "./stream.js";
import { diffView } from "./widgets.js";

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

function stackItem(kind, text) {
  const list = $("#context-stack");
  for (const old of list.querySelectorAll(`li[data-kind="${kind}"], li.muted`)) old.remove();
  list.append(el("li", { "data-kind": kind, text }));
}

function activity(d, env) {
  if (d.activityType === "plan") {
    renderPlan(d.content);
    (d.content.steps || []).forEach((step, i) => { dock.previews[`${env.runId}-step-${i}`] = step.preview; });
  }
  else if (d.activityType === "context") {
    const c = d.content || {};
    stackItem("bulletin", `Context bulletin: cwd ${c.cwd || "?"}${c.git && c.git.branch ? `, git ${c.git.branch}` : ""}${(c.selected_files || []).length ? `, files ${c.selected_files.join(", ")}` : ""}${(c.recent_shell || []).length ? `, ${c.recent_shell.length} recent shell lines` : ""}`);
    setStatus(`Context: ${c.cwd || ""}${c.git && c.git.branch ? ` (branch ${c.git.branch})` : ""}`);
  } else if (d.activityType === "warning") addMessage("error", d.content.text, "warning");
  else if (d.activityType === "route") {  // which preset answers, said where it is read
    const c = d.content || {};
    addMessage("system", `This one ${c.escalated ? "went to" : "stays on"} ${c.label}: ${c.reason}`, "route");
  }
}

function custom(d) {
  if (d.name === "adjutant.approval.decided") clearQuestion();
  else if (d.name === "adjutant.dock.context_stack" && d.value.skill) {
    const k = d.value.skill;
    stackItem("skill", `Role ${k.role}: ${k.path} (${k.bytes} bytes, sha256 ${k.sha256}) in the system prompt`);
  }
}

// A run that ends asking: each question is shown here.
function finished(d, env) {
  if (!(d.outcome && d.outcome.type === "interrupt")) return;
  for (const interrupt of d.outcome.interrupts) showQuestion(interrupt, env.runId);
  setStatus("Waiting for your answer (Plan & Permissions).");
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
    edit.value = printableJSON(p.args);  // valid JSON: edits parse back
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

export async function answer(action) {
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
  const response = await postRun(input);
  if (!response.ok) {
    const why = (await response.json().catch(() => ({}))).error || response.status;
    addMessage("error", `Answer refused: ${why}`);
    await loadState();
    return;
  }
  await follow(response, runId).catch((err) => addMessage("error", err.message));
}

export function initPlan() {
  on("ACTIVITY_SNAPSHOT", activity);
  on("CUSTOM", custom);
  on("RUN_FINISHED", finished);
  on("interrupt", showQuestion);
}

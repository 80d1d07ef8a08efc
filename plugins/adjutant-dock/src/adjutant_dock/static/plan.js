// Plan & Permissions: the overview. The plan before anything runs (each step's
// arguments, verdict, preview, why it asks), the context stack, and a line pointing to
// the open question, which is asked in the chat (question.js).

import { $, addMessage, el, setStatus } from "./dom.js";
import { dock, on } from "./stream.js";
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
  // the reply above was not used: the choice was made again, or the model asked again
  else if (d.activityType === "second-look") addMessage("system", `Second look: ${d.content.text}`, "second look");
  else if (d.activityType === "malformed-plan") {
    addMessage("system", `Not a valid plan, so not used (${d.content.error}); asking again with a simpler prompt.`, "retry");
  }
  else if (d.activityType === "route") {  // which preset answers, said where it is read
    const c = d.content || {};
    addMessage("system", `This one ${c.escalated ? "went to" : "stays on"} ${c.label}: ${c.reason}`, "route");
  }
}

function custom(d) {
  if (d.name === "adjutant.dock.context_stack" && d.value.skill) {
    const k = d.value.skill;
    stackItem("skill", `Role ${k.role}: ${k.path} (${k.bytes} bytes, sha256 ${k.sha256}) in the system prompt`);
  }
}

export function initPlan() {
  on("ACTIVITY_SNAPSHOT", activity);
  on("CUSTOM", custom);
}

// The Tasks view: adjutant-tasks' durable queue. Each task's status, progress, message,
// error, outputs and artifact files, and the question it waits for (the step, why,
// the preview, its arguments) with Approve / Deny bound to the digest of that very
// question: the server refuses an answer to a question that changed since it was shown.
// Cancel and Retry as `adjutant tasks cancel|retry`. The runner may run in another
// process, so the view polls the queue every 1.5 s while it is open. A task's inputs,
// outputs, messages and previews are untrusted: every field is set as text, through
// `printable`.

import { $, api, el, onTab, setText } from "./dom.js";
import { printableJSON } from "./printable.js";
import { diffView, isDiff } from "./widgets.js";

const POLL_MS = 1500;
let timer = null;
let last = ""; // the last answer drawn: the list is drawn again only when it changed
let filter = "all";
const opened = new Set(); // the <details> the user opened, kept across redraws

const STATUS = { queued: "queued", running: "running", waiting_for_human: "waits for you", done: "done", failed: "failed", cancelled: "cancelled" };
const time = (s) => (s ? new Date(s * 1000).toLocaleTimeString([], { hour12: false }) : "–");
const size = (n) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);

function details(key, title, ...body) {
  const d = el("details", { class: "tk-more", "data-key": key }, el("summary", { text: title }), ...body);
  if (opened.has(key)) d.open = true;
  d.addEventListener("toggle", () => { if (d.open) opened.add(key); else opened.delete(key); });
  return d;
}

function question(t) {
  const q = t.question;
  if (t.waiting_on) return el("p", { class: "tk-waits muted", text: `Waits for its nested step's task ${t.waiting_on}: answer that one.` });
  const box = el("div", { class: "tk-question", role: "group", "aria-label": `Task ${t.id} asks` });
  box.append(el("h4", { text: `Allow this? ${q.summary || q.tool}` }),
    el("p", { class: "muted", text: `step ${q.step} · ${q.tool} · ${q.level} · asked ${time(q.asked_at)}` }));
  if (q.reasons && q.reasons.length) box.append(el("ul", { class: "tk-reasons" }, ...q.reasons.map((r) => el("li", { text: r }))));
  box.append(q.preview && isDiff(q.preview) ? diffView(q.preview) : el("pre", { class: "tk-preview", text: q.preview || "(no preview)" }),
    details(`args-${t.id}`, "arguments", el("pre", { class: "tk-args", text: printableJSON(q.args) })));
  // bound to the question drawn here: its digest goes with the answer
  const digest = q.digest;
  box.append(el("div", { class: "actions" },
    el("button", { type: "button", class: "yes tk-approve", text: "Approve", onclick: (e) => answer(t.id, "approve", digest, e.target) }),
    el("button", { type: "button", class: "tk-deny", text: "Deny", onclick: (e) => answer(t.id, "deny", digest, e.target) }),
    el("span", { class: "muted tk-digest", text: `preview ${digest.slice(0, 12)}`, title: `sha256 of the tool, arguments and preview: ${digest}` })));
  return box;
}

function card(t) {
  const pct = Math.round((t.progress || 0) * 100);
  const item = el("li", { class: `tk-task st-${t.status}`, "data-id": t.id, "data-status": t.status });
  item.append(el("div", { class: "tk-line" },
    el("span", { class: "tk-status", text: STATUS[t.status] || t.status }),
    el("code", { class: "tk-cap", text: t.capability }),
    el("span", { class: "muted tk-id", text: t.id.slice(0, 12), title: t.id }),
    el("span", { class: "muted tk-when", text: `queued ${time(t.created_at)}${t.finished_at ? ` · ended ${time(t.finished_at)}` : ""}` })));
  const asks = t.status === "waiting_for_human" && (t.question || t.waiting_on);
  // the message, unless the question below says the same
  // (a finished task's last message is history: its status and outputs say the rest)
  const message = t.finished || (asks && /^waits for your approval/.test(t.message || "")) ? "" : t.message || "";
  if (t.status === "running" || pct > 0) {
    const bar = el("progress", { class: "tk-bar", max: "100", value: String(pct), "aria-label": `Progress of ${t.capability}` });
    item.append(el("div", { class: "tk-progress" }, bar, el("span", { class: "tk-pct", text: `${pct}%` }),
      el("span", { class: "tk-msg", text: message })));
  } else if (message) item.append(el("p", { class: "tk-msg", text: message }));
  const meta = [`attempt ${t.attempts} of ${t.max_attempts}`];
  if (t.resumes) meta.push(`resumed ${t.resumes}×`);
  if (t.handoff) meta.push(`on Celery (${t.handoff})`);
  if (t.schedule_id) meta.push(`schedule ${t.schedule_id}`);
  item.append(el("p", { class: "muted tk-meta", text: meta.join(" · ") }));
  // nesting (a task run by another as a nested step: `run_child`, a flow's `flow` step)
  const nest = [];
  if (t.parent_task) nest.push(`nested in task ${t.parent_task.slice(0, 12)}`);
  if (t.children && t.children.length) nest.push(`nested tasks: ${t.children.map((c) => c.slice(0, 12)).join(", ")}`);
  if (nest.length) item.append(el("p", { class: "muted tk-nest", text: nest.join(" · ") }));
  if (t.error) item.append(el("p", { class: "tk-error", role: "note", text: t.error }));
  if (asks) item.append(question(t));
  if (t.outputs && Object.keys(t.outputs).length) item.append(details(`out-${t.id}`, "outputs", el("pre", { class: "tk-outputs", text: printableJSON(t.outputs) })));
  if (t.artifacts && t.files.length) {
    item.append(details(`files-${t.id}`, `files (${t.files.length})`,
      el("p", { class: "muted tk-folder", text: t.artifacts }),
      el("ul", { class: "tk-files" }, ...t.files.map((f) => el("li", {}, el("span", { text: f.name }), el("span", { class: "muted", text: ` ${size(f.size)}` }))))));
  }
  item.append(details(`in-${t.id}`, "inputs", el("pre", { class: "tk-inputs", text: printableJSON(t.inputs) })));
  const buttons = el("div", { class: "actions tk-actions" });
  if (!t.finished) buttons.append(el("button", { type: "button", class: "tk-cancel", text: "Cancel", onclick: (e) => change(t.id, "cancel", e.target) }));
  if (t.status === "failed" || t.status === "cancelled") buttons.append(el("button", { type: "button", class: "tk-retry", text: "Retry", onclick: (e) => change(t.id, "retry", e.target) }));
  if (buttons.childElementCount) item.append(buttons);
  return item;
}

function render(data) {
  const r = data.runner;
  const waiting = data.tasks.filter((t) => t.status === "waiting_for_human" && !t.waiting_on).length;
  const where = r.alive ? (r.here ? "the runner runs in this dock" : `the runner runs in process ${r.pid}`)
    : "no runner is running: queued tasks wait for adjutant tasks run, or for a chat";
  setText($("#tasks-head"), `${data.tasks.length} task${data.tasks.length === 1 ? "" : "s"} shown · ${waiting} waiting for you · ${where}${r.broker ? ` · Celery: ${r.broker}` : ""}`);
  const badge = $("#tasks-badge");
  badge.hidden = waiting === 0;
  setText(badge, String(waiting));
  const list = $("#tasks-list");
  if (!data.tasks.length) {
    list.replaceChildren(el("li", { class: "muted tk-none", text: filter === "open" ? "No open tasks." : "No tasks yet. schedule.task and doc.summarize queue them; adjutant tasks list shows them too." }));
    return;
  }
  list.replaceChildren(...data.tasks.map(card));
}

function note(text) {
  const n = $("#tasks-note");
  setText(n, text || "");
  n.hidden = !text;
}

export async function loadTasks(force = false) {
  try {
    const data = await api(`/api/tasks?status=${filter}`);
    const seen = JSON.stringify(data);
    if (force || seen !== last) { last = seen; render(data); }
  } catch (err) {
    note(err.message);
    if (/pip install/.test(err.message)) { stopPolling(); setText($("#tasks-head"), "The Tasks view is not installed."); $("#tasks-list").replaceChildren(); }
  }
}

async function answer(id, action, digest, button) {
  button.disabled = true;
  try {
    await api("/api/tasks/answer", { task: id, action, digest });
    note("");
  } catch (err) {
    note(`Not ${action === "approve" ? "approved" : "denied"}: ${err.message}`);
  }
  await loadTasks(true);
}

async function change(id, op, button) {
  button.disabled = true;
  try { await api(`/api/tasks/${op}`, { task: id }); note(""); } catch (err) { note(`${op}: ${err.message}`); }
  await loadTasks(true);
}

function stopPolling() { clearInterval(timer); timer = null; }

export function initTasks() {
  for (const b of document.querySelectorAll("#tasks-filter button")) {
    b.addEventListener("click", () => {
      filter = b.dataset.filter;
      for (const o of document.querySelectorAll("#tasks-filter button")) o.setAttribute("aria-pressed", String(o === b));
      loadTasks(true);
    });
  }
  onTab("tasks", () => {
    loadTasks(true);
    if (!timer) timer = setInterval(() => { if ($("#tab-tasks").hidden) stopPolling(); else loadTasks(); }, POLL_MS);
  });
}

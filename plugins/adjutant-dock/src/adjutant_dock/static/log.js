// Action log: the last requests and how they ended (from the history), the timeline
// from the action log (filterable), Verify log, Export bug bundle, and each tool call
// dry-run or replayed again: a new run through the whole pipeline (a write still asks).

import { $, addMessage, api, el, onTab, setText, showTab, uid } from "./dom.js";
import { requestLine } from "./history.js";
import { printable } from "./printable.js";
import { dock, follow, on, postRun, session, setBusy, thread } from "./stream.js";

let records = [];

async function refreshRecent() {
  const list = $("#recent");
  let data;
  try { data = await api("/api/sessions"); } catch (err) { list.replaceChildren(el("li", { text: err.message })); return; }
  const runs = (data.requests || []).slice(0, 8);
  list.replaceChildren(...runs.map((r) => {
    const ms = r.endedAt ? Date.parse(r.endedAt) - Date.parse(r.startedAt) : null;
    return el("li", { "data-status": r.status }, el("span", { class: "verdict-word", text: `[${r.status}] ` }),
      el("span", { text: `${r.prompt || ""}${requestLine(r)}` }),
      el("span", { class: "muted", text: ms === null ? " · running" : ` · ${ms} ms` }));
  }));
  if (!runs.length) list.append(el("li", { class: "muted", text: data.available ? "No requests yet." : "No store: runs are not kept." }));
}

async function refreshLog() {
  refreshRecent();
  let data;
  try { data = await api("/api/log?limit=300"); } catch (err) { setText($("#verdict"), err.message); return; }
  records = data.records;
  renderLog();
}

const minutes = (s) => (s >= 3600 ? `${Math.round(s / 360) / 10} h` : `${Math.round(s / 60)} min`);

// A record in plain words; the raw record stays one click away.
function label(r) {
  const step = Number.isInteger(r.step) ? ` step ${r.step + 1}` : "";
  switch (r.kind) {
    case "prompt": return `You asked: ${r.text || ""}`;
    case "context": return "Context gathered (folder, git, files)";
    case "attempt": return `The model answered (attempt ${r.attempt || 1}${r.ok === false ? ", not usable" : ""})`;
    case "plan": return `Plan made: ${(r.steps || []).map((x) => x.tool).join(", ") || "no steps"}`;
    case "response": return "The model answered in words";
    case "decision": return `Checked${step} (${r.tool}) ${r.stage === "plan" ? "in the plan" : "before it runs"}: ${{ allow: "allowed", ask: "asks you", deny: "refused" }[r.decision] || r.decision}${r.policy ? ` (${r.policy})` : ""}`;
    case "approval": return r.grant ? `Allowed${step} by your grant ${r.grant}` : r.unanswered ? `Nobody answered${step}: ${r.unanswered}` : `Your answer${step}: ${r.action || r.answer}`;
    case "dock_answer": return `You answered in the dock: ${r.action}${r.grant ? `, and allowed ${r.grant} for ${minutes(r.seconds)}` : ""}`;
    case "tool_call": return `Ran${step}: ${r.tool}`;
    case "result": return `Result${step} (${r.tool}): ${r.status}${r.duration_ms != null ? ` in ${r.duration_ms} ms` : ""}`;
    case "artifact": return `Step record saved${step}`;
    case "outcome": return `Request ended: ${r.status}`;
    case "grant": return `Granted ${r.grant} for ${minutes(r.seconds)}`;
    case "revoke": return `Revoked ${r.grant}`;
    case "mode": return `Mode set to ${r.mode}`;
    case "cage_pinned": return "Working folders fixed for the request";
    case "route": return `Model chosen: ${r.preset}${r.declined ? ` (${r.declined})` : ""}`;
    case "refused": return `Refused at run time${step}: ${r.reason}`;
    default: return `${r.kind.replace(/_/g, " ")} ${r.text || r.tool || r.status || r.action || r.mode || ""}`;
  }
}

function renderLog() {
  const filter = $("#log-filter").value.trim().toLowerCase();
  const list = $("#timeline");
  list.replaceChildren();
  for (const r of records.slice().reverse()) {
    const text = JSON.stringify(r);
    if (filter && !text.toLowerCase().includes(filter) && !label(r).toLowerCase().includes(filter)) continue;
    const time = r.time ? new Date(r.time * 1000).toLocaleTimeString([], { hour12: false }) : "";
    const item = el("li", { class: r.kind, "data-kind": r.kind },
      el("time", { class: "when", text: time }), el("span", { class: "what", text: ` ${label(r)}` }),
      el("span", { class: "muted", text: r.run_id ? ` · run ${String(r.run_id).slice(0, 8)}` : "" }));
    if (r.kind === "tool_call" && r.run_id && Number.isInteger(r.step)) {
      item.append(" ",
        el("button", { type: "button", class: "dry-run", text: "Dry-run again", onclick: () => replay(r.run_id, r.step, true) }), " ",
        el("button", { type: "button", class: "replay", text: "Replay", onclick: () => replay(r.run_id, r.step, false) }));
    }
    item.append(el("details", { class: "raw" }, el("summary", { text: "raw" }), el("pre", { text: JSON.stringify(r, null, 1) })));
    list.append(item);
  }
}

async function replay(runId, step, dryRun) {
  showTab("chat");
  addMessage("user", `${dryRun ? "Dry-run" : "Replay"} step ${step + 1} of run ${runId.slice(0, 8)}`, "you");
  const newId = `run-${uid()}`;
  const input = { threadId: thread, runId: newId, messages: [], forwardedProps: { clientSessionId: session, replay: { runId, step, dryRun } } };
  setBusy(true);
  const response = await postRun(input);
  await follow(response, newId).catch((err) => addMessage("error", err.message));
}

async function exportBundle() {
  try {
    const b = await api("/api/bundle", {});
    const link = el("a", { href: b.download, text: `Download ${b.download.split("/").pop()}` });
    $("#verdict").replaceChildren(printable(`Bug bundle written to ${b.path} (secrets redacted). `), link);
  } catch (err) { setText($("#verdict"), `Bundle failed: ${err.message}`); }
}

export async function verifyLog() {
  try { const v = await api("/api/log/verify"); setText($("#verdict"), `Log verify: ${v.verdict}`); }
  catch (err) { setText($("#verdict"), `Log verify failed: ${err.message}`); }
}

export function initLog() {
  onTab("log", refreshLog);
  // a run that ended (not one waiting for an answer) is in the log now
  on("RUN_FINISHED", (d) => { if (!(d.outcome && d.outcome.type === "interrupt") && !dock.historical && !dock.restoring) refreshLog(); });
  $("#log-refresh").addEventListener("click", refreshLog);
  $("#log-verify").addEventListener("click", verifyLog);
  $("#log-bundle").addEventListener("click", exportBundle);
  $("#log-filter").addEventListener("input", renderLog);
}

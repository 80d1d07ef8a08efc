// Action log: the last requests and how they ended (from the history), the timeline
// from the action log (filterable), Verify log, Export bug bundle, and each tool call
// dry-run or replayed again: a new run through the whole pipeline (a write still asks).

import { $, addMessage, api, el, onTab, setText, showTab, uid } from "./dom.js";
import { printable } from "./printable.js";
import { dock, follow, on, postRun, session, setBusy, thread } from "./stream.js";

let records = [];

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
  try { data = await api("/api/log?limit=300"); } catch (err) { setText($("#verdict"), err.message); return; }
  records = data.records;
  renderLog();
}

function renderLog() {
  const filter = $("#log-filter").value.trim().toLowerCase();
  const list = $("#timeline");
  list.replaceChildren();
  for (const r of records.slice().reverse()) {
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
  on("RUN_FINISHED", (d) => { if (!(d.outcome && d.outcome.type === "interrupt") && !dock.historical) refreshLog(); });
  $("#log-refresh").addEventListener("click", refreshLog);
  $("#log-verify").addEventListener("click", verifyLog);
  $("#log-bundle").addEventListener("click", exportBundle);
  $("#log-filter").addEventListener("input", renderLog);
}

// The AG-UI client: runs are POSTed and their SSE streams read over fetch (with a small
// parser: EventSource cannot POST); each envelope is applied once (by seq); a dropped
// stream reconnects with ?after=<last seq>. The operator's state lives here too
// (`dock.state`, from /api/state and the runs' STATE_SNAPSHOT / STATE_DELTA). What the
// events mean to the page is up to the modules that subscribe with `on`.

import { $, addMessage, api, setStatus, uid } from "./dom.js";

// Each tab is its own client session; the thread is shared by the tabs of this browser
// only when chosen (here: one per tab unless ?thread= names one).
export const session = sessionStorage.getItem("dock.session") || `tab-${uid().slice(0, 12)}`;
sessionStorage.setItem("dock.session", session);
export const thread = new URLSearchParams(location.search).get("thread") || sessionStorage.getItem("dock.thread") || `thread-${uid().slice(0, 12)}`;
sessionStorage.setItem("dock.thread", thread);

// The page's state: the operator's (`state`), the live run, the last seq applied per
// run, the open question, a step's preview by tool call (what was approved).
export const dock = { state: null, run: null, lastSeq: {}, live: new Set(), question: null,
  historical: null, previews: {} };

// -- subscribers: AG-UI event types, and "state" (the operator's state changed) ---------

const handlers = {};

export function on(type, handler) { (handlers[type] ||= []).push(handler); }

function emit(type, ...args) { for (const handler of handlers[type] || []) handler(...args); }

export function setState(state) { dock.state = state; emit("state"); }

export async function loadState() {
  setState(await api("/api/state"));
  for (const open of dock.state.openInterrupts || []) {
    if (open.threadId === thread) emit("interrupt", open.interrupt, open.runId);
  }
}

export function setBusy(busy) {
  $("#stop").disabled = !busy;
  $("#send").disabled = false;
  if (!busy) dock.run = null;
}

// -- SSE over fetch --------------------------------------------------------------------

export function postRun(input) {
  return fetch("/api/copilot/run", { method: "POST", body: JSON.stringify(input),
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" } });
}

async function consume(response) {
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
export async function follow(first, runId) {
  dock.live.add(runId);
  let response = first;
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      if (await consume(response)) break;
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
export function apply(env) {
  const last = dock.lastSeq[env.runId] || 0;
  if (env.event === "restart_required") { restart(env.data.value); return true; }
  if (env.seq <= last) return false; // a replayed duplicate
  dock.lastSeq[env.runId] = env.seq;
  const d = env.data;
  if (d.type === "STATE_SNAPSHOT") { Object.assign(dock.state || (dock.state = {}), d.snapshot); emit("state"); }
  else if (d.type === "STATE_DELTA") patch(d.delta);
  else emit(d.type, d, env);
  return d.type === "RUN_FINISHED" || d.type === "RUN_ERROR";
}

function restart(value) {
  setStatus("The stream's history is gone; reloaded the current state.");
  if (value && value.snapshot) setState(value.snapshot);
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
  emit("state");
}

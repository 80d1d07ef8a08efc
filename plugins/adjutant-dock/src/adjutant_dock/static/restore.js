// A reload keeps the page: this tab's thread is read back from the server's history
// (each run's events in order, through the same code as the live stream), a run still
// going is followed again from its last event, and an open question is asked again.

import { $, api, setStatus } from "./dom.js";
import { apply, dock, follow, loadState, setBusy, setState, thread } from "./stream.js";

export async function restoreThread() {
  setState(await api("/api/state")); // mode, limits; an open question after the thread
  const stored = await api(`/api/threads/${thread}`);
  if (stored.runs.length) {
    dock.restoring = true;
    try { for (const run of stored.runs) for (const env of run.events) apply(env); }
    finally { dock.restoring = false; }
    setBusy(false);
    setStatus("");
    for (const run of stored.runs) {
      if (run.meta.status !== "running") continue;
      const id = run.meta.runId; // still going: the rest of it, live
      dock.run = id;
      setBusy(true);
      fetch(`/api/copilot/runs/${id}/events?after=${dock.lastSeq[id] || 0}`)
        .then((r) => follow(r, id)).catch((err) => setStatus(err.message));
    }
  }
  await loadState(); // an open question is asked again, in its place in the thread
  $("#messages").lastElementChild?.scrollIntoView({ block: "nearest" });
}

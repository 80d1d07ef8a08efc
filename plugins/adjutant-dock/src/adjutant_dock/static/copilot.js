// The Co-Pilot panel: the live-recording agent's state (adjutant-copilot-agent) of the
// recording in progress, or the latest one. The agent runs in the process that records,
// so the panel reads the state it saves after every cycle: every 2 s while the panel is
// open. What a recording said is untrusted text: every field is set as text, through
// `printable` (a bidi override or a terminal escape is shown as its escape). Dismiss is
// the CLI's dismiss; Act sends the action item, as stored on the server, through the
// operator like any request: its plan and question appear in the chat.

import { $, addMessage, api, el, onTab, setText, showTab, uid } from "./dom.js";
import { startThinking, stopThinking } from "./chat.js";
import { follow, session, setBusy, thread } from "./stream.js";

const POLL_MS = 2000;
let timer = null;
let shown = null; // the session id the panel shows

const mmss = (s) => `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
const span = (e) => `${mmss(e.start_s)}–${mmss(e.end_s)}`;

function item(it, n, actions) {
  const words = it.heard
    ? el("blockquote", { class: "heard", text: it.heard, title: `heard at ${span(it.evidence)}` })
    : el("p", { class: "heard muted", text: "(no words heard in this span)" });
  return el("li", { class: "cp-item", "data-n": String(n) },
    el("div", { class: "cp-line" },
      el("span", { class: "cp-text", text: it.text }),
      el("span", { class: "cp-where" },
        el("span", { class: "cp-span", text: span(it.evidence), title: "where in the recording (minutes:seconds)" }),
        ...actions)),
    words);
}

function section(id, title, list, render) {
  const body = list.length ? el("ol", { class: "cp-list" }, ...list.map(render))
    : el("p", { class: "muted", text: "None yet." });
  return el("section", { class: "cp-section", id: `cp-${id}`, "aria-label": title }, el("h3", { text: `${title} (${list.length})` }), body);
}

function render(data) {
  const box = $("#copilot-body");
  const head = $("#copilot-head");
  if (!data.session) {
    setText(head, "No recording in progress, and none recorded yet.");
    box.replaceChildren(el("p", { class: "muted" }, "Start one with ", el("code", { text: "adjutant record --agent" }),
      " (the microphone) or ", el("code", { text: "adjutant record --from FILE --agent" }),
      "; the agent's understanding of it shows here as it grows."));
    shown = null;
    return;
  }
  const s = data.session;
  const st = data.state;
  const meta = st.cycle_metadata;
  shown = s.id;
  const where = data.recording && s.status === "recording" ? "Recording in progress"
    : `No recording in progress · the latest (${s.status})`;
  setText(head, `${where}: ${s.id} (${s.source})`);
  const status = [
    data.agentRunning ? (meta.processing ? "agent: processing a cycle…" : "agent: running") : "agent: not running",
    `cycles ${meta.cycle_number}`, `failed ${meta.failed_cycles}`,
    `audio analysed ${mmss(meta.total_audio_seconds)}`,
    `updated ${meta.last_updated_at ? new Date(meta.last_updated_at).toLocaleTimeString() : "–"}`,
  ];
  const line = el("p", { class: "cp-meta", id: "cp-meta", role: "status" },
    ...status.map((t, i) => el("span", { class: i === 0 && meta.processing && data.agentRunning ? "chip processing" : "chip", text: t })));
  const summary = el("section", { class: "cp-section", id: "cp-summary", "aria-label": "Summary" },
    el("h3", { text: "Summary" }), el("p", { class: st.running_summary ? "cp-summary" : "muted", text: st.running_summary || "No summary yet." }));
  const act = (it, i) => el("button", { type: "button", class: "cp-act", text: "Act", title: "Send this action item to the operator as a request (planned, previewed and asked like any request)",
    onclick: () => actOn(s.id, i, it.text) });
  const questions = section("suggested", "Suggested questions", st.suggested_questions, (q, i) => el("li", { class: q.dismissed ? "cp-item dismissed" : "cp-item", "data-n": String(i) },
    el("div", { class: "cp-line" },
      el("span", { class: "cp-text", text: q.question }),
      q.dismissed ? el("span", { class: "muted", text: "dismissed" })
        : el("button", { type: "button", class: "cp-dismiss", text: "Dismiss", onclick: (e) => dismiss(s.id, i, e.target) })),
    q.reason ? el("p", { class: "muted", text: q.reason }) : ""));
  const concepts = section("concepts", "Key concepts", st.key_concepts, (c) => el("li", { class: "cp-item" },
    el("div", { class: "cp-line" }, el("strong", { class: "cp-text", text: c.term }), el("span", { class: "muted", text: `${c.mention_count}×` })),
    c.context ? el("p", { class: "muted", text: c.context }) : ""));
  box.replaceChildren(line, summary,
    section("decisions", "Decisions", st.decisions, (it, i) => item(it, i, [])),
    section("actions", "Action items", st.action_items, (it, i) => item(it, i, [act(it, i)])),
    section("points", "Key points", st.key_points, (it, i) => item(it, i, [])),
    section("open", "Open questions", st.open_questions, (it, i) => item(it, i, [])),
    questions, concepts);
}

export async function loadCopilot() {
  const note = $("#copilot-note");
  try {
    const data = await api("/api/copilot-agent/state");
    note.hidden = true;
    render(data);
  } catch (err) {
    setText(note, err.message);
    note.hidden = false;
    if (/pip install/.test(err.message)) { stopPolling(); $("#copilot-head").textContent = "The Co-Pilot panel is not installed."; $("#copilot-body").replaceChildren(); }
  }
}

async function dismiss(sessionId, index, button) {
  button.disabled = true;
  try { await api("/api/copilot-agent/dismiss", { session: sessionId, index }); } catch (err) { setText($("#copilot-note"), err.message); $("#copilot-note").hidden = false; }
  await loadCopilot();
}

// The item as a request in the chat: the server takes its text from the stored state.
async function actOn(sessionId, index, text) {
  showTab("chat");
  addMessage("user", text, `you · action item ${index + 1} from the recording`);
  startThinking();
  const runId = `run-${uid()}`;
  setBusy(true);
  const response = await fetch("/api/copilot-agent/act", { method: "POST",
    body: JSON.stringify({ session: sessionId, index, threadId: thread, runId, clientSessionId: session }),
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" } });
  if (!response.ok) { // refused before any run: say why, in the chat
    let why = `${response.status}`;
    try { why = (await response.json()).error || why; } catch { /* text */ }
    stopThinking();
    setBusy(false);
    addMessage("error", why, "refused");
    return;
  }
  await follow(response, runId).catch((err) => addMessage("error", err.message));
}

function stopPolling() { clearInterval(timer); timer = null; }

export function initCopilot() {
  onTab("copilot", () => {
    loadCopilot();
    if (!timer) timer = setInterval(() => { if ($("#tab-copilot").hidden) stopPolling(); else loadCopilot(); }, POLL_MS);
  });
}

// The Copilot Dock's page: plain ES modules, no build step, no third-party code. This
// one starts the others and owns the page-wide keys: Alt+1..7 (views), Ctrl+K (the
// command palette), Esc (a recording or speech first, then the run or the question).

import { initChat, send, stop } from "./chat.js";
import { initCopilot } from "./copilot.js";
import { $, el, setStatus, showTab } from "./dom.js";
import { initHistory } from "./history.js";
import { initLog, verifyLog } from "./log.js";
import { initModebar, setMode } from "./modebar.js";
import { initPlan } from "./plan.js";
import { goToQuestion, initQuestions } from "./question.js";
import { initSettings } from "./settings.js";
import { initTasks } from "./tasks.js";
import { restoreThread } from "./restore.js";
import { dock } from "./stream.js";
import { initVoice, voiceEscape } from "./voice.js";

window.dock = dock; // for tests and the curious

// The first entry is what Enter does at once: harmless (it only shows a view).
const COMMANDS = [
  ["Show chat", () => showTab("chat")], ["Go to the open question", () => goToQuestion()],
  ["Show plan & permissions", () => showTab("plan")],
  ["Show action log", () => showTab("log")], ["Verify the action log", () => { showTab("log"); verifyLog(); }],
  ["Show settings", () => showTab("settings")], ["Show session history", () => showTab("history")],
  ["Show the Co-Pilot (the recording's agent)", () => showTab("copilot")],
  ["Show tasks (and what they wait for)", () => showTab("tasks")],
  ["Mode: Off", () => setMode("off")], ["Mode: Listen", () => setMode("listen")],
  ["Mode: Propose", () => setMode("propose")], ["Mode: Confirm", () => setMode("confirm")],
  ["Mode: Auto", () => setMode("auto")], ["Stop", () => stop()],
  ["Summarize current folder", () => send("Summarize current folder")],
];

function openPalette() {
  const dialog = $("#palette");
  const input = $("#palette-input");
  const list = $("#palette-list");
  let chosen = 0;
  const render = () => {
    const q = input.value.toLowerCase();
    const hits = COMMANDS.filter(([name]) => name.toLowerCase().includes(q));
    chosen = Math.min(chosen, Math.max(hits.length - 1, 0));
    list.replaceChildren(...hits.map(([name, run], i) => el("li", { "aria-selected": String(i === chosen), text: name,
      onclick: () => { dialog.close(); run(); } })));
    return hits;
  };
  input.value = "";
  render();
  input.onkeydown = (e) => {
    const hits = render();
    if (e.key === "ArrowDown") { chosen = Math.min(chosen + 1, hits.length - 1); render(); e.preventDefault(); }
    if (e.key === "ArrowUp") { chosen = Math.max(chosen - 1, 0); render(); e.preventDefault(); }
    if (e.key === "Enter" && hits[chosen]) { dialog.close(); hits[chosen][1](); e.preventDefault(); }
  };
  input.oninput = () => { chosen = 0; render(); };
  dialog.showModal();
  input.focus();
}

document.addEventListener("keydown", (e) => {
  // Esc: a recording is cancelled, else speech stops (voice.js); only then does it stop
  // the run or deny the open question
  if (e.key === "Escape" && !$("#palette").open) {
    if (voiceEscape()) e.preventDefault();
    else if (dock.run || dock.question) { e.preventDefault(); stop(); }
  }
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") { e.preventDefault(); openPalette(); }
  if (e.altKey && ["1", "2", "3", "4", "5", "6", "7"].includes(e.key)) { e.preventDefault(); showTab(["chat", "plan", "log", "settings", "history", "copilot", "tasks"][Number(e.key) - 1]); }
});

for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
initModebar();
initChat();
initPlan();
initQuestions();
initLog();
initSettings();
initHistory();
initCopilot();
initTasks();
restoreThread().catch((err) => setStatus(`Could not load the state: ${err.message}`));
$("#prompt").focus();
initVoice();

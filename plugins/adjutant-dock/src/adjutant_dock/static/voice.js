// Voice in the dock.
// - Push-to-talk: hold the mic button (or hold Ctrl+Space, or Space/Enter on the
//   focused mic button); release to send. The samples are captured by an AudioWorklet,
//   downsampled to 16 kHz mono and uploaded as a 16-bit WAV to /api/voice/hear, which
//   transcribes on this machine; when the profile names a remote engine, a dialog first
//   asks (naming engine, host and model; No by default, Esc = No) and a yes travels
//   with the upload bound to that destination's digest. A request is sent like a typed
//   one (or left in the prompt box when the profile says listen.edit_first);
//   listen-only logs it as context.
// - The speaking indicator: /api/voice/events (SSE) tells what is being said; Pause /
//   Resume, Stop and Copy act on it. Esc stops speaking first (before it stops a run or
//   denies a question); Space stops it when the focus is not in a text field or button.

import { send } from "./chat.js";
import { $, addMessage, api, setText } from "./dom.js";
import { dock, loadState, on } from "./stream.js";

const VOICE_RATE = 16000;
const voice = { speaking: null, lastSaid: null, lastStopped: null, hearing: null,
  recording: null, busy: false, recordedMs: 0, heard: [], source: null };
dock.voice = voice; // for tests and the curious, with the rest of the page's state

const voiceInfo = () => (dock.state && dock.state.voice) || {};

function showVoiceStatus(text, kind = "info") {
  const box = $("#voice-status");
  setText(box, text);
  box.dataset.kind = kind;
  box.hidden = !text;
}

// -- the mic button --------------------------------------------------------------------

function renderVoice() {
  const mic = $("#mic");
  const info = voiceInfo();
  let why = "";
  if (!dock.state) why = "Loading…";
  else if (!info.hear) why = `Speech in is not installed: ${info.hearMissing || "pip install adjutant-stt"}`;
  else if (!(navigator.mediaDevices && navigator.mediaDevices.getUserMedia)) why = "This browser gives the page no microphone here (it needs localhost or https).";
  else if (dock.historical) why = "A historical session is read-only.";
  else if (dock.state.mode === "off") why = "The operator is Off: nothing is heard (switch to Listen or higher).";
  mic.disabled = Boolean(why) || voice.busy;
  mic.dataset.why = why;
  const remote = info.remote;
  mic.dataset.remote = remote ? remote.engine : "";
  mic.title = why || (voice.busy ? "Transcribing the last recording…" : `Hold to talk (or hold Ctrl+Space); release to send${remote ? ` — recordings go to ${remote.engine} (${remote.host}), after you say yes each time` : ""}`);
}

function micProblem(err) {
  const name = err && err.name;
  if (name === "NotAllowedError" || name === "SecurityError") return "The browser refused the microphone (permission denied): allow it for this page (the icon in the address bar), then hold the button again. Nothing was sent; you can type instead.";
  if (name === "NotFoundError" || name === "OverconstrainedError") return "No microphone found: connect one, or type your request. Nothing was sent.";
  if (name === "NotReadableError" || name === "AbortError") return "The microphone could not be opened (another program may hold it). Nothing was sent.";
  return `The microphone could not be used: ${(err && err.message) || err}. Nothing was sent.`;
}

async function startRecording(how) {
  const mic = $("#mic");
  if (voice.recording || mic.disabled) return;
  if (voice.speaking) stopSpeaking(); // the microphone must not hear the answer being said
  const rec = { how, chunks: [], samples: 0, rate: 0, released: false, ready: false, stream: null, ctx: null, shown: 0 };
  voice.recording = rec;
  voice.recordedMs = 0;
  mic.setAttribute("aria-pressed", "true");
  showVoiceStatus("Opening the microphone…", "recording");
  try {
    rec.ctx = new AudioContext(); // made within the gesture: allowed to run
    // the worklet first: what is said between the mic opening and the capture is lost
    await rec.ctx.audioWorklet.addModule("/static/mic-worklet.js");
    rec.stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1,
      echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
    const source = rec.ctx.createMediaStreamSource(rec.stream);
    const node = new AudioWorkletNode(rec.ctx, "dock-mic");
    const mute = rec.ctx.createGain();
    mute.gain.value = 0;
    rec.rate = rec.ctx.sampleRate;
    const limitMs = (voiceInfo().maxSeconds || 60) * 1000 - 250;
    node.port.onmessage = (e) => {
      if (rec.released) return;
      rec.chunks.push(e.data);
      rec.samples += e.data.length;
      voice.recordedMs = Math.round((rec.samples * 1000) / rec.rate);
      if (voice.recordedMs >= limitMs) { release("the length limit"); return; }
      if (voice.recordedMs - rec.shown >= 100) {
        rec.shown = voice.recordedMs;
        showVoiceStatus(`Recording ${(voice.recordedMs / 1000).toFixed(1)} s — release to send`, "recording");
      }
    };
    source.connect(node);
    node.connect(mute);
    mute.connect(rec.ctx.destination);
    if (rec.ctx.state === "suspended") await rec.ctx.resume();
  } catch (err) {
    closeRecording(rec);
    voice.recording = null;
    mic.setAttribute("aria-pressed", "false");
    showVoiceStatus(micProblem(err), "error");
    return;
  }
  rec.ready = true;
  if (rec.released) finishRecording(rec); // let go while the microphone was opening
  else showVoiceStatus("Recording — release to send", "recording");
}

function closeRecording(rec) {
  if (rec.stream) for (const track of rec.stream.getTracks()) track.stop(); // the mic light goes off
  if (rec.ctx && rec.ctx.state !== "closed") rec.ctx.close().catch(() => {});
}

// Let go of the button or the keys: the recording ends and is sent.
function release(why) {
  const rec = voice.recording;
  if (!rec || rec.released) return;
  rec.released = true;
  rec.why = why;
  $("#mic").setAttribute("aria-pressed", "false");
  if (rec.ready) finishRecording(rec);
}

// Esc while recording: nothing is sent.
function cancelRecording() {
  const rec = voice.recording;
  if (!rec) return;
  rec.released = true;
  rec.cancelled = true;
  $("#mic").setAttribute("aria-pressed", "false");
  if (rec.ready) finishRecording(rec);
}

async function finishRecording(rec) {
  closeRecording(rec);
  voice.recording = null;
  if (rec.cancelled) { showVoiceStatus("Recording cancelled: nothing was sent.", "info"); return; }
  if (voice.recordedMs < 300) { showVoiceStatus("Too short: hold the button (or Ctrl+Space) while you speak.", "error"); return; }
  await upload(encodeWav(downsample(rec.chunks, rec.rate)), rec.why);
}

function downsample(chunks, rate) {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const input = new Float32Array(total);
  let at = 0;
  for (const c of chunks) { input.set(c, at); at += c.length; }
  if (rate === VOICE_RATE) return input;
  const ratio = rate / VOICE_RATE;
  const out = new Float32Array(Math.floor(total / ratio));
  for (let i = 0; i < out.length; i++) { // the mean of each window: a simple low-pass
    const a = Math.floor(i * ratio);
    const b = Math.min(total, Math.max(a + 1, Math.floor((i + 1) * ratio)));
    let sum = 0;
    for (let j = a; j < b; j++) sum += input[j];
    out[i] = sum / (b - a);
  }
  return out;
}

function encodeWav(samples) {
  const buffer = new ArrayBuffer(44 + samples.length * 2);
  const view = new DataView(buffer);
  const text = (at, s) => { for (let i = 0; i < s.length; i++) view.setUint8(at + i, s.charCodeAt(i)); };
  text(0, "RIFF"); view.setUint32(4, 36 + samples.length * 2, true); text(8, "WAVE");
  text(12, "fmt "); view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
  view.setUint32(24, VOICE_RATE, true); view.setUint32(28, VOICE_RATE * 2, true);
  view.setUint16(32, 2, true); view.setUint16(34, 16, true);
  text(36, "data"); view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    view.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
  }
  return new Blob([buffer], { type: "audio/wav" });
}

// A remote engine (listen.engine): ask before the recording leaves this machine,
// naming exactly where it goes. Resolves true only for "Yes"; No, Esc or closing is no.
function askConsent(remote) {
  const dialog = $("#consent");
  setText($("#consent-engine"), remote.engine);
  setText($("#consent-host"), remote.host);
  setText($("#consent-model"), remote.model || "the engine's default");
  dialog.returnValue = "";
  voice.asking = remote;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => { voice.asking = null; resolve(dialog.returnValue === "yes"); }, { once: true });
    dialog.showModal();
    $("#consent-no").focus();
  });
}

// The user's no reaches the action log (adjutant-stt's consent record); no audio is sent.
async function refuseRemote(remote) {
  try {
    const data = await api("/api/voice/consent", { digest: remote.digest, given: false });
    showVoiceStatus(`Not sent: you said no. Nothing left this machine (${data.text}).`, "info");
  } catch (err) {
    showVoiceStatus(`Not sent: you said no. Nothing left this machine (${err.message}).`, "info");
  }
}

async function upload(wav, why) {
  voice.busy = true;
  renderVoice();
  let data;
  try {
    const headers = { "Content-Type": "audio/wav" };
    await loadState().catch(() => {}); // where the recording would go, as of now
    let remote = voiceInfo().remote;
    for (let asked = 0; ; asked++) {
      if (remote) {
        showVoiceStatus(`${why ? `Stopped at ${why}. ` : ""}Asking before the recording leaves this machine…`, "busy");
        if (!(await askConsent(remote))) { await refuseRemote(remote); return; }
        headers["X-Adjutant-Consent"] = remote.digest;
        showVoiceStatus(`Sending the recording to ${remote.engine} (${remote.host})…`, "busy");
      } else {
        delete headers["X-Adjutant-Consent"];
        showVoiceStatus(`${why ? `Stopped at ${why}. ` : ""}Transcribing on this machine…`, "busy");
      }
      const response = await fetch("/api/voice/hear", { method: "POST", body: wav, headers });
      data = await response.json().catch(() => ({}));
      if (response.ok) break;
      if (data.status === "changed" && asked === 0) { // the profile changed: ask again, once
        remote = data.remote;
        if (dock.state && dock.state.voice) dock.state.voice.remote = remote;
        continue;
      }
      showVoiceStatus(`Not heard: ${data.error || response.status}`, "error");
      if (data.status === "off" || data.status === "changed") loadState().catch(() => {});
      return;
    }
  } catch (err) {
    showVoiceStatus(`Not heard: ${err.message}`, "error");
    return;
  } finally {
    voice.busy = false;
    renderVoice();
  }
  voice.heard.push(data);
  heard(data);
}

function heard(data) {
  const text = data.text || "";
  if (data.status === "request") {
    if (data.editFirst) {
      const prompt = $("#prompt");
      prompt.value = text;
      prompt.focus();
      showVoiceStatus(`Heard: “${text}” — edit it if needed, then Enter sends it.`, "heard");
      return;
    }
    showVoiceStatus(`Heard: “${text}”`, "heard");
    send(text, "you (spoken)");
  } else if (data.status === "context") {
    addMessage("context", `“${text}” — logged as context (listen-only), not planned.`, "heard · listen-only");
    showVoiceStatus("Logged as context (listen-only), not planned.", "heard");
  } else if (data.status === "off") {
    showVoiceStatus("The operator is Off: nothing was heard.", "error");
  } else {
    showVoiceStatus(`Nothing heard: ${text || "no speech in the recording"}`, "error");
  }
}

// -- the speaking indicator ------------------------------------------------------------

function followVoice() {
  // EventSource reconnects by itself, with Last-Event-ID: the server replays or sends
  // a fresh snapshot
  const source = new EventSource("/api/voice/events");
  source.onmessage = (m) => {
    try { applyVoice(JSON.parse(m.data)); } catch (err) { console.error("voice event", err); }
  };
  voice.source = source;
}

function speechFrom(v) {
  return { id: v.speechId, text: v.text || "", state: v.state || "playing", played: v.playedMs || 0,
    made: v.synthesizedMs || 0, output: v.output, path: v.path, source: v.source };
}

function applyVoice(env) {
  const d = env.data || {};
  if (d.type !== "CUSTOM") return;
  const v = d.value || {};
  const current = voice.speaking;
  switch (d.name) {
    case "adjutant.dock.voice_snapshot":
      voice.speaking = v.speaking ? speechFrom(v.speaking) : null;
      voice.hearing = v.hearing;
      break;
    case "speech.started":
      voice.speaking = speechFrom(v);
      voice.lastSaid = voice.speaking;
      $("#speech-fallback").hidden = true;
      $("#speech-note").textContent = "";
      break;
    case "speech.progress":
      if (!current || current.id !== v.speechId) return;
      Object.assign(current, { state: v.state, played: v.playedMs || 0, made: v.synthesizedMs || 0 });
      break;
    case "speech.stopped":
      if (!current || current.id !== v.speechId) return;
      voice.lastStopped = { id: v.speechId, reason: v.reason, error: v.error || null };
      voice.speaking = null;
      if (v.reason === "error") showVoiceStatus(`Speech failed: ${v.error || "the engine stopped"}`, "error");
      else if (v.reason === "stopped") showVoiceStatus("Stopped speaking.", "info");
      break;
    case "stt.listening":
      voice.hearing = v;
      if (!voice.busy && !voice.recording) showVoiceStatus("Listening (another frontend)…", "busy");
      return;
    case "stt.heard":
      voice.hearing = null;
      if (!voice.busy) showVoiceStatus(`Heard (another frontend): “${v.text}”${v.planned ? "" : " — context only"}`, "heard");
      return;
    case "stt.heard_nothing":
      voice.hearing = null;
      if (!voice.busy) showVoiceStatus(`Nothing heard: ${v.reason}`, "error");
      return;
    default:
      return;
  }
  renderSpeech();
}

function renderSpeech() {
  const s = voice.speaking;
  const box = $("#speech");
  box.hidden = !s;
  if (!s) return;
  box.dataset.state = s.state;
  $("#speech-state").textContent = s.state === "paused" ? "Paused" : "Speaking";
  setText($("#speech-text"), s.text);
  $("#speech-pause").textContent = s.state === "paused" ? "Resume" : "Pause";
  const progress = $("#speech-progress");
  progress.max = Math.max(s.made, s.played, 1);
  progress.value = s.played;
  $("#speech-time").textContent = s.made ? `${(s.played / 1000).toFixed(1)} s of ${(s.made / 1000).toFixed(1)} s` : "starting…";
  if (s.output === "file" && !$("#speech-note").textContent) setText($("#speech-note"), `No audio device: written to ${s.path || "a file"}`);
}

async function speechCall(action) {
  try {
    const state = await api(`/api/speech/${action}`, {});
    if (voice.speaking && action !== "stop") { voice.speaking.state = state.paused ? "paused" : "playing"; renderSpeech(); }
  } catch (err) { showVoiceStatus(`Speech ${action}: ${err.message}`, "error"); }
}

function stopSpeaking() { speechCall("stop"); }
function togglePause() { if (voice.speaking) speechCall(voice.speaking.state === "paused" ? "resume" : "pause"); }

async function copySpeech() {
  const said = voice.speaking || voice.lastSaid;
  if (!said) return;
  const note = $("#speech-note");
  const fallback = $("#speech-fallback");
  try {
    await navigator.clipboard.writeText(said.text);
    fallback.hidden = true;
    note.textContent = "Copied to the clipboard.";
  } catch (err) {
    fallback.value = said.text;
    fallback.hidden = false;
    fallback.focus();
    fallback.select();
    note.textContent = "The browser refused the clipboard: the text is selected below, press Ctrl+C.";
  }
}

// Esc: cancel a recording, else stop speaking; false when voice had nothing to stop
// (then Esc stops the run or denies the question, as before).
export function voiceEscape() {
  if (voice.asking) { $("#consent").close("no"); return true; } // Esc in the consent dialog: No
  if (voice.recording) { cancelRecording(); return true; }
  if (voice.speaking) { stopSpeaking(); return true; }
  return false;
}

// -- keys and pointer ------------------------------------------------------------------

function typingIn(node) {
  return Boolean(node) && (node.isContentEditable || ["INPUT", "TEXTAREA", "SELECT", "BUTTON"].includes(node.tagName));
}

export function initVoice() {
  on("state", renderVoice); // the mic button follows the mode
  const mic = $("#mic");
  mic.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    // captured: the page may move under the pointer (a status line appears), and the
    // recording must still end where the button is let go
    try { mic.setPointerCapture(e.pointerId); } catch { /* not capturable: pointerleave ends it */ }
    startRecording("pointer");
  });
  for (const kind of ["pointerup", "pointerleave", "pointercancel", "lostpointercapture"]) {
    mic.addEventListener(kind, () => { if (voice.recording && voice.recording.how === "pointer") release(); });
  }
  mic.addEventListener("contextmenu", (e) => e.preventDefault()); // a long press on a touch screen
  mic.addEventListener("keydown", (e) => {
    if ((e.key === " " || e.key === "Enter") && !e.ctrlKey) { e.preventDefault(); e.stopPropagation(); if (!e.repeat) startRecording("button-key"); }
  });
  mic.addEventListener("keyup", (e) => {
    if ((e.key === " " || e.key === "Enter") && voice.recording && voice.recording.how === "button-key") { e.preventDefault(); release(); }
  });
  document.addEventListener("keydown", (e) => {
    if (e.code === "Space" && e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      if (!e.repeat) startRecording("key");
    } else if (e.code === "Space" && !e.ctrlKey && !e.altKey && !e.metaKey && voice.speaking && !typingIn(document.activeElement)) {
      e.preventDefault();
      stopSpeaking();
    }
  });
  document.addEventListener("keyup", (e) => {
    if (voice.recording && voice.recording.how === "key" && (e.code === "Space" || e.key === "Control")) release();
  });
  window.addEventListener("blur", () => release());
  document.addEventListener("visibilitychange", () => { if (document.hidden) release(); });
  $("#speech-pause").addEventListener("click", togglePause);
  $("#speech-stop").addEventListener("click", stopSpeaking);
  $("#speech-copy").addEventListener("click", copySpeech);
  renderVoice();
  followVoice();
}

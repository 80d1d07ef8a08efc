// The bar that is always visible: the mode toggle (changed through the user channel)
// and the chips (mode, model, preset, project, policies, sandbox, memory, a remote
// speech engine, each live grant with its time left and a button that revokes it).

import { $, api, el, setStatus, setText } from "./dom.js";
import { dock, loadState, on, setState } from "./stream.js";

const MODE_KEYS = { "off": "off", "listen-only": "listen", "propose-only": "propose",
  "execute-with-confirmation": "confirm", "execute-auto": "auto" };
let reloadingGrants = false;

function renderState() {
  const s = dock.state;
  if (!s) return;
  const labels = s.modeLabels || {};
  const current = (labels[s.mode] || {}).short || MODE_KEYS[s.mode] || s.mode;
  for (const b of document.querySelectorAll("#modes button")) {
    b.setAttribute("aria-checked", String(b.dataset.mode === current));
    const [long, label] = Object.entries(labels).find(([, l]) => l.short === b.dataset.mode) || [];
    if (label) b.title = `${label.short} (${long}): ${label.meaning}`;
  }
  document.body.dataset.mode = current;
  // the one-line meaning, always visible (the short name, the long one, what it does)
  const meaning = labels[s.mode];
  if (meaning) {
    $("#mode-meaning").replaceChildren(`${meaning.short[0].toUpperCase()}${meaning.short.slice(1)}: ${meaning.meaning}`,
      el("span", { class: "long-name", text: ` (${s.mode})` }));
  }
  const chips = $("#chips");
  chips.replaceChildren();
  renderGrants(chips, s); // first: what may happen without asking, and its × (also at 400 px)
  const chip = (text, warn) => chips.append(el("span", { class: `chip${warn ? " warn" : ""}`, text }));
  if (s.model) chip(`model: ${s.model.name || s.model.provider}${s.model.contextSize ? ` · ${s.model.contextSize} ctx` : ""}`);
  chip(`preset: ${s.preset}`);
  if (s.cwd) chip(`project: ${s.cwd.split("/").filter(Boolean).pop() || s.cwd}`);
  for (const p of s.policies || []) chip(p === "guard" ? "no-sudo · caged FS" : `policy: ${p}`);
  chip(s.sandbox ? "sandbox: on" : "sandbox: missing", !s.sandbox);
  if (s.memoryMb) chip(`memory: ${Math.round(s.memoryMb)} MB`);
  const day = s.spent && s.spent.windows && s.spent.windows.day;
  if (day && (day.cost > 0 || day.cap_cost_usd != null || day.cap_tokens != null)) {
    const cap = day.cap_cost_usd != null ? ` of $${day.cap_cost_usd.toFixed(2)}` : "";
    chip(`spent today: $${day.cost.toFixed(4)}${cap}`, day.cap_cost_usd != null && day.cost >= day.cap_cost_usd);
  }
  if (s.voice && s.voice.remote) chip(`speech in: ${s.voice.remote.engine} @ ${s.voice.remote.host} (asks each time)`, true);
}

// Each live grant as a chip with its time left (counted down here, from the expiry and
// the server's clock in the state) and a button that revokes it at once.
function renderGrants(chips, s) {
  const expire = s.grantsExpire || {};
  const offset = Date.now() - (s.serverNow || Date.now()); // this page's clock minus the server's
  for (const g of s.grants || []) {
    const left = el("span", { class: "grant-left" });
    if (expire[g]) left.dataset.expires = String(expire[g] + offset);
    chips.append(el("span", { class: "chip warn grant", "data-grant": g, title: g }, `${grantLabel(g)} `, left,
      el("button", { type: "button", class: "revoke", title: `Revoke the grant ${g} now`, "aria-label": `Revoke the grant ${g}`, text: "×", onclick: () => revokeGrant(g) })));
  }
  tickGrants();
}

// A grant in plain words: what it lets happen without asking.
export function grantLabel(g) {
  const [kind, rest] = [g.split(":")[0], g.slice(g.indexOf(":") + 1)];
  if (kind === "file") return `changes to ${rest.split("/").pop()} allowed`;
  if (kind === "tool") return `${rest} allowed`;
  if (kind === "cage") return `reads in ${rest} allowed`;
  if (kind === "network") return `network for ${rest}`;
  return `grant: ${g}`;
}

function clock(seconds) {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const sec = String(seconds % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

function tickGrants() {
  let expired = false;
  for (const left of document.querySelectorAll("#chips .grant-left[data-expires]")) {
    const ms = Number(left.dataset.expires) - Date.now();
    if (ms <= 0) { expired = true; left.textContent = "· expired"; continue; }
    left.textContent = `· ${clock(Math.ceil(ms / 1000))} left`;
    left.parentElement.title = `Expires at ${new Date(Number(left.dataset.expires)).toLocaleTimeString()}`;
  }
  if (expired && !reloadingGrants) { // the server drops it: show the state as it is now
    reloadingGrants = true;
    setTimeout(() => loadState().catch(() => {}).finally(() => { reloadingGrants = false; }), 1000);
  }
}

async function revokeGrant(grant) {
  try { setState(await api("/api/grants/revoke", { grant })); setStatus(`Grant revoked: ${grant}`); }
  catch (err) { setStatus(`Grant not revoked: ${err.message}`); loadState().catch(() => {}); }
}

export async function setMode(key) {
  try { setState(await api("/api/mode", { mode: key })); setStatus(`Mode: ${key}`); }
  catch (err) { setStatus(`Mode not changed: ${err.message}`); }
}

export function initModebar() {
  on("state", renderState);
  for (const b of document.querySelectorAll("#modes button")) b.addEventListener("click", () => setMode(b.dataset.mode));
  setInterval(tickGrants, 1000);
}

// Settings: saved profiles with the loader's errors for the broken ones ("use for the
// next request"), a profile checker (the same loader as `adjutant`), the MCP servers
// the configuration names (read-only) and the current profile.

import { $, api, el, onTab, setStatus } from "./dom.js";
import { printableJSON } from "./printable.js";
import { initSettingsEdit } from "./settings-edit.js";
import { setState } from "./stream.js";

async function loadSettings() {
  const data = await api("/api/settings");
  $("#profile-current").textContent = printableJSON(data.current);
  if (!$("#profile-text").value) $("#profile-text").value = printableJSON(data.current);
  const list = $("#profiles");
  list.replaceChildren();
  for (const p of data.profiles) {
    const item = el("li", { class: p.ok ? "" : "bad" }, el("strong", { text: p.name }),
      el("span", { text: p.ok ? " — valid " : ` — invalid: ${p.problems.join("; ")} ` }));
    if (p.ok) item.append(el("button", { type: "button", text: "Use for the next request", onclick: () => usePreset(p.name) }));
    list.append(item);
  }
  if (!data.profiles.length) list.append(el("li", { class: "muted", text: "No saved profiles: the built-in default is in use." }));
}

// The MCP servers the configuration names (adjutant-mcp's bridge): read-only.
async function loadMcp() {
  const list = $("#mcp-servers");
  let data;
  try { data = await api("/api/mcp"); } catch (err) { list.replaceChildren(el("li", { class: "bad", text: err.message })); return; }
  list.replaceChildren();
  if (!data.available) { list.append(el("li", { class: "muted", text: data.missing })); return; }
  const said = { running: "connected", stopped: "not connected now (connects on use)", starting: "connecting…", error: "cannot connect", off: "disabled" };
  for (const s of data.servers) {
    const item = el("li", { "data-server": s.name, "data-state": s.state },
      el("strong", { text: s.name }), el("span", { class: "mcp-state", text: ` ${said[s.state] || s.state}` }),
      el("span", { class: "muted", text: ` · ${s.transport} ${s.target} · ${s.tools} tool${s.tools === 1 ? "" : "s"} · ${s.source}` }));
    if (s.note) item.append(el("div", { class: "muted", text: s.note }));
    for (const [tool, why] of Object.entries(s.skipped || {})) item.append(el("div", { class: "muted", text: `tool ${tool} not mounted: ${why}` }));
    list.append(item);
  }
  for (const p of data.problems) list.append(el("li", { class: "bad", text: `problem: ${p}` }));
  if (!list.children.length) list.append(el("li", { class: "muted", text: "No MCP servers configured: `adjutant mcp add NAME -- COMMAND ARGS...` adds one." }));
}

async function usePreset(name) {
  try { setState(await api("/api/preset", { name })); setStatus(`Preset: ${name}`); }
  catch (err) { setStatus(err.message); }
}

async function checkProfile() {
  const errors = $("#profile-errors");
  errors.replaceChildren();
  // sent as typed: the server names the line and column of a JSON error
  const response = await fetch("/api/settings/check", { method: "POST", body: $("#profile-text").value, headers: { "Content-Type": "application/json" } });
  const data = await response.json();
  if (data.ok) errors.append(el("li", { class: "ok", text: "valid" }));
  for (const p of data.problems) errors.append(el("li", { text: p }));
}

export function initSettings() {
  onTab("settings", () => { loadSettings().catch((err) => setStatus(err.message)); initSettingsEdit(() => loadSettings().catch(() => {})); loadMcp(); });
  $("#profile-check").addEventListener("click", checkProfile);
}

// Settings that edit: the profile in use, one change at a time (temperature, the
// working folders, each plugin's declared section). The server checks each with the
// profile loader, writes the profile file and logs it; its errors are shown as given
// (`reason @ $.path`). The folder picker lists only what may be granted.

import { $, api, el, setStatus, setText } from "./dom.js";
import { setState } from "./stream.js";

let current = null;
let onSaved = () => {}; // the Settings view reloads what it lists

async function save(change, errors) {
  errors.replaceChildren();
  setText($("#settings-saved"), "");
  const response = await fetch("/api/settings/edit", { method: "POST", body: JSON.stringify(change), headers: { "Content-Type": "application/json" } });
  const data = await response.json().catch(() => ({ problems: [`${response.status}`] }));
  if (!response.ok || !data.ok) {
    for (const p of data.problems || [data.error || response.status]) errors.append(el("li", { text: p }));
    return false;
  }
  setState(data.state);
  const pending = unsaved(errors.closest("fieldset"));
  await loadForm();
  restore(pending);
  setText($("#settings-saved"), `Saved to ${current.file} and logged; in force from the next request.`);
  onSaved();
  return true;
}

// What the user typed in other sections and has not saved yet: a save redraws the whole
// form (the server's values), which must not wipe it.
function unsaved(saving) {
  const box = $("#settings-edit");
  return [...box.querySelectorAll("input[data-dirty], select[data-dirty]")]
    .filter((input) => input.id && !(saving && saving.contains(input)))
    .map((input) => ({ id: input.id, value: input.value, checked: input.checked }));
}

function restore(pending) {
  for (const { id, value, checked } of pending) {
    const input = document.getElementById(id);
    if (!input) continue;
    if (input.type === "checkbox") input.checked = checked; else input.value = value;
    input.dataset.dirty = "1";
  }
}

function section(title, ...kids) { return el("fieldset", { class: "edit-section" }, el("legend", { text: title }), ...kids); }

function field(f, plugin) {
  const id = `set-${plugin}-${f.name}`;
  let input;
  if (f.kind === "bool") { input = el("input", { type: "checkbox", id }); input.checked = Boolean(f.value); }
  else if (f.kind === "choice") { input = el("select", { id }, ...f.choices.map((c) => el("option", { value: c, text: c }))); input.value = f.value; }
  else { input = el("input", { id, type: f.kind === "text" ? "text" : "number", step: f.kind === "int" ? "1" : "any" }); input.value = f.value ?? ""; }
  const read = () => {
    if (f.kind === "bool") return input.checked;
    if (f.kind === "int" || f.kind === "float") return input.value === "" && f.nullable ? null : Number(input.value);
    return input.value === "" && f.nullable ? null : input.value;
  };
  return { row: el("label", { class: "edit-row", for: id }, el("span", { text: f.name.replace(/_/g, " ") }), input), name: f.name, read };
}

async function pickFolder(into) {
  const box = $("#folder-picker");
  const go = async (path) => {
    let data;
    try { data = await api(`/api/folders${path ? `?path=${encodeURIComponent(path)}` : ""}`); } catch (err) { setStatus(err.message); return; }
    box.replaceChildren(el("div", { class: "muted", text: data.path }),
      el("div", { class: "actions" },
        el("button", { type: "button", text: "↑ Up", onclick: () => go(data.parent) }),
        el("button", { type: "button", id: "folder-use", text: data.grantable ? "Use this folder" : "Not this one (too wide)",
          ...(data.grantable ? {} : { disabled: "" }), onclick: () => { box.hidden = true; into(data.path); } }),
        el("button", { type: "button", text: "Cancel", onclick: () => { box.hidden = true; } })),
      el("ul", { class: "folders" }, ...data.folders.map((f) => el("li", {},
        el("button", { type: "button", class: "folder", "data-path": f.path, text: `${f.name}/`, onclick: () => go(f.path) }),
        f.grantable ? "" : el("span", { class: "muted", text: " (too wide to grant)" })))));
    box.hidden = false;
  };
  await go("");
}

async function loadForm() {
  const data = await api("/api/settings/form");
  current = data;
  const box = $("#settings-edit");
  setText($("#settings-file"), `Profile ${data.profile} (${data.file}), model ${data.model}`);
  const out = [];

  const provider = el("select", { id: "set-provider" }, ...data.providers.map((p) => el("option", {
    value: p.name, text: p.remote ? `${p.name} (leaves this machine)` : p.name,
    ...(p.name === data.provider ? { selected: "" } : {}) })));
  const modelName = el("input", { type: "text", id: "set-model", spellcheck: "false" });
  modelName.value = data.model_name;
  const mErrors = el("ul", { class: "errors", role: "alert" });
  out.push(section("Model preset",
    el("label", { class: "edit-row", for: "set-provider" }, el("span", { text: "provider" }), provider),
    el("label", { class: "edit-row", for: "set-model" }, el("span", { text: "model" }), modelName),
    el("button", { type: "button", id: "save-model", text: "Save", onclick: () => save({ model: { provider: provider.value, model: modelName.value } }, mErrors) }), mErrors));

  const temperature = el("input", { type: "number", id: "set-temperature", step: "0.05", min: "0", max: "2" });
  temperature.value = data.temperature;
  const tErrors = el("ul", { class: "errors", role: "alert" });
  out.push(section("Model", el("label", { class: "edit-row", for: "set-temperature" }, el("span", { text: "temperature" }), temperature),
    el("button", { type: "button", id: "save-temperature", text: "Save", onclick: () => save({ temperature: Number(temperature.value) }, tErrors) }), tErrors));

  const cages = [...data.cages];
  const cErrors = el("ul", { class: "errors", role: "alert" });
  const list = el("ul", { class: "cages" }, ...cages.map((c, i) => el("li", {}, el("code", { text: c }), " ",
    el("button", { type: "button", class: "revoke", "aria-label": `Remove ${c}`, text: "×", onclick: () => save({ cages: cages.filter((_, j) => j !== i) }, cErrors) }))));
  out.push(section("Working folders", list,
    el("button", { type: "button", id: "add-cage", text: "Add a folder…", onclick: () => pickFolder((path) => save({ cages: [...cages, path] }, cErrors)) }), cErrors));

  for (const [name, plugin] of Object.entries(data.plugins)) {
    const fields = plugin.fields.map((f) => field(f, name));
    const errors = el("ul", { class: "errors", role: "alert" }, ...plugin.problems.map((p) => el("li", { text: p })));
    out.push(section(`Plugin ${name}`, ...fields.map((f) => f.row),
      el("button", { type: "button", class: "save-plugin", "data-plugin": name, text: "Save", onclick: () => {
        const values = Object.fromEntries(fields.map((f) => [f.name, f.read()]));
        save({ plugins: { [name]: values } }, errors);
      } }), errors));
  }
  box.replaceChildren(...out);
}

export function initSettingsEdit(saved) {
  onSaved = saved;
  const box = $("#settings-edit");
  for (const kind of ["input", "change"]) box.addEventListener(kind, (event) => { event.target.dataset.dirty = "1"; });
  return loadForm().catch((err) => setStatus(`Settings: ${err.message}`));
}

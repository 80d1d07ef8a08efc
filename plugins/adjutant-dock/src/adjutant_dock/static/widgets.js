// A tool's text result, where it has structure, as a table or a diff; a preview as a
// diff. Tool output is untrusted: every cell is set with textContent.

import { el } from "./dom.js";
import { printable } from "./printable.js";

export function isDiff(text) {
  return typeof text === "string" && /^@@ /m.test(text) && /^\+\+\+ /m.test(text);
}

export function diffView(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of String(text || "").split("\n")) {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "";
    pre.append(cls ? el("span", { class: cls, text: line }) : document.createTextNode(`${printable(line)}\n`));
  }
  return pre;
}

const NUMERIC = /^-?\d+(\.\d+)?( ?(B|KiB|MiB|GiB))?%?$/;

function table(headers, rows, caption, notes) {
  const cell = (tag, text) => el(tag, NUMERIC.test(text) ? { class: "num", text } : { text });
  const widget = el("div", { class: "result-widget" });
  if (caption) widget.append(el("div", { class: "muted", text: caption }));
  widget.append(el("div", { class: "table-scroll" }, el("table", { class: "result-table" },
    el("thead", {}, el("tr", {}, ...headers.map((h) => cell("th", h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => cell("td", c))))))));
  for (const n of notes) widget.append(el("div", { class: "muted", text: n }));
  return widget;
}

// A header of upper-case column names, then rows of as many columns (the last takes the
// rest of the line), then notes in brackets: proc.list's shape.
function columnTable(lines) {
  const headers = lines[0].trim().split(/\s+/);
  if (headers.length < 2 || !headers.every((h) => /^[A-Z][A-Z0-9_%]*$/.test(h))) return null;
  const rows = [];
  const notes = [];
  for (const line of lines.slice(1)) {
    if (/^\s*[([]/.test(line)) { notes.push(line.trim()); continue; }
    const parts = line.trim().split(/\s+/);
    if (parts.length < headers.length) return null;
    rows.push([...parts.slice(0, headers.length - 1), line.trim().split(/\s+/).slice(headers.length - 1).join(" ")]);
  }
  return rows.length ? table(headers, rows, "", notes) : null;
}

// "<dir>/: N entries", then "kind size date time name": fs.list's shape.
const ENTRY = /^(file|dir|link|other)\s+((?:\d+(?:\.\d+)? (?:B|KiB|MiB|GiB))?)\s+(\d{4}-\d\d-\d\d \d\d:\d\d)\s+(.+)$/;
function listingTable(lines) {
  if (!/^.*: \d+ entr(y|ies)$/.test(lines[0])) return null;
  const rows = [];
  const notes = [];
  for (const line of lines.slice(1)) {
    const m = ENTRY.exec(line);
    if (m) rows.push([m[1], m[2], m[3], m[4]]);
    else if (/^\[/.test(line)) notes.push(line);
    else return null;
  }
  return table(["Kind", "Size", "Modified", "Name"], rows, lines[0], notes);
}

export function resultWidget(text) {
  if (isDiff(text)) return el("div", { class: "result-widget" }, diffView(text));
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length < 2) return null;
  return listingTable(lines) || columnTable(lines);
}

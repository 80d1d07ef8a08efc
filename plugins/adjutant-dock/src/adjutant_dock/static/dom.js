// What every part of the page uses: element lookup and creation, the server's JSON
// API, the status line, the message list and the tabs. Untrusted text is set with
// textContent only (`el`'s `text`, `setText`), through `printable`: a bidi override or
// an invisible character is shown as its escape.

import { printable } from "./printable.js";

export const $ = (sel) => document.querySelector(sel);

export const el = (tag, props = {}, ...kids) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = printable(v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, k === "title" || k === "aria-label" ? printable(v) : v);
  }
  for (const kid of kids) node.append(kid);
  return node;
};

export const uid = () => (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2)).replace(/-/g, "");

export async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" } };
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) throw new Error((data && (data.error || (data.problems || []).join("; "))) || `${response.status}`);
  return data;
}

export function setText(node, text) { node.textContent = printable(text); }

export function setStatus(text) { setText($("#status"), text); }

export function addMessage(kind, text, who) {
  const item = el("li", { class: `msg ${kind}` }, el("span", { class: "who", text: who || kind }), el("div", { text }));
  $("#messages").append(item);
  item.scrollIntoView({ block: "nearest" });
  return item;
}

// -- tabs: each view loads what it shows when it is opened ----------------------------

const opening = {};

export function onTab(name, load) { opening[name] = load; }

export function showTab(name) {
  for (const b of document.querySelectorAll(".tabs button")) {
    b.setAttribute("aria-selected", String(b.dataset.tab === name));
    // a narrow window scrolls the tabs sideways: the chosen one comes into view
    const nav = b.parentElement;
    const left = b.offsetLeft - nav.offsetLeft; // both measured from the body
    if (b.dataset.tab === name && (left < nav.scrollLeft || left + b.offsetWidth > nav.scrollLeft + nav.clientWidth)) {
      nav.scrollLeft = left - 8;
    }
  }
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== `tab-${name}`;
  if (opening[name]) opening[name]();
}

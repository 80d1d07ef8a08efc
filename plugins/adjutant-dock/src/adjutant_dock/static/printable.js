// The terminal's `printable` rules (adjutant.safety.terminal), for the page: what the
// user approves must be what runs, so a bidi override, a zero-width character or a line
// separator in a name, path, argument, reason or output is shown as its escape
// ("photo_\u202egnp.sh", not "photo_hs.png"). The ranges are Python's, and
// tests/test_printable.py checks that they stay equal. `el`'s text and every other
// untrusted text on the page go through `printable`.

// Controls a terminal acts on: C0 but newline and tab, DEL, C1, bidi marks, embeddings,
// overrides and isolates, the line and paragraph separators.
export const UNSAFE = [[0x00, 0x08], [0x0B, 0x1F], [0x7F, 0x7F], [0x80, 0x9F], [0x061C, 0x061C],
  [0x200E, 0x200F], [0x202A, 0x202E], [0x2066, 0x2069], [0x2028, 0x2029]];
// Invisible characters: a name holding one looks like another name.
export const INVISIBLE = [[0x00AD, 0x00AD], [0x180E, 0x180E], [0x200B, 0x200B], [0x2060, 0x2064],
  [0xFEFF, 0xFEFF], [0xFFF9, 0xFFFB], [0xE0000, 0xE007F]];
// Shown as escapes only in one-line fields (scripts and emoji need the joiners).
export const ONE_LINE_EXTRA = [[0x200C, 0x200D], [0x09, 0x0A]];

const set = (...lists) => {
  const codes = new Set();
  for (const [a, b] of lists.flat()) for (let c = a; c <= b; c++) codes.add(c);
  return codes;
};
const MULTILINE = set(UNSAFE, INVISIBLE);
const ONE_LINE = set(UNSAFE, INVISIBLE, ONE_LINE_EXTRA);
const hex = (code, width) => code.toString(16).padStart(width, "0");

function visible(code) {
  const named = { 0x0D: "\\r", 0x0A: "\\n", 0x09: "\\t" };
  if (code in named) return named[code];
  if (code <= 0xFF) return `\\x${hex(code, 2)}`;
  return code <= 0xFFFF ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
}

// `text` with every character a terminal would act on shown as its escape; `multiline`
// false for a field that must stay on its one line.
export function printable(text, { multiline = true } = {}) {
  let shown = text === null || text === undefined ? "" : String(text);
  if (multiline) shown = shown.replace(/\r\n/g, "\n");
  const codes = multiline ? MULTILINE : ONE_LINE;
  let out = "";
  for (const ch of shown) out += codes.has(ch.codePointAt(0)) ? visible(ch.codePointAt(0)) : ch;
  return out;
}

// `value` as indented JSON whose strings hold those characters as JSON escapes: still
// valid JSON (the arguments editor parses it back to the same value), never a lie.
export function printableJSON(value) {
  let out = "";
  for (const ch of JSON.stringify(value, null, 2) ?? "null") {
    const code = ch.codePointAt(0);
    if (!MULTILINE.has(code)) { out += ch; continue; }
    out += [...Array(ch.length).keys()].map((i) => `\\u${hex(ch.charCodeAt(i), 4)}`).join("");
  }
  return out;
}

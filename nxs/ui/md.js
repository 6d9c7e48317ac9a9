// Markdown, drawn as elements: no stored text is ever parsed as HTML. A tag in a body stays
// the characters it is; links go only to http(s) addresses or to the dashboard's own pages.
import { h, link, memoryHref } from "./dom.js";

const KEY = /^[0-9a-f]{16}$/;
const URL_TEXT = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]}]/g;

// An address a link may go to: http or https only (no javascript:, data:, file:, ...).
export function safeUrl(text) {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch (_) {
    return null;
  }
}

export function outLink(url, ...children) {
  return h("a", { href: url, rel: "noopener noreferrer nofollow", target: "_blank", class: "external" }, ...children);
}

// A ref (an item id, a file path, a URL, a memory key) as a link: a URL opens it, a key opens
// the memory, anything else lists the memories with that ref.
export function refLink(ref) {
  const url = /^https?:/i.test(ref) ? safeUrl(ref) : null;
  if (url) return outLink(url, ref);
  if (KEY.test(ref)) return link(memoryHref(ref), h("code", {}, ref));
  return link(`#/memories?${new URLSearchParams({ ref, status: "all" })}`, h("code", {}, ref));
}

// Plain text with its URLs and memory keys made links.
function linkify(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(URL_TEXT)) {
    if (m.index > last) out.push(...keys(text.slice(last, m.index)));
    const url = safeUrl(m[0]);
    out.push(url ? outLink(url, m[0]) : m[0]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(...keys(text.slice(last)));
  return out;
}

function keys(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/\b[0-9a-f]{16}\b/g)) {
    if (!/[a-f]/.test(m[0]) || !/[0-9]/.test(m[0])) continue; // a word of letters or a number
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(link(memoryHref(m[0]), h("code", {}, m[0])));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// Emphasis opens after a space or punctuation that is not a word character, and closes before
// one, so `window.__name` or snake_case_words stay as they are.
const INLINE = new RegExp([
  "`([^`]+)`", // 1 code
  "\\[([^\\]\\n]+)\\]\\(([^()\\s]+)\\)", // 2 text, 3 url
  "(?<![\\w*])\\*\\*(?=\\S)([^*\\n]+?)(?<=\\S)\\*\\*(?![\\w*])", // 4 strong
  "(?<![\\w_])__(?=\\S)([^_\\n]+?)(?<=\\S)__(?![\\w_])", // 5 strong
  "(?<![\\w*])\\*(?=[^\\s*])([^*\\n]+?)(?<=[^\\s*])\\*(?![\\w*])", // 6 em
  "(?<![\\w_])_(?=[^\\s_])([^_\\n]+?)(?<=[^\\s_])_(?![\\w_])", // 7 em
].join("|"), "g");

export function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(...linkify(text.slice(last, m.index)));
    if (m[1] !== undefined) out.push(KEY.test(m[1]) ? link(memoryHref(m[1]), h("code", {}, m[1])) : h("code", {}, m[1]));
    else if (m[2] !== undefined) {
      const url = safeUrl(m[3]);
      out.push(url ? outLink(url, inline(m[2])) : m[0]); // not http(s): the source, as text
    } else if (m[4] !== undefined || m[5] !== undefined) out.push(h("strong", {}, inline(m[4] ?? m[5])));
    else out.push(h("em", {}, inline(m[6] ?? m[7])));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(...linkify(text.slice(last)));
  return out;
}

// Blocks: headings, fenced code, lists (nested by indent), quotes, rules, paragraphs.
export function markdown(text, attrs) {
  const out = h("div", { class: "md", ...(attrs || {}) });
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (!para.length) return;
    const p = h("p");
    para.forEach((line, n) => { if (n) p.append(h("br")); p.append(...inline(line)); });
    out.append(p);
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)\s*$/))) {
      flush();
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i += 1;
      out.append(h("pre", { class: "code", dataset: m[2] ? { lang: m[2] } : null }, h("code", {}, body.join("\n"))));
      continue;
    }
    if ((m = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/))) {
      flush();
      out.append(h(`h${Math.min(Math.max(m[1].length, 2), 6)}`, {}, inline(m[2])));
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.append(h("hr"));
    } else if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*> ?/, ""));
      out.append(h("blockquote", {}, [...markdown(quoted.join("\n")).childNodes]));
      continue;
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      flush();
      const consumed = list(lines, i, out);
      i = consumed;
      continue;
    } else if (!line.trim()) {
      flush();
    } else {
      para.push(line.trim());
    }
    i += 1;
  }
  flush();
  return out;
}

function list(lines, start, parent) {
  const indent = (l) => l.match(/^\s*/)[0].length;
  const base = indent(lines[start]);
  const ordered = /^\s*\d+[.)]\s/.test(lines[start]);
  const el = h(ordered ? "ol" : "ul");
  parent.append(el);
  let i = start;
  let item = null;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) break;
    const m = line.match(/^(\s*)([-*+]|\d+[.)])\s+(.*)$/);
    if (m && indent(line) === base) {
      item = h("li", {}, inline(m[3]));
      el.append(item);
      i += 1;
    } else if (m && indent(line) > base && item) {
      i = list(lines, i, item);
    } else if (item && indent(line) > base) {
      item.append(" ", ...inline(line.trim())); // a wrapped line of the item
      i += 1;
    } else break;
  }
  return i;
}

// -- diffs ----------------------------------------------------------------------------------

// The longest common subsequence of two token lists, as [kind, token] with kind " ", "-", "+".
export function diff(a, b) {
  const n = a.length, m = b.length;
  if (n * m > 4e6) return [...a.map((t) => ["-", t]), ...b.map((t) => ["+", t])]; // too big: both whole
  const w = m + 1;
  const len = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      len[i * w + j] = a[i] === b[j] ? len[(i + 1) * w + j + 1] + 1 : Math.max(len[(i + 1) * w + j], len[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
    else if (len[(i + 1) * w + j] >= len[i * w + j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}

// A change from one text to another: by line for text of several lines, by word otherwise.
export function diffView(before, after) {
  const multi = before.includes("\n") || after.includes("\n");
  const split = multi ? (t) => t.split("\n") : (t) => t.split(/(\s+)/).filter((x) => x !== "");
  const parts = diff(split(before), split(after));
  if (multi) {
    return h("pre", { class: "diff lines" }, parts.map(([k, t]) =>
      h(k === "-" ? "del" : k === "+" ? "ins" : "span", { class: "line" }, `${k} ${t}\n`)));
  }
  // A line rewritten more than kept reads better as the line before, then the line after.
  const kept = parts.filter(([k, t]) => k === " " && t.trim()).length;
  if (kept * 2 < Math.max(...[before, after].map((t) => t.split(/\s+/).filter(Boolean).length))) {
    return h("pre", { class: "diff lines" }, h("del", { class: "line" }, `- ${before}\n`), h("ins", { class: "line" }, `+ ${after}\n`));
  }
  return h("p", { class: "diff words" }, parts.map(([k, t]) => (k === " " ? t : h(k === "-" ? "del" : "ins", {}, t))));
}

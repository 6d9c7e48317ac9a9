// nxs dashboard: talking to the server, and building elements from text only.
// Memory text reaches the page only through text nodes (h() below), never parsed as HTML.

const CSRF = document.querySelector('meta[name="nxs-csrf"]').content;
const SVG_NS = "http://www.w3.org/2000/svg";

// What the pages share: the server's /api/info, and the live-refresh bookkeeping (app.js).
export const state = { info: null, render: null, seen: null };

// -- the server -----------------------------------------------------------------------------

export class ApiError extends Error {
  constructor(data, status) {
    super((data && data.message) || "request failed");
    this.data = data || {};
    this.status = status;
  }
}

export async function post(path, args) {
  const res = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-nxs-csrf": CSRF },
    body: JSON.stringify(args || {}),
  });
  let data = null;
  try {
    data = await res.json();
  } catch (_) {
    throw new ApiError({ message: `the server answered HTTP ${res.status}` }, res.status);
  }
  if (!res.ok || (data && data.error === true)) throw new ApiError(data, res.status);
  return data;
}

export const call = (tool, args) => post(`/api/call/${encodeURIComponent(tool)}`, args);
export const view = (name, args) => post(`/api/view/${encodeURIComponent(name)}`, args);

// -- elements -------------------------------------------------------------------------------

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value" || k === "checked" || k === "disabled" || k === "indeterminate") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c)); // a string becomes a text node
  }
  return el;
}

export const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
export const s = (tag, attrs, ...children) => build(document.createElementNS(SVG_NS, tag), attrs, children);
export const link = (hash, ...children) => h("a", { href: hash }, ...children);
export const memoryHref = (key) => `#/memory/${encodeURIComponent(key)}`;

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

export const time = (iso) => h("time", { datetime: iso, title: iso }, when(iso));
export const badge = (text, kind) => h("span", { class: `badge ${kind || ""} b-${String(text).toLowerCase()}` }, text);
// The code a memory names moved since it was written (`memory_stale`): the reason on hover.
export const staleBadge = (reason) => (reason ? h("span", { class: "badge stale", title: reason }, "possibly stale") : null);
export const shortKey = (key) => h("code", { class: "key", title: key }, key.slice(0, 8));
export const field = (label, control, extra) => h("label", { class: `field ${extra || ""}` }, h("span", {}, label), control);

export function flash(message, kind, action) {
  const box = document.getElementById("flash");
  box.replaceChildren(h("span", {}, message));
  if (action) {
    box.append(h("button", { type: "button", class: "link", onclick: () => { box.hidden = true; action.run(); } }, action.label));
  }
  box.className = kind || "ok";
  box.hidden = false;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => { box.hidden = true; }, 8000);
}

export function errorBox(err, id) {
  const data = (err && err.data) || { message: String(err) };
  return h("div", { class: "panel error-box", role: "alert", id: id || null },
    h("strong", {}, data.code ? `${data.code}: ` : "Error: "), h("span", { class: "message" }, data.message || ""),
    data.suggestion ? h("p", { class: "muted" }, data.suggestion) : null);
}

// A refusal shown inside the form that caused it; the field its message names is marked.
export function showRefusal(form, err) {
  clearRefusal(form);
  const box = errorBox(err);
  box.classList.add("form-error");
  form.prepend(box);
  const message = ((err && err.data && err.data.message) || "").toLowerCase();
  for (const control of form.querySelectorAll("[name]")) {
    const name = control.getAttribute("name");
    if (new RegExp(`(^|\\W)${name}(\\W|$)`).test(message)) {
      control.setAttribute("aria-invalid", "true");
      control.setAttribute("aria-describedby", "form-error");
      box.id = "form-error";
      control.focus();
      break;
    }
  }
  box.scrollIntoView({ block: "nearest" });
}

export function clearRefusal(form) {
  for (const old of form.querySelectorAll(".form-error")) old.remove();
  for (const c of form.querySelectorAll("[aria-invalid]")) {
    c.removeAttribute("aria-invalid");
    c.removeAttribute("aria-describedby");
  }
}

export function select(name, options, current, attrs) {
  return h("select", { name, ...(attrs || {}) },
    options.map(([value, label]) => h("option", { value, selected: value === (current || "") ? true : null }, label)));
}

export function choices(tool, param) {
  const p = state.info && state.info.tools[tool] && state.info.tools[tool].params.find((x) => x.name === param);
  return (p && p.choices) || [];
}

export const opts = (tool, name) => choices(tool, name).map((c) => [c, c]);

// -- routing --------------------------------------------------------------------------------

export function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "memories";
  const [path, query] = hash.split("?");
  const parts = path.split("/").map((x) => decodeURIComponent(x));
  return { page: parts[0], arg: parts.slice(1).join("/"), params: new URLSearchParams(query || "") };
}

export function go(page, params) {
  const q = params ? params.toString() : "";
  const target = `#/${page}${q ? `?${q}` : ""}`;
  if (location.hash === target) state.render();
  else location.hash = target;
}

// A write from this page: run it, say how it went, draw the page again.
export async function act(tool, args, message, undo) {
  try {
    await call(tool, args);
    flash(message, "ok", undo);
  } catch (err) {
    flash(err.message, "error");
  }
  await state.render();
}

export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

export const plural = (n, one, many) => `${n} ${n === 1 ? one : many || `${one}s`}`;

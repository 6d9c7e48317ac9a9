// nxs dashboard: one page over the operation table (POST /api/call/<tool>).
// Memory text reaches the page only through text nodes (h() below), never parsed as HTML.
"use strict";

const CSRF = document.querySelector('meta[name="nxs-csrf"]').content;
const view = document.getElementById("view");
const SVG_NS = "http://www.w3.org/2000/svg";
let INFO = null;

// -- talking to the server ------------------------------------------------------------------

class ApiError extends Error {
  constructor(data) {
    super(data.message || "request failed");
    this.data = data;
  }
}

async function post(path, args) {
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
    throw new ApiError({ message: `the server answered HTTP ${res.status}` });
  }
  if (!res.ok || (data && data.error === true)) throw new ApiError(data || {});
  return data;
}

const call = (tool, args) => post(`/api/call/${encodeURIComponent(tool)}`, args);

// -- building elements (text only) ----------------------------------------------------------

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value" || k === "checked" || k === "disabled") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c)); // a string becomes a text node
  }
  return el;
}

const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
const s = (tag, attrs, ...children) => build(document.createElementNS(SVG_NS, tag), attrs, children);
const link = (hash, ...children) => h("a", { href: hash }, ...children);
const memoryHref = (key) => `#/memory/${encodeURIComponent(key)}`;

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

const time = (iso) => h("time", { datetime: iso, title: iso }, when(iso));
const badge = (text, kind) => h("span", { class: `badge ${kind || ""} b-${String(text).toLowerCase()}` }, text);
const shortKey = (key) => h("code", { class: "key", title: key }, key.slice(0, 8));

function flash(message, kind, action) {
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

function errorBox(err) {
  const data = (err && err.data) || { message: String(err) };
  return h("div", { class: "panel error-box", role: "alert" },
    h("strong", {}, data.code ? `${data.code}: ` : "Error: "), data.message || "",
    data.suggestion ? h("p", { class: "muted" }, data.suggestion) : null);
}

function select(name, options, current, attrs) {
  return h("select", { name, ...(attrs || {}) },
    options.map(([value, label]) => h("option", { value, selected: value === (current || "") ? true : null }, label)));
}

function choices(tool, param) {
  const p = INFO && INFO.tools[tool] && INFO.tools[tool].params.find((x) => x.name === param);
  return (p && p.choices) || [];
}

// -- routing --------------------------------------------------------------------------------

function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "memories";
  const [path, query] = hash.split("?");
  const parts = path.split("/").map((x) => decodeURIComponent(x));
  return { page: parts[0], arg: parts.slice(1).join("/"), params: new URLSearchParams(query || "") };
}

function go(page, params) {
  const q = params ? params.toString() : "";
  const target = `#/${page}${q ? `?${q}` : ""}`;
  if (location.hash === target) render();
  else location.hash = target;
}

let rendering = 0;

async function render() {
  const r = route();
  const page = PAGES[r.page] ? r.page : "memories";
  const mine = ++rendering;
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("active", a.dataset.page === page || (page === "memory" && a.dataset.page === "memories"));
  }
  view.setAttribute("aria-busy", "true");
  const root = h("div", { class: `page page-${page}` });
  try {
    await PAGES[page](root, r);
  } catch (err) {
    root.replaceChildren(errorBox(err));
  }
  if (mine !== rendering) return; // a later navigation won
  view.replaceChildren(root);
  view.dataset.page = page;
  view.setAttribute("aria-busy", "false");
  document.title = `${root.dataset.title || page} · nxs`;
}

// -- memories -------------------------------------------------------------------------------

const LIST_FILTERS = ["status", "category", "scope", "priority", "layer", "user_id", "agent_id"];

async function memoriesPage(root, r) {
  const p = r.params;
  const args = { page: Number(p.get("page")) || 1, page_size: Number(p.get("page_size")) || 20 };
  for (const f of LIST_FILTERS) if (p.get(f)) args[f] = p.get(f);
  const [list, who] = await Promise.all([call("memory_list", args), call("memory_entities", {})]);
  root.dataset.title = "Memories";

  const apply = (changes) => {
    const next = new URLSearchParams(p);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    if (!("page" in changes)) next.delete("page");
    go("memories", next);
  };
  const any = [["", "any"]];
  const opts = (tool, name) => choices(tool, name).map((c) => [c, c]);
  const users = who.entities.filter((e) => e.kind === "user").map((e) => [e.userId, `${e.userId} (${e.memoryCount})`]);
  const agents = who.entities.filter((e) => e.kind === "agent").map((e) => [e.agentId, `${e.agentId} (${e.memoryCount})`]);
  const onchange = (ev) => apply({ [ev.target.name]: ev.target.value });
  const field = (label, control) => h("label", { class: "field" }, h("span", {}, label), control);
  const category = h("input", { name: "category", value: p.get("category") || "", placeholder: "any", size: 12 });
  const form = h("form", {
    class: "filters", id: "filters",
    onsubmit: (ev) => { ev.preventDefault(); apply({ category: category.value.trim() }); },
  },
  field("Status", select("status", [["", "open"], ...opts("memory_list", "status").filter((c) => c[0] !== "open")], p.get("status"), { onchange })),
  field("Category", category),
  field("Scope", select("scope", [...any, ...opts("memory_list", "scope")], p.get("scope"), { onchange })),
  field("Priority", select("priority", [...any, ...opts("memory_list", "priority")], p.get("priority"), { onchange })),
  field("Layer", select("layer", [...any, ...opts("memory_list", "layer")], p.get("layer"), { onchange })),
  field("User", select("user_id", [...any, ...users], p.get("user_id"), { onchange })),
  field("Agent", select("agent_id", [...any, ...agents], p.get("agent_id"), { onchange })),
  h("button", { type: "submit" }, "Apply"),
  h("a", { href: "#/memories", class: "muted" }, "clear"));

  const rows = list.memories.map((m) => h("tr", { dataset: { key: m.key } },
    h("td", {}, shortKey(m.key)),
    h("td", { class: "intro" }, link(memoryHref(m.key), m.introduction)),
    h("td", {}, m.category || h("span", { class: "muted" }, "—")),
    h("td", {}, m.scope),
    h("td", {}, badge(m.priority)),
    h("td", {}, m.layer === "TASK" ? badge("TASK", "task") : "permanent"),
    h("td", {}, badge(m.status)),
    h("td", { class: "nowrap" }, time(m.updated))));
  const table = list.memories.length
    ? h("table", { class: "list", id: "memory-table" },
      h("thead", {}, h("tr", {}, ["Key", "Introduction", "Category", "Scope", "Priority", "Layer", "Status", "Updated"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows))
    : h("p", { class: "empty" }, "No memories match these filters.");

  const page = list.page;
  const pages = Math.max(list.total_pages, 1);
  const pager = h("nav", { class: "pager", id: "pager" },
    h("button", { type: "button", disabled: page <= 1, onclick: () => apply({ page: String(page - 1) }) }, "‹ Previous"),
    h("span", { class: "muted" }, `Page ${page} of ${pages} · ${list.total} ${list.total === 1 ? "memory" : "memories"}`),
    h("button", { type: "button", disabled: page >= pages, onclick: () => apply({ page: String(page + 1) }) }, "Next ›"),
    select("page_size", [["10", "10 a page"], ["20", "20 a page"], ["50", "50 a page"], ["100", "100 a page"]], String(list.page_size), { onchange }));
  root.append(h("h1", {}, "Memories"), form, table, pager);
}

// -- search ---------------------------------------------------------------------------------

async function searchPage(root, r) {
  const p = r.params;
  const q = p.get("q") || "";
  const mode = p.get("mode") || "hybrid";
  const limit = p.get("limit") || "10";
  root.dataset.title = q ? `Search: ${q}` : "Search";
  const input = h("input", { type: "search", name: "q", id: "search-input", value: q, placeholder: "what do you want to find?", autofocus: true });
  const modes = choices("memory_search", "mode");
  const form = h("form", {
    class: "searchbar", id: "search-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      const data = new FormData(form);
      go("search", new URLSearchParams({ q: input.value, mode: data.get("mode"), limit: data.get("limit") }));
    },
  },
  input,
  h("span", { class: "modes", role: "radiogroup" }, modes.map((m) => h("label", { class: "mode" },
    h("input", { type: "radio", name: "mode", value: m, checked: m === mode }), m))),
  select("limit", [["5", "5"], ["10", "10"], ["20", "20"]], limit),
  h("button", { type: "submit" }, "Search"));
  root.append(h("h1", {}, "Search"), form);
  if (!q.trim()) {
    root.append(h("p", { class: "muted" }, "Hybrid mixes meaning and words; semantic is meaning only; keyword is exact words."));
    return;
  }
  const found = await call("memory_search", { query: q, mode, limit: Number(limit), status: "all" });
  const results = h("ol", { class: "results", id: "search-results" }, found.results.map((m) => h("li", { dataset: { key: m.key } },
    h("div", { class: "result-head" }, link(memoryHref(m.key), m.introduction), " ", badge(m.status)),
    h("div", { class: "muted small" }, shortKey(m.key), " · ", m.category || "uncategorised",
      ` · score ${m.score.toFixed(4)}`,
      m.semantic !== null && m.semantic !== undefined ? ` · meaning ${m.semantic.toFixed(3)}` : "",
      m.keyword !== null && m.keyword !== undefined ? ` · words ${m.keyword.toFixed(3)}` : ""))));
  root.append(h("p", { class: "muted" }, `${found.results.length} of ${found.total} (${found.mode})`),
    found.results.length ? results : h("p", { class: "empty" }, "Nothing found."));
}

// -- one memory -----------------------------------------------------------------------------

async function act(tool, args, message, undo) {
  try {
    await call(tool, args);
    flash(message, "ok", undo);
  } catch (err) {
    flash(err.message, "error");
  }
  await render();
}

function detail(label, ...value) {
  return [h("dt", {}, label), h("dd", {}, ...value)];
}

function eventText(ev) {
  const d = ev.data || {};
  const bits = [];
  if (d.from !== undefined && d.to !== undefined) bits.push(`${d.from} → ${d.to}`);
  if (d.fields) bits.push(`changed ${d.fields.join(", ")}`);
  if (d.signal) bits.push(d.signal);
  if (d.comment) bits.push(`“${d.comment}”`);
  for (const [k, v] of Object.entries(d)) {
    if (!["from", "to", "fields", "signal", "comment"].includes(k)) bits.push(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  }
  return bits.join(" · ");
}

function purgeBox(key) {
  const word = key.slice(0, 6);
  const input = h("input", { id: "purge-input", autocomplete: "off", placeholder: word, size: 10 });
  const yes = h("button", {
    type: "button", class: "danger", id: "purge-confirm", disabled: true,
    onclick: async () => {
      try {
        await call("memory_purge", { key });
        flash(`Purged ${key} for good.`, "ok");
        go("memories", new URLSearchParams({ status: "forgotten" }));
      } catch (err) {
        flash(err.message, "error");
      }
    },
  }, "Purge permanently");
  input.addEventListener("input", () => { yes.disabled = input.value.trim() !== word; });
  const box = h("div", { class: "confirm", id: "purge-box", hidden: true, role: "alertdialog" },
    h("p", {}, "Purging deletes this memory and its history for good; it cannot be restored. Type ",
      h("code", {}, word), " to confirm."),
    input, " ", yes, " ",
    h("button", { type: "button", onclick: () => { box.hidden = true; } }, "Cancel"));
  return box;
}

function classifyForm(m) {
  const category = h("input", { name: "category", value: m.category || "" });
  const scope = select("scope", choices("memory_classify", "scope").map((c) => [c, c]), m.scope);
  const refs = h("textarea", { name: "refs", rows: 3, placeholder: "one per line" });
  refs.value = (m.refs || []).join("\n");
  const intro = h("input", { name: "introduction", value: m.introduction, maxlength: 200 });
  const form = h("form", {
    class: "classify", id: "classify-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      const args = { key: m.key };
      const newRefs = refs.value.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
      if (category.value.trim() !== (m.category || "")) args.category = category.value.trim();
      if (scope.value !== m.scope) args.scope = scope.value;
      if (JSON.stringify(newRefs) !== JSON.stringify(m.refs || [])) args.refs = newRefs;
      if (intro.value.trim() !== m.introduction) args.introduction = intro.value.trim();
      if (Object.keys(args).length === 1) {
        flash("Nothing changed.", "error");
        return;
      }
      act("memory_classify", args, "Classified.");
    },
  },
  h("label", { class: "field" }, h("span", {}, "Category"), category),
  h("label", { class: "field" }, h("span", {}, "Scope"), scope),
  h("label", { class: "field wide" }, h("span", {}, "Introduction"), intro),
  h("label", { class: "field wide" }, h("span", {}, "Refs"), refs),
  h("button", { type: "submit" }, "Save classification"));
  return h("details", { class: "panel" }, h("summary", {}, "Classify…"), form);
}

function actions(m) {
  const key = m.key;
  const b = (label, id, onclick, cls) => h("button", { type: "button", id, class: cls || "", onclick }, label);
  const row = h("div", { class: "actions", id: "actions" });
  if (m.status === "open") row.append(b("Close", "act-close", () => act("memory_close", { key }, "Closed.", { label: "Reopen", run: () => act("memory_reopen", { key }, "Reopened.") }), "ghost"));
  if (m.status === "closed") row.append(b("Reopen", "act-reopen", () => act("memory_reopen", { key }, "Reopened.")));
  if (m.status !== "forgotten") row.append(b("Forget", "act-forget", () => act("memory_forget", { key }, "Forgotten.", { label: "Restore", run: () => act("memory_restore", { key }, "Restored.") }), "ghost warn"));
  if (m.status === "forgotten") row.append(b("Restore", "act-restore", () => act("memory_restore", { key }, "Restored.")));
  if (m.layer === "TASK") row.append(b("Promote to permanent", "act-promote", () => act("memory_promote", { key }, "Promoted: it no longer expires.")));
  const box = purgeBox(key);
  if (m.status === "forgotten") row.append(b("Purge…", "act-purge", () => { box.hidden = false; box.querySelector("input").focus(); }, "danger"));
  const comment = h("input", { id: "feedback-comment", placeholder: "comment (optional)", size: 22 });
  const fb = (signal, label) => b(label, `fb-${signal.toLowerCase()}`, () => {
    const args = { key, signal };
    if (comment.value.trim()) args.comment = comment.value.trim();
    act("memory_feedback", args, `Feedback recorded: ${signal}.`);
  }, "ghost");
  const feedback = h("div", { class: "feedback" }, h("span", { class: "muted" }, "Was it useful?"),
    fb("POSITIVE", "▲ Useful"), fb("NEUTRAL", "Neutral"), fb("NEGATIVE", "▼ Not useful"), comment);
  return [row, box, feedback];
}

async function memoryPage(root, r) {
  const key = r.arg;
  const [shown, history] = await Promise.all([
    call("memory_show", { key }),
    call("memory_history", { key, limit: 1000 }),
  ]);
  const m = shown.memory;
  root.dataset.title = m.introduction;
  const fb = m.feedback || {};
  const refs = (m.refs || []).length ? h("ul", { class: "refs" }, m.refs.map((x) => h("li", {}, h("code", {}, x)))) : h("span", { class: "muted" }, "none");
  const dl = h("dl", { class: "details" },
    detail("Key", h("code", { id: "memory-key" }, m.key)),
    detail("Status", badge(m.status)),
    detail("Priority", badge(m.priority)),
    detail("Layer", m.layer, m.expires ? h("span", { class: "muted" }, " · expires ", time(m.expires)) : null),
    detail("Category", m.category || h("span", { class: "muted" }, "none")),
    detail("Scope", m.scope),
    detail("Refs", refs),
    detail("Feedback", `+${fb.POSITIVE || 0} · ${fb.NEUTRAL || 0} · −${fb.NEGATIVE || 0}`),
    detail("Processing", m.processing),
    detail("Actor", m.actor || ""),
    detail("Created", time(m.created)),
    detail("Updated", time(m.updated)));
  const other = ["user_id", "agent_id", "session_id", "persona", "program_tool", "user_query", "company_client", "client_project", "artifact_url"];
  for (const k of other) if (m[k]) dl.append(...detail(k.replace(/_/g, " "), m[k]));
  if (m.metadata && Object.keys(m.metadata).length) dl.append(...detail("Metadata", h("code", {}, JSON.stringify(m.metadata))));

  const timeline = h("ol", { class: "timeline", id: "history" }, history.events.map((ev) => h("li", { dataset: { type: ev.type } },
    h("div", {}, badge(ev.type, "event"), " ", time(ev.at), h("span", { class: "muted" }, ` by ${ev.actor}`)),
    eventText(ev) ? h("div", { class: "small" }, eventText(ev)) : null)));

  root.append(
    h("p", { class: "crumbs" }, link("#/memories", "Memories"), " / ", h("code", {}, m.key.slice(0, 8))),
    h("h1", { id: "memory-title" }, m.introduction),
    ...actions(m),
    h("div", { class: "columns" },
      h("section", { class: "main-col" },
        h("h2", {}, "Body"), h("pre", { class: "body", id: "memory-body" }, m.body),
        h("h2", {}, `History (${history.total})`), timeline),
      h("aside", { class: "side-col" }, h("h2", {}, "Classification"), dl, classifyForm(m))));
}

// -- knowledge ------------------------------------------------------------------------------

function inline(text) {
  const out = [];
  const re = /_\((.*?)\)_|`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  let m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(h("span", { class: "muted small" }, "(", inline(m[1]), ")"));
    else if (m[2] !== undefined) out.push(/^[0-9a-f]{8,64}$/.test(m[2]) ? link(memoryHref(m[2]), h("code", {}, m[2].slice(0, 8))) : h("code", {}, m[2]));
    else out.push(h("strong", {}, m[3]));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function markdown(text) {
  const out = h("div", { class: "md" });
  let list = null;
  for (const line of text.split("\n")) {
    let m;
    if ((m = line.match(/^(#{1,4})\s+(.*)$/))) {
      list = null;
      out.append(h(`h${Math.min(Math.max(m[1].length, 2), 5)}`, {}, inline(m[2])));
    } else if ((m = line.match(/^\s*[-*]\s+(.*)$/))) {
      if (!list) out.append((list = h("ul")));
      list.append(h("li", {}, inline(m[1])));
    } else if (line.trim()) {
      list = null;
      out.append(h("p", {}, inline(line)));
    } else {
      list = null;
    }
  }
  return out;
}

async function knowledgePage(root, r) {
  const category = r.params.get("category") || "";
  const [all, doc] = await Promise.all([
    call("memory_knowledge", {}),
    category ? call("memory_knowledge", { category }) : null,
  ]);
  const shown = doc || all;
  root.dataset.title = "Knowledge";
  const pick = select("category", [["", "all categories"], ...all.categories.map((c) => [c, c])], category, {
    onchange: (ev) => go("knowledge", ev.target.value ? new URLSearchParams({ category: ev.target.value }) : null),
  });
  root.append(
    h("div", { class: "page-head" }, h("h1", {}, "Knowledge"), pick),
    h("p", { class: "muted" }, `The open memories by category and subject, near-duplicates merged: ${shown.total} entries from ${shown.memories} memories.`),
    h("article", { class: "panel", id: "knowledge-doc" }, shown.content.trim() ? markdown(shown.content) : h("p", { class: "empty" }, "No open memories yet.")));
}

// -- graph ----------------------------------------------------------------------------------

const TYPE_ORDER = ["PERSON", "ORGANIZATION", "PLACE", "THING"];

function layout(nodes, edges, width, height) {
  // Fruchterman-Reingold from a circle: deterministic, so the same graph draws the same way.
  const n = nodes.length;
  const k = Math.sqrt((width * height) / Math.max(n, 1)) * 0.8;
  nodes.forEach((node, i) => {
    const a = (2 * Math.PI * i) / Math.max(n, 1);
    node.x = width / 2 + (width / 3) * Math.cos(a);
    node.y = height / 2 + (height / 3) * Math.sin(a);
  });
  let temp = width / 8;
  for (let step = 0; step < 300; step++) {
    for (const v of nodes) { v.dx = 0; v.dy = 0; }
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = nodes[i], b = nodes[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        const d = Math.max(Math.hypot(dx, dy), 0.01);
        if (d > 2.5 * k) continue; // far apart: no push, so gravity can gather the islands
        const f = (k * k) / d;
        dx = (dx / d) * f; dy = (dy / d) * f;
        a.dx += dx; a.dy += dy; b.dx -= dx; b.dy -= dy;
      }
    }
    for (const e of edges) {
      const a = e.a, b = e.b;
      const dx = a.x - b.x, dy = a.y - b.y;
      const d = Math.max(Math.hypot(dx, dy), 0.01);
      const f = (d * d) / k;
      a.dx -= (dx / d) * f; a.dy -= (dy / d) * f;
      b.dx += (dx / d) * f; b.dy += (dy / d) * f;
    }
    for (const v of nodes) {
      v.dx += (width / 2 - v.x) * 0.12 * (k / 40); // gravity keeps islands near the middle
      v.dy += (height / 2 - v.y) * 0.18 * (k / 40);
      const d = Math.max(Math.hypot(v.dx, v.dy), 0.01);
      v.x = Math.min(width - 60, Math.max(60, v.x + (v.dx / d) * Math.min(d, temp)));
      v.y = Math.min(height - 30, Math.max(30, v.y + (v.dy / d) * Math.min(d, temp)));
    }
    temp = Math.max(temp * 0.98, 1);
  }
}

async function graphPage(root, r) {
  const g = await post("/api/graph", {});
  root.dataset.title = "Graph";
  root.append(h("h1", {}, "Entity graph"));
  if (!g.entities.length) {
    root.append(h("p", { class: "empty" }, "No entities yet: they are extracted from open memories, or added with `nxm graph add`."));
    return;
  }
  const W = 900, H = 600;
  const nodes = g.entities.map((e) => ({ ...e }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = g.relations.map((rel) => ({ rel, a: byId.get(rel.source.id), b: byId.get(rel.target.id) })).filter((e) => e.a && e.b);
  layout(nodes, edges, W, H);

  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "graph", id: "graph-svg", role: "img", "aria-label": "entity graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" },
      s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  const edgeLayer = s("g", { class: "edges" });
  const nodeLayer = s("g", { class: "nodes" });
  svg.append(edgeLayer, nodeLayer);
  const radius = (n) => Math.min(7 + 2.2 * Math.sqrt(n.sourceMemoryIds.length + n.relationCount), 18);

  for (const e of edges) {
    e.line = s("line", { class: e.rel.authored ? "edge authored" : "edge", "marker-end": "url(#arrow)" }, s("title", {}, `${e.a.name} ${e.rel.relation} ${e.b.name}`));
    e.label = s("text", { class: "edge-label" }, e.rel.relation);
    edgeLayer.append(e.line, e.label);
  }
  for (const n of nodes) {
    n.el = s("g", { class: `node t-${n.type.toLowerCase()}`, tabindex: "0", dataset: { id: n.id, name: n.name } },
      s("circle", { r: radius(n) }), s("text", { dy: radius(n) + 13 }, n.name), s("title", {}, `${n.name} (${n.type})`));
    nodeLayer.append(n.el);
  }
  const place = () => {
    for (const n of nodes) n.el.setAttribute("transform", `translate(${n.x.toFixed(1)},${n.y.toFixed(1)})`);
    for (const e of edges) {
      const dx = e.b.x - e.a.x, dy = e.b.y - e.a.y;
      const d = Math.max(Math.hypot(dx, dy), 0.01);
      const ra = radius(e.a), rb = radius(e.b) + 2;
      e.line.setAttribute("x1", (e.a.x + (dx / d) * ra).toFixed(1));
      e.line.setAttribute("y1", (e.a.y + (dy / d) * ra).toFixed(1));
      e.line.setAttribute("x2", (e.b.x - (dx / d) * rb).toFixed(1));
      e.line.setAttribute("y2", (e.b.y - (dy / d) * rb).toFixed(1));
      e.label.setAttribute("x", ((e.a.x + e.b.x) / 2).toFixed(1));
      e.label.setAttribute("y", ((e.a.y + e.b.y) / 2 - 4).toFixed(1));
    }
  };
  place();

  const panel = h("aside", { class: "graph-side", id: "entity-panel" });
  const choose = (node) => {
    for (const n of nodes) n.el.classList.toggle("selected", n === node);
    const near = new Set([node]);
    for (const e of edges) {
      const on = e.a === node || e.b === node;
      e.line.classList.toggle("hot", on);
      e.label.classList.toggle("hot", on);
      if (on) { near.add(e.a); near.add(e.b); }
    }
    for (const n of nodes) n.el.classList.toggle("dim", !near.has(n));
    showEntity(panel, node, (id) => { const other = byId.get(id); if (other) choose(other); });
  };
  // Dragging moves a node; a click without a drag selects it.
  let drag = null;
  const point = (ev) => {
    const box = svg.getBoundingClientRect();
    return { x: ((ev.clientX - box.left) / box.width) * W, y: ((ev.clientY - box.top) / box.height) * H };
  };
  for (const n of nodes) {
    n.el.addEventListener("pointerdown", (ev) => { drag = { n, moved: false, start: point(ev) }; n.el.setPointerCapture(ev.pointerId); });
    n.el.addEventListener("pointermove", (ev) => {
      if (!drag || drag.n !== n) return;
      const p = point(ev);
      if (!drag.moved && Math.hypot(p.x - drag.start.x, p.y - drag.start.y) < 4) return;
      drag.moved = true;
      n.x = Math.min(W - 10, Math.max(10, p.x));
      n.y = Math.min(H - 10, Math.max(10, p.y));
      place();
    });
    n.el.addEventListener("pointerup", () => { const was = drag; drag = null; if (was && !was.moved) choose(n); });
    n.el.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") choose(n); });
  }

  const counts = TYPE_ORDER.map((t) => [t, nodes.filter((n) => n.type === t).length]).filter(([, c]) => c);
  const legend = h("p", { class: "legend" }, counts.map(([t, c]) => h("span", { class: `key-${t.toLowerCase()}` }, h("i", {}), `${t.toLowerCase()} ${c}`)));
  const find = h("input", { type: "search", id: "graph-search", placeholder: "find an entity" });
  const hits = h("ul", { class: "hits" });
  const findForm = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      if (!find.value.trim()) return;
      try {
        const res = await call("graph_search", { query: find.value, limit: 10 });
        const ids = new Set(res.entities.map((e) => e.id));
        for (const n of nodes) n.el.classList.toggle("match", ids.has(n.id));
        hits.replaceChildren(...res.entities.map((e) => h("li", {}, h("button", { type: "button", class: "link", onclick: () => byId.get(e.id) && choose(byId.get(e.id)) }, e.name), h("span", { class: "muted small" }, ` ${e.type.toLowerCase()}`))));
        if (!res.entities.length) hits.replaceChildren(h("li", { class: "muted" }, "no match"));
      } catch (err) { flash(err.message, "error"); }
    },
  }, find);
  const ask = h("input", { type: "search", id: "graph-ask", placeholder: "ask, e.g. who owns billing?" });
  const answer = h("div", { class: "answer", id: "graph-answer" });
  const askForm = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      if (!ask.value.trim()) return;
      try {
        const res = await call("graph_query", { question: ask.value });
        answer.replaceChildren(h("p", {}, res.answer), h("p", { class: "muted small" }, `confidence ${res.confidence} · ${res.method}`),
          h("p", { class: "small" }, (res.sourceMemoryIds || []).map((k) => [link(memoryHref(k), h("code", {}, k.slice(0, 8))), " "])));
      } catch (err) { flash(err.message, "error"); }
    },
  }, ask);
  panel.append(h("p", { class: "muted" }, "Click an entity to see its relations and the memories it comes from; drag to move it."));
  root.append(
    legend,
    h("p", { class: "muted small" }, `${g.shown} of ${g.total} entities, ${edges.length} relations.`),
    h("div", { class: "graph-wrap" },
      h("div", { class: "graph-box panel" }, svg),
      h("div", { class: "graph-tools" }, findForm, hits, askForm, answer, panel)));
}

async function showEntity(panel, node, selectId) {
  panel.replaceChildren(h("h2", { id: "entity-name" }, node.name), h("p", {}, badge(node.type, "type"), node.authored ? " · stated by an agent" : ""),
    node.description ? h("p", { class: "small" }, node.description) : null);
  try {
    const [paths, ...memories] = await Promise.all([
      call("graph_traverse", { entity: node.id, hops: 1 }),
      ...node.sourceMemoryIds.slice(0, 8).map((key) => call("memory_show", { key }).catch(() => null)),
    ]);
    panel.append(h("h3", {}, `Relations (${paths.total})`),
      paths.total ? h("ul", { class: "relations", id: "entity-relations" }, paths.paths.map((p) => h("li", {},
        p.direction === "outgoing" ? `${node.name} ` : "",
        p.direction === "incoming" ? [h("button", { type: "button", class: "link", onclick: () => selectId(p.entity.id) }, p.entity.name), " "] : "",
        h("span", { class: "rel" }, p.relationship),
        p.direction === "outgoing" ? [" ", h("button", { type: "button", class: "link", onclick: () => selectId(p.entity.id) }, p.entity.name)] : ` ${node.name}`,
        p.authored ? h("span", { class: "muted small" }, " (agent)") : ""))) : h("p", { class: "muted" }, "none"));
    panel.append(h("h3", {}, `Source memories (${node.sourceMemoryIds.length})`),
      h("ul", { class: "sources", id: "entity-sources" }, memories.filter(Boolean).map((res) => h("li", {},
        link(memoryHref(res.memory.key), res.memory.introduction), " ", shortKey(res.memory.key)))));
  } catch (err) {
    panel.append(errorBox(err));
  }
}

// -- figures --------------------------------------------------------------------------------

function barChart(rows, labels, W) {
  // rows: [label, current, previous]; two bars a row, the previous window in grey.
  const left = 110, row = 30, top = 28;
  const max = Math.max(1, ...rows.flatMap((x) => [x[1], x[2]]));
  const scale = (v) => ((W - left - 50) * v) / max;
  const svg = s("svg", { viewBox: `0 0 ${W} ${top + rows.length * row + 6}`, class: "chart", role: "img" });
  svg.append(
    s("rect", { x: left, y: 6, width: 10, height: 10, class: "bar now" }), s("text", { x: left + 14, y: 15, class: "tick" }, labels[0]),
    s("rect", { x: left + 130, y: 6, width: 10, height: 10, class: "bar before" }), s("text", { x: left + 144, y: 15, class: "tick" }, labels[1]));
  rows.forEach(([label, now, before], i) => {
    const y = top + i * row;
    svg.append(
      s("text", { x: left - 8, y: y + 15, class: "label", "text-anchor": "end" }, label),
      s("rect", { x: left, y: y + 2, width: Math.max(scale(now), now ? 2 : 0), height: 11, class: "bar now" }, s("title", {}, `${label}: ${now}`)),
      s("text", { x: left + scale(now) + 5, y: y + 12, class: "value" }, String(now)),
      s("rect", { x: left, y: y + 14, width: Math.max(scale(before), before ? 2 : 0), height: 9, class: "bar before" }, s("title", {}, `${label}, window before: ${before}`)),
      s("text", { x: left + scale(before) + 5, y: y + 23, class: "value muted" }, String(before)));
  });
  return svg;
}

function delta(now, before) {
  if (now === before) return h("span", { class: "muted small" }, "same as before");
  const up = now > before;
  return h("span", { class: `small ${up ? "up" : "down"}` }, `${up ? "▲" : "▼"} ${Math.abs(now - before)} vs ${before} before`);
}

async function figuresPage(root, r) {
  const days = Number(r.params.get("days")) || 30;
  const [st, who] = await Promise.all([call("memory_stats", { days }), call("memory_entities", {})]);
  root.dataset.title = "Figures";
  const prev = st.comparisonPeriod;
  const pick = select("days", [["7", "last 7 days"], ["30", "last 30 days"], ["90", "last 90 days"], ["365", "last year"]], String(days), {
    onchange: (ev) => go("figures", new URLSearchParams({ days: ev.target.value })),
  });
  const card = (label, value, extra) => h("div", { class: "card" }, h("div", { class: "muted small" }, label), h("div", { class: "figure" }, String(value)), extra || null);
  const t = st.totals;
  const cards = h("div", { class: "cards", id: "totals" },
    card("stored", t.stored), card("open", t.open), card("closed", t.closed), card("forgotten", t.forgotten), card("expired", t.expired),
    card("searches", st.searches, delta(st.searches, prev.searches)),
    card("tokens (est.)", st.tokens, delta(st.tokens, prev.tokens)));
  const names = Object.keys(st.memories);
  const labels = [`last ${days} days`, `the ${days} days before`];
  const events = barChart(names.map((k) => [k, st.memories[k], prev.memories[k]]), labels, 620);
  events.id = "chart-memories";
  const feedback = barChart(Object.keys(st.feedback).map((k) => [k.toLowerCase(), st.feedback[k], prev.feedback[k]]), labels, 420);
  const people = who.entities.length ? h("table", { class: "list" },
    h("thead", {}, h("tr", {}, ["", "Who", "Open memories", "Stored", "Last activity"].map((x) => h("th", {}, x)))),
    h("tbody", {}, who.entities.map((e) => {
      const id = e.userId || e.agentId;
      const filter = new URLSearchParams({ [e.kind === "user" ? "user_id" : "agent_id"]: id, status: "all" });
      return h("tr", {}, h("td", {}, badge(e.kind)), h("td", {}, link(`#/memories?${filter}`, id)), h("td", {}, String(e.memoryCount)), h("td", {}, String(e.storedCount)), h("td", {}, time(e.lastActivityAt)));
    }))) : h("p", { class: "empty" }, "No memory names a user or an agent.");
  root.append(
    h("div", { class: "page-head" }, h("h1", {}, "Figures"), pick),
    h("p", { class: "muted" }, `From ${when(st.from)} to ${when(st.to)}, compared with the ${days} days before.`),
    cards,
    h("div", { class: "charts" },
      h("section", { class: "panel" }, h("h2", {}, "Memory events"), events),
      h("section", { class: "panel" }, h("h2", {}, "Feedback"), feedback)),
    h("section", {}, h("h2", {}, "Users and agents"), people),
    h("p", { class: "muted small" }, Object.entries(st.methods).map(([k, v]) => `${k}: ${v}. `)));
}

// -- user facts (only when asked, only on this machine) -------------------------------------

async function toggleFacts() {
  const box = document.getElementById("facts");
  if (!box.hidden) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  try {
    const res = await call("memory_facts", {});
    box.replaceChildren(
      h("div", { class: "page-head" }, h("h2", {}, "User facts"), h("button", { type: "button", class: "ghost", onclick: toggleFacts }, "Hide")),
      h("p", { class: "muted small" }, `Kept in your own data directory, never in the workspace (${res.bytes} of ${res.max_bytes} bytes).`),
      h("pre", { class: "body", id: "facts-body" }, JSON.stringify(res.facts, null, 2)));
    box.hidden = false;
  } catch (err) {
    flash(err.message, "error");
  }
}

// -- start ----------------------------------------------------------------------------------

const PAGES = {
  memories: memoriesPage,
  search: searchPage,
  memory: memoryPage,
  knowledge: knowledgePage,
  graph: graphPage,
  figures: figuresPage,
};

async function start() {
  try {
    INFO = await post("/api/info", {});
  } catch (err) {
    view.replaceChildren(errorBox(err));
    return;
  }
  const ws = document.getElementById("workspace");
  ws.textContent = (INFO.workspace || "").split(/[\\/]/).filter(Boolean).slice(-2).join("/");
  ws.title = `workspace: ${INFO.workspace || ""}`;
  const facts = document.getElementById("facts-button");
  if (INFO.facts) {
    facts.hidden = false;
    facts.addEventListener("click", toggleFacts);
  }
  window.addEventListener("hashchange", render);
  await render();
}

start();

// nxs dashboard: one page over the operation table (POST /api/call/<tool>) and the dashboard's
// own views (POST /api/view/<name>). This module routes, refreshes when the store changes
// under the page, and holds the small pages; the others have a module each.
import { badge, call, errorBox, flash, go, h, link, memoryHref, post, route, select, staleBadge, state, view } from "./dom.js";
import { figuresPage, sessionPage } from "./figures.js";
import { graphPage } from "./graph.js";
import { markdown } from "./md.js";
import { memoriesPage } from "./memories.js";
import { memoryPage } from "./memory.js";

const main = document.getElementById("view");
const POLL_MS = 2000;

// -- search ---------------------------------------------------------------------------------

const RESULT_SORTS = [["score", "score"], ["updated", "updated"], ["created", "created"], ["priority", "priority"]];
const RANK = { HIGH: 0, MEDIUM: 1, LOW: 2 };

async function searchPage(root, r) {
  const p = r.params;
  const q = p.get("q") || "";
  const mode = p.get("mode") || "hybrid";
  const limit = p.get("limit") || "10";
  const sort = p.get("sort") || "score";
  root.dataset.title = q ? `Search: ${q}` : "Search";
  const input = h("input", { type: "search", name: "q", id: "search-input", value: q, placeholder: "what do you want to find?", autofocus: true, "aria-label": "search" });
  const modes = (state.info.tools.memory_search.params.find((x) => x.name === "mode") || {}).choices || [];
  const form = h("form", {
    class: "searchbar", id: "search-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      const data = new FormData(form);
      go("search", new URLSearchParams({ q: input.value, mode: data.get("mode"), limit: data.get("limit"), sort: data.get("sort") }));
    },
  },
  input,
  h("span", { class: "modes", role: "radiogroup", "aria-label": "mode" }, modes.map((m) => h("label", { class: "mode" },
    h("input", { type: "radio", name: "mode", value: m, checked: m === mode }), m))),
  select("limit", [["5", "5"], ["10", "10"], ["20", "20"]], limit, { "aria-label": "results" }),
  select("sort", RESULT_SORTS, sort, { id: "search-sort", "aria-label": "sort by", onchange: () => form.requestSubmit() }),
  h("button", { type: "submit" }, "Search"));
  root.append(h("h1", {}, "Search"), form);
  if (!q.trim()) {
    root.append(h("p", { class: "muted" }, "Hybrid mixes meaning and words; semantic is meaning only; keyword is exact words."));
    return;
  }
  const found = await call("memory_search", { query: q, mode, limit: Number(limit), status: "all" });
  const results = [...found.results];
  if (sort === "priority") results.sort((a, b) => RANK[a.priority] - RANK[b.priority] || b.score - a.score);
  else if (sort !== "score") results.sort((a, b) => (b[sort] || "").localeCompare(a[sort] || ""));
  const list = h("ol", { class: "results", id: "search-results" }, results.map((m) => h("li", { dataset: { key: m.key } },
    h("div", { class: "result-head" }, link(memoryHref(m.key), m.introduction), " ", badge(m.status), " ", staleBadge(m.stale)),
    m.snippet ? h("p", { class: "snippet" }, m.snippet) : null,
    h("div", { class: "muted small" }, h("code", { class: "key" }, m.key.slice(0, 8)), " · ", m.category || "uncategorised",
      ` · score ${m.score.toFixed(4)}`,
      m.semantic !== null && m.semantic !== undefined ? ` · meaning ${m.semantic.toFixed(3)}` : "",
      m.keyword !== null && m.keyword !== undefined ? ` · words ${m.keyword.toFixed(3)}` : ""))));
  root.append(h("p", { class: "muted" }, `${found.results.length} of ${found.total} (${found.mode})`),
    found.results.length ? list : h("p", { class: "empty" }, "Nothing found."));
}

// -- knowledge ------------------------------------------------------------------------------

async function knowledgePage(root, r) {
  const category = r.params.get("category") || "";
  const [all, doc] = await Promise.all([
    call("memory_knowledge", {}),
    category ? call("memory_knowledge", { category }) : null,
  ]);
  const shown = doc || all;
  root.dataset.title = "Knowledge";
  const pick = select("category", [["", "all categories"], ...all.categories.map((c) => [c, c])], category, {
    onchange: (ev) => go("knowledge", ev.target.value ? new URLSearchParams({ category: ev.target.value }) : null), "aria-label": "category",
  });
  root.append(
    h("div", { class: "page-head" }, h("h1", {}, "Knowledge"), pick),
    h("p", { class: "muted" }, `The open memories by category and subject, near-duplicates merged: ${shown.total} entries from ${shown.memories} memories.`),
    h("article", { class: "panel", id: "knowledge-doc" }, shown.content.trim() ? markdown(shown.content) : h("p", { class: "empty" }, "No open memories yet.")));
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

// -- routing --------------------------------------------------------------------------------

const PAGES = {
  memories: memoriesPage,
  search: searchPage,
  memory: memoryPage,
  knowledge: knowledgePage,
  graph: graphPage,
  figures: figuresPage,
  session: sessionPage,
};

let rendering = 0;

async function render(opts) {
  const r = route();
  const page = PAGES[r.page] ? r.page : "memories";
  const mine = ++rendering;
  for (const a of document.querySelectorAll("#nav a")) {
    const on = a.dataset.page === page || (page === "memory" && a.dataset.page === "memories");
    a.classList.toggle("active", on);
    if (on) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  main.setAttribute("aria-busy", "true");
  const root = h("div", { class: `page page-${page}` });
  try {
    await PAGES[page](root, r);
  } catch (err) {
    root.replaceChildren(errorBox(err));
  }
  if (mine !== rendering) return; // a later navigation won
  if (opts && opts.live && busy()) { // someone started typing meanwhile: keep their page
    document.getElementById("stale").hidden = false;
    main.setAttribute("aria-busy", "false");
    return;
  }
  const keep = opts && opts.keepScroll ? window.scrollY : null;
  main.replaceChildren(root);
  main.dataset.page = page;
  main.dataset.dirty = "";
  main.setAttribute("aria-busy", "false");
  document.title = `${root.dataset.title || page} · nxs`;
  document.getElementById("stale").hidden = true;
  if (keep !== null) window.scrollTo(0, keep);
  else if (root.querySelector("[autofocus]")) root.querySelector("[autofocus]").focus();
  await poll(false); // what this page shows is the store as it is now
}
state.render = render;

// -- live refresh ---------------------------------------------------------------------------

// The page asks for the store's generation every few seconds (while it is visible). When
// another process changed the store, a page nobody is typing into is drawn again in place;
// otherwise a notice offers to.
function busy() {
  const active = document.activeElement;
  const typing = active && main.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
  const open = main.querySelector("form.edit-form:not([hidden]), form.add-form:not([hidden]), .confirm:not([hidden]), details[open] form");
  return typing || open || main.dataset.dirty === "1" || main.dataset.page === "graph";
}

let polling = false;
async function poll(react) {
  if (polling) return;
  polling = true;
  try {
    const got = await view("generation", {});
    const changed = state.seen !== null && got.generation !== state.seen;
    state.seen = got.generation;
    if (changed && react) {
      if (busy()) document.getElementById("stale").hidden = false;
      else await render({ keepScroll: true, live: true });
    }
  } catch (_) {
    // the server is gone or restarting: try again at the next tick
  } finally {
    polling = false;
  }
}

// -- keyboard -------------------------------------------------------------------------------

function shortcuts(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const target = ev.target;
  if (/^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) || target.isContentEditable) return;
  if (ev.key === "/") {
    const box = main.querySelector("input[type=search]");
    ev.preventDefault();
    if (box) box.focus();
    else go("search");
  } else if (ev.key === "n" && main.dataset.page === "memories") {
    ev.preventDefault();
    document.getElementById("add-open").click();
  } else if (ev.key === "?") {
    flash("Keys: / search · n new memory · Tab and Enter everywhere · Escape closes a form · in the graph: arrows, + − 0", "ok");
  }
}

// -- start ----------------------------------------------------------------------------------

async function start() {
  try {
    state.info = await post("/api/info", {});
  } catch (err) {
    main.replaceChildren(errorBox(err));
    return;
  }
  const ws = document.getElementById("workspace");
  ws.textContent = (state.info.workspace || "").split(/[\\/]/).filter(Boolean).slice(-2).join("/");
  ws.title = `workspace: ${state.info.workspace || ""}`;
  const facts = document.getElementById("facts-button");
  if (state.info.facts) {
    facts.hidden = false;
    facts.addEventListener("click", toggleFacts);
  }
  document.getElementById("stale-reload").addEventListener("click", () => render({ keepScroll: true }));
  main.addEventListener("input", () => { main.dataset.dirty = "1"; });
  document.addEventListener("keydown", shortcuts);
  window.addEventListener("hashchange", () => render());
  await render();
  setInterval(() => { if (document.visibilityState === "visible") poll(true); }, POLL_MS);
}

start();

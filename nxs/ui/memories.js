// The memory list: filters, sorting, bulk actions over a selection, export, and adding one.
import {
  act, badge, call, staleBadge, clearRefusal, download, field, flash, go, h, link, memoryHref, opts,
  plural, select, shortKey, showRefusal, state, time, view,
} from "./dom.js";

const LIST_FILTERS = ["status", "category", "scope", "priority", "layer", "user_id", "agent_id", "ref"];
const SORTS = [["reading", "reading order"], ["updated", "updated"], ["created", "created"], ["priority", "priority"]];

// The selection outlives a page: key -> status (so purge can say how many it will delete).
const selected = new Map();

function filtersOf(p) {
  const args = {};
  for (const f of LIST_FILTERS) if (p.get(f)) args[f] = p.get(f);
  return args;
}

export async function memoriesPage(root, r) {
  const p = r.params;
  const sort = p.get("sort") || "reading";
  const order = p.get("order") || "desc";
  const filters = filtersOf(p);
  const args = { ...filters, page: Number(p.get("page")) || 1, page_size: Number(p.get("page_size")) || 20 };
  const [list, who] = await Promise.all([
    sort === "reading" ? call("memory_list", args) : view("list", { ...args, sort, order }),
    call("memory_entities", {}),
  ]);
  root.dataset.title = "Memories";
  for (const m of list.memories) if (selected.has(m.key)) selected.set(m.key, m.status);

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
  const users = who.entities.filter((e) => e.kind === "user").map((e) => [e.userId, `${e.userId} (${e.memoryCount})`]);
  const agents = who.entities.filter((e) => e.kind === "agent").map((e) => [e.agentId, `${e.agentId} (${e.memoryCount})`]);
  const onchange = (ev) => apply({ [ev.target.name]: ev.target.value });
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
  field("Sort", h("span", { class: "sort" },
    select("sort", SORTS, sort, { onchange, id: "sort" }),
    h("button", {
      type: "button", class: "ghost", id: "sort-order", disabled: sort === "reading",
      title: order === "desc" ? "newest or highest first" : "oldest or lowest first",
      "aria-label": order === "desc" ? "descending" : "ascending",
      onclick: () => apply({ order: order === "desc" ? "asc" : "desc", sort }),
    }, order === "desc" ? "↓" : "↑"))),
  h("button", { type: "submit" }, "Apply"),
  h("a", { href: "#/memories", class: "muted" }, "clear"),
  p.get("ref") ? h("span", { class: "chip" }, `ref: ${p.get("ref")}`) : null);

  const bar = bulkBar(list, filters, () => refresh());
  const pageBox = h("input", {
    type: "checkbox", id: "select-page", "aria-label": "select this page",
    checked: list.memories.length > 0 && list.memories.every((m) => selected.has(m.key)),
    indeterminate: list.memories.some((m) => selected.has(m.key)) && !list.memories.every((m) => selected.has(m.key)),
    onchange: (ev) => {
      for (const m of list.memories) {
        if (ev.target.checked) selected.set(m.key, m.status);
        else selected.delete(m.key);
      }
      refresh();
    },
  });
  const rows = list.memories.map((m) => h("tr", { dataset: { key: m.key }, class: selected.has(m.key) ? "chosen" : null },
    h("td", { class: "pick" }, h("input", {
      type: "checkbox", class: "row-pick", checked: selected.has(m.key), "aria-label": `select ${m.introduction}`,
      onchange: (ev) => { if (ev.target.checked) selected.set(m.key, m.status); else selected.delete(m.key); refresh(); },
    })),
    h("td", { class: "c-key" }, shortKey(m.key)),
    h("td", { class: "intro" }, link(memoryHref(m.key), m.introduction), staleBadge(m.stale)),
    h("td", { class: "c-category" }, m.category || h("span", { class: "muted" }, "—")),
    h("td", { class: "c-scope" }, m.scope),
    h("td", { class: "c-priority" }, badge(m.priority)),
    h("td", { class: "c-layer" }, m.layer === "TASK" ? badge("TASK", "task") : "permanent"),
    h("td", { class: "c-status" }, badge(m.status)),
    h("td", { class: "nowrap c-when" }, time(sort === "created" ? m.created : m.updated))));
  const heads = [["", "pick"], ["Key", "c-key"], ["Introduction", "intro"], ["Category", "c-category"], ["Scope", "c-scope"],
    ["Priority", "c-priority"], ["Layer", "c-layer"], ["Status", "c-status"], [sort === "created" ? "Created" : "Updated", "c-when"]];
  // A change of selection redraws only the checkboxes and the bar, not the page.
  const refresh = () => {
    const on = list.memories.filter((m) => selected.has(m.key)).length;
    pageBox.checked = on > 0 && on === list.memories.length;
    pageBox.indeterminate = on > 0 && on < list.memories.length;
    for (const tr of rows) {
      const chosen = selected.has(tr.dataset.key);
      tr.classList.toggle("chosen", chosen);
      tr.querySelector(".row-pick").checked = chosen;
    }
    bar.update();
  };
  const table = list.memories.length
    ? h("div", { class: "table-wrap" }, h("table", { class: "list", id: "memory-table" },
      h("thead", {}, h("tr", {}, heads.map(([t, c]) => h("th", { class: c, scope: "col" }, c === "pick" ? pageBox : t)))),
      h("tbody", {}, rows)))
    : await emptyList(list, Object.keys(filters).length > 0);

  const page = list.page;
  const pages = Math.max(list.total_pages, 1);
  const pager = h("nav", { class: "pager", id: "pager", "aria-label": "pages" },
    h("button", { type: "button", disabled: page <= 1, onclick: () => apply({ page: String(page - 1) }) }, "‹ Previous"),
    h("span", { class: "muted" }, `Page ${page} of ${pages} · ${list.total} ${list.total === 1 ? "memory" : "memories"}`),
    h("button", { type: "button", disabled: page >= pages, onclick: () => apply({ page: String(page + 1) }) }, "Next ›"),
    select("page_size", [["10", "10 a page"], ["20", "20 a page"], ["50", "50 a page"], ["100", "100 a page"]], String(list.page_size), { onchange, "aria-label": "page size" }));

  const adder = addForm();
  const head = h("div", { class: "page-head" }, h("h1", {}, "Memories"),
    h("span", { class: "head-actions" },
      h("button", { type: "button", id: "export", class: "ghost", title: "the memories this filter matches, as `nxm export` writes them",
        onclick: () => exportFilter(filters) }, "Export JSONL"),
      h("button", { type: "button", id: "add-open", "aria-expanded": "false", "aria-controls": "add-form",
        onclick: (ev) => { adder.hidden = !adder.hidden; ev.target.setAttribute("aria-expanded", String(!adder.hidden)); if (!adder.hidden) adder.querySelector("textarea").focus(); } }, "+ Add memory")));
  root.append(head, adder, form, bar, table, ...(list.total ? [pager] : []));
}

// What an empty page says: a store with nothing yet invites a first memory (or an agent to
// keep them); a filter that matches nothing, or a page past the end, offers the way back.
async function emptyList(list, filtered) {
  const box = (...parts) => h("div", { class: "empty", id: "empty-list" }, ...parts);
  if (list.total) return box(`Page ${list.page} is past the end. `, link("#/memories", "Back to page 1"));
  if (filtered) return box("No memories match these filters. ", link("#/memories", "Clear the filters"));
  if ((await call("memory_list", { status: "all", page_size: 1 })).total) {
    return box("No open memories. ", link("#/memories?status=all", "Show the closed and forgotten ones"));
  }
  return box(h("p", {}, h("strong", {}, "No memories yet."), " A memory is one durable fact about this project — a convention, a decision and its reason, a gotcha, who owns what — kept in ",
    h("code", {}, ".nxs/"), " and shared through git."),
  h("p", {}, h("button", { type: "button", id: "add-first", onclick: () => document.getElementById("add-open").click() }, "+ Add the first memory"),
    " or let your coding agent keep them: ", h("code", {}, "nxs mcp install --host claude-code"), " (or cursor, vscode, …)."));
}

async function exportFilter(filters) {
  try {
    const got = await view("export", filters);
    download(got.filename, got.jsonl, "application/x-ndjson");
    flash(`Exported ${plural(got.count, "memory", "memories")} to ${got.filename}.`, "ok");
  } catch (err) {
    flash(err.message, "error");
  }
}

// -- bulk -----------------------------------------------------------------------------------

const BULK = {
  close: ["memory_close", "Closed"],
  reopen: ["memory_reopen", "Reopened"],
  forget: ["memory_forget", "Forgot"],
  restore: ["memory_restore", "Restored"],
};

// One call per memory, in turn; what was refused is counted with the first reason.
async function runBulk(tool, keys, extra, label, status) {
  let done = 0, same = 0;
  const refused = [];
  for (const [n, key] of keys.entries()) {
    if (status) status.textContent = `${label} ${n + 1} of ${keys.length}…`;
    try {
      const got = await call(tool, { key, ...extra });
      done += 1;
      if (got.memory) selected.set(key, got.memory.status);
      else selected.delete(key); // purged
    } catch (err) {
      if (err.data && err.data.code === "NO_CHANGE") same += 1;
      else refused.push(err.message);
    }
  }
  const parts = [`${label} ${plural(done, "memory", "memories")}.`];
  if (same) parts.push(`${same} already so.`);
  if (refused.length) parts.push(`${refused.length} refused: ${refused[0]}`);
  flash(parts.join(" "), refused.length ? "error" : "ok");
  await state.render();
}

function bulkBar(list, filters, refresh) {
  const status = h("span", { class: "muted small", id: "bulk-status", "aria-live": "polite" });
  const keys = () => [...selected.keys()];
  const b = (label, id, onclick, cls) => h("button", { type: "button", id, class: cls || "ghost", onclick }, label);
  const all = b(`Select all ${list.total} matching`, "select-all", async () => {
    try {
      const got = await view("select", filters);
      for (const m of got.memories) selected.set(m.key, m.status);
      refresh();
    } catch (err) { flash(err.message, "error"); }
  }, "link");
  const category = h("input", { name: "category", id: "bulk-category", placeholder: "category", size: 12, "aria-label": "category for the selection" });
  const scope = select("scope", [["", "scope: keep"], ...opts("memory_classify", "scope")], "", { id: "bulk-scope", "aria-label": "scope for the selection" });
  const classify = h("form", {
    class: "bulk-classify", id: "bulk-classify",
    onsubmit: (ev) => {
      ev.preventDefault();
      const extra = {};
      if (category.value.trim()) extra.category = category.value.trim();
      if (scope.value) extra.scope = scope.value;
      if (!Object.keys(extra).length) { flash("Name a category or a scope to file them under.", "error"); return; }
      runBulk("memory_classify", keys(), extra, "Classified", status);
    },
  }, category, scope, h("button", { type: "submit", class: "ghost", id: "bulk-classify-go" }, "Classify"));
  const confirm = purgeConfirm(status);
  const count = h("strong", { id: "bulk-count" });
  const bar = h("div", { class: "bulk", id: "bulk", role: "region", "aria-label": "bulk actions" },
    count, all,
    ...Object.entries(BULK).map(([name, [tool, label]]) => b(name[0].toUpperCase() + name.slice(1), `bulk-${name}`, () => runBulk(tool, keys(), {}, label, status))),
    classify,
    b("Purge…", "bulk-purge", () => confirm.open(), "ghost warn"),
    b("Clear", "bulk-clear", () => { selected.clear(); refresh(); }, "link"),
    status, confirm.box);
  bar.update = () => {
    bar.hidden = selected.size === 0;
    count.textContent = `${selected.size} selected`;
    all.hidden = selected.size >= list.total;
    if (!selected.size) confirm.box.hidden = true;
  };
  bar.update();
  return bar;
}

// Purging many is one decision: the box says how many will go, and wants that number typed.
function purgeConfirm(status) {
  const input = h("input", { id: "bulk-purge-input", autocomplete: "off", size: 6, inputmode: "numeric", "aria-label": "number of memories to purge" });
  const yes = h("button", { type: "button", class: "danger", id: "bulk-purge-confirm", disabled: true });
  const text = h("p", { id: "bulk-purge-text" });
  const box = h("div", { class: "confirm", id: "bulk-purge-box", hidden: true, role: "alertdialog", "aria-labelledby": "bulk-purge-text" },
    text, input, " ", yes, " ", h("button", { type: "button", class: "ghost", id: "bulk-purge-cancel", onclick: () => { box.hidden = true; } }, "Cancel"));
  let doomed = [];
  input.addEventListener("input", () => { yes.disabled = input.value.trim() !== String(doomed.length); });
  box.addEventListener("keydown", (ev) => { if (ev.key === "Escape") box.hidden = true; });
  yes.addEventListener("click", () => { box.hidden = true; runBulk("memory_purge", doomed, {}, "Purged", status); });
  return {
    box,
    open() {
      doomed = [...selected].filter(([, st]) => st === "forgotten").map(([k]) => k);
      const others = selected.size - doomed.length;
      const rest = others ? ` ${plural(others, "selected memory is", "selected memories are")} not forgotten and will be left alone (forget them first).` : "";
      if (!doomed.length) {
        flash(`None of the ${selected.size} selected is forgotten: only forgotten memories can be purged.`, "error");
        return;
      }
      text.replaceChildren(`Purge ${plural(doomed.length, "forgotten memory", "forgotten memories")} for good? `,
        "Their files and history are deleted; this cannot be undone.", rest, " Type ", h("code", {}, String(doomed.length)), " to confirm.");
      yes.textContent = `Purge ${plural(doomed.length, "memory", "memories")}`;
      yes.disabled = true;
      input.value = "";
      box.hidden = false;
      input.focus();
    },
  };
}

// -- adding ---------------------------------------------------------------------------------

function addForm() {
  const body = h("textarea", { name: "body", id: "add-body", rows: 6, placeholder: "The full content: self-contained, specific. Markdown is fine." });
  const intro = h("input", { name: "introduction", id: "add-introduction", maxlength: 200, placeholder: "One line: the point itself, not its topic" });
  const count = h("span", { class: "muted small counter" }, "0 / 200");
  intro.addEventListener("input", () => { count.textContent = `${intro.value.length} / 200`; });
  const category = h("input", { name: "category", id: "add-category", placeholder: "e.g. conventions" });
  const scope = select("scope", opts("memory_add", "scope"), "project", { id: "add-scope" });
  const refs = h("input", { name: "refs", id: "add-refs", placeholder: "comma-separated: NC-103, src/app.py" });
  const priority = select("priority", opts("memory_add", "priority"), "MEDIUM", { id: "add-priority" });
  const layer = select("layer", opts("memory_add", "layer"), "PERMANENT", { id: "add-layer" });
  const ttl = h("input", { name: "ttl_days", id: "add-ttl", type: "number", min: "0.001", step: "any", placeholder: "default", size: 6 });
  const ttlField = field("Days it lives", ttl);
  ttlField.hidden = true;
  layer.addEventListener("change", () => { ttlField.hidden = layer.value !== "TASK"; });
  const user = h("input", { name: "user_id", id: "add-user", placeholder: "optional" });
  const agent = h("input", { name: "agent_id", id: "add-agent", placeholder: "optional" });
  const form = h("form", {
    class: "panel add-form edit-grid", id: "add-form", hidden: true, novalidate: true,
    onsubmit: async (ev) => {
      ev.preventDefault();
      const args = { body: body.value, introduction: intro.value, scope: scope.value, priority: priority.value, layer: layer.value };
      if (category.value.trim()) args.category = category.value.trim();
      const list = refs.value.split(",").map((x) => x.trim()).filter(Boolean);
      if (list.length) args.refs = list;
      if (layer.value === "TASK" && ttl.value !== "") args.ttl_days = Number(ttl.value);
      if (user.value.trim()) args.user_id = user.value.trim();
      if (agent.value.trim()) args.agent_id = agent.value.trim();
      clearRefusal(form);
      try {
        const got = await call("memory_add", args);
        form.reset();
        // The CLI's similar-memory note, with its advice one click away (the re-add links them).
        const near = got.created && got.similar && got.similar[0];
        if (near) {
          const key = near.key.slice(0, 8);
          const what = near.kind === "duplicate" ? "looks like" : "is about the same thing as";
          flash(`Added. It ${what} ${key}: “${near.introduction}”.`, "ok",
            { label: `It replaces ${key}`, run: () => act("memory_add", { ...args, supersedes: near.key }, `${key} is closed, replaced by this one.`) });
        } else flash(got.created ? "Added." : "That body is already stored: here it is.", "ok");
        go(`memory/${encodeURIComponent(got.memory.key)}`);
      } catch (err) {
        showRefusal(form, err);
      }
    },
  },
  h("h2", { class: "wide" }, "Add a memory"),
  field("Body", body, "wide"),
  h("label", { class: "field wide" }, h("span", {}, "Introduction ", count), intro),
  field("Category", category), field("Scope", scope), field("Refs", refs, "wide"),
  field("Priority", priority), field("Layer", layer), ttlField,
  field("User", user), field("Agent", agent),
  h("div", { class: "wide form-buttons" }, h("button", { type: "submit", id: "add-submit" }, "Add memory"), " ",
    h("button", { type: "button", class: "ghost", onclick: () => { form.hidden = true; } }, "Cancel")));
  form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") form.hidden = true; });
  return form;
}

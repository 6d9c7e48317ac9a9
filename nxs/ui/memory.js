// One memory: its body (Markdown, drawn safely), classification, actions, edits and history.
import {
  act, badge, call, staleBadge, clearRefusal, field, flash, go, h, link, opts, select, showRefusal, state, time,
} from "./dom.js";
import { diffView, markdown, refLink } from "./md.js";

const detail = (label, ...value) => [h("dt", {}, label), h("dd", {}, ...value)];
const TEXT_FIELDS = ["body", "introduction"];

// What each event changed. `data.before` (the previous values, which the core may record)
// gives a diff; the value after is the next change's `before`, or the memory as it is now.
function eventDetails(events, m) {
  const after = new Map();
  const later = {}; // field -> its value just after the event being looked at (walking back)
  for (const f of ["body", "introduction", "category", "scope", "refs", "priority"]) later[f] = m[f];
  for (const ev of [...events].sort((a, b) => b.n - a.n)) {
    const before = ev.data && ev.data.before;
    if (before && typeof before === "object") {
      after.set(ev.n, { ...later });
      for (const [f, v] of Object.entries(before)) later[f] = v;
    }
  }
  return (ev) => {
    const d = ev.data || {};
    const out = [];
    const bits = [];
    if (d.from !== undefined && d.to !== undefined) bits.push(`${d.from} → ${d.to}`);
    if (d.signal) bits.push(d.signal);
    if (d.comment) bits.push(`“${d.comment}”`);
    const before = d.before && typeof d.before === "object" ? d.before : null;
    if (d.fields && !before) bits.push(`changed ${d.fields.join(", ")}`);
    for (const [k, v] of Object.entries(d)) {
      if (k === "commit" && typeof v === "string") bits.push(`at commit ${v.slice(0, 10)}`);
      else if (!["from", "to", "fields", "signal", "comment", "before", "after"].includes(k)) bits.push(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
    }
    if (bits.length) out.push(h("div", { class: "small" }, bits.join(" · ")));
    if (before) {
      const now = { ...(after.get(ev.n) || {}), ...(d.after && typeof d.after === "object" ? d.after : {}) };
      for (const [f, old] of Object.entries(before)) {
        const shown = (v) => (Array.isArray(v) ? v.join(", ") : v === null || v === undefined ? "none" : String(v));
        if (TEXT_FIELDS.includes(f) && typeof old === "string" && typeof now[f] === "string") {
          out.push(h("details", { class: "change", open: true, dataset: { field: f } }, h("summary", {}, `${f} changed`), diffView(old, now[f])));
        } else {
          out.push(h("div", { class: "small change", dataset: { field: f } }, `${f}: `, h("del", {}, shown(old)), " → ", h("ins", {}, shown(now[f]))));
        }
      }
    }
    return out;
  };
}

function purgeBox(key) {
  const word = key.slice(0, 6);
  const input = h("input", { id: "purge-input", autocomplete: "off", placeholder: word, size: 10, "aria-label": "the key's first six characters" });
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
  const box = h("div", { class: "confirm", id: "purge-box", hidden: true, role: "alertdialog", "aria-label": "confirm purge" },
    h("p", {}, "Purging deletes this memory and its history for good; it cannot be restored. Type ",
      h("code", {}, word), " to confirm."),
    input, " ", yes, " ",
    h("button", { type: "button", class: "ghost", onclick: () => { box.hidden = true; } }, "Cancel"));
  box.addEventListener("keydown", (ev) => { if (ev.key === "Escape") box.hidden = true; });
  return box;
}

// Body, introduction and priority: `memory_update`, one call, all of it or nothing.
function editForm(m, shown) {
  const intro = h("input", { name: "introduction", id: "edit-introduction", value: m.introduction, maxlength: 200 });
  const body = h("textarea", { name: "body", id: "edit-body", rows: Math.min(Math.max(m.body.split("\n").length + 2, 6), 24) });
  body.value = m.body;
  const priority = select("priority", opts("memory_update", "priority"), m.priority, { id: "edit-priority" });
  const form = h("form", {
    class: "panel edit-form", id: "edit-form", hidden: true, novalidate: true,
    onsubmit: async (ev) => {
      ev.preventDefault();
      const args = { key: m.key, introduction: intro.value };
      if (body.value !== m.body) args.body = body.value;
      if (priority.value !== m.priority) args.priority = priority.value;
      clearRefusal(form);
      try {
        await call("memory_update", args);
        flash("Saved.", "ok");
        await state.render();
      } catch (err) {
        showRefusal(form, err);
      }
    },
  },
  field("Introduction", intro, "wide"),
  field("Body (Markdown)", body, "wide"),
  field("Priority", priority),
  h("div", { class: "form-buttons" }, h("button", { type: "submit", id: "edit-save" }, "Save"), " ",
    h("button", { type: "button", class: "ghost", id: "edit-cancel", onclick: () => { form.hidden = true; shown.hidden = false; } }, "Cancel")));
  form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { form.hidden = true; shown.hidden = false; } });
  return form;
}

// Category, scope and refs: `memory_classify`.
function classifyForm(m) {
  const category = h("input", { name: "category", id: "classify-category", value: m.category || "" });
  const scope = select("scope", opts("memory_classify", "scope"), m.scope, { id: "classify-scope" });
  const refs = h("textarea", { name: "refs", id: "classify-refs", rows: 3, placeholder: "one per line" });
  refs.value = (m.refs || []).join("\n");
  const form = h("form", {
    class: "classify", id: "classify-form", novalidate: true,
    onsubmit: async (ev) => {
      ev.preventDefault();
      const args = { key: m.key };
      const newRefs = refs.value.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
      if (category.value.trim() !== (m.category || "")) args.category = category.value.trim();
      if (scope.value !== m.scope) args.scope = scope.value;
      if (JSON.stringify(newRefs) !== JSON.stringify(m.refs || [])) args.refs = newRefs;
      clearRefusal(form);
      try {
        await call("memory_classify", args);
        flash("Classified.", "ok");
        await state.render();
      } catch (err) {
        showRefusal(form, err);
      }
    },
  },
  field("Category", category),
  field("Scope", scope),
  field("Refs", refs, "wide"),
  h("button", { type: "submit", id: "classify-save" }, "Save classification"));
  return h("details", { class: "panel", id: "classify-panel" }, h("summary", {}, "Classify…"), form);
}

function actions(m, edit, shown) {
  const key = m.key;
  const b = (label, id, onclick, cls) => h("button", { type: "button", id, class: cls || "", onclick }, label);
  const row = h("div", { class: "actions", id: "actions" });
  row.append(b("Edit", "act-edit", () => { edit.hidden = false; shown.hidden = true; edit.querySelector("textarea").focus(); }, "ghost"));
  if (m.status === "open") row.append(b("Close", "act-close", () => act("memory_close", { key }, "Closed.", { label: "Reopen", run: () => act("memory_reopen", { key }, "Reopened.") }), "ghost"));
  if (m.status === "closed") row.append(b("Reopen", "act-reopen", () => act("memory_reopen", { key }, "Reopened.")));
  if (m.status !== "forgotten") row.append(b("Forget", "act-forget", () => act("memory_forget", { key }, "Forgotten.", { label: "Restore", run: () => act("memory_restore", { key }, "Restored.") }), "ghost warn"));
  if (m.status === "forgotten") row.append(b("Restore", "act-restore", () => act("memory_restore", { key }, "Restored.")));
  if (m.layer === "TASK") row.append(b("Promote to permanent", "act-promote", () => act("memory_promote", { key }, "Promoted: it no longer expires.")));
  const box = purgeBox(key);
  if (m.status === "forgotten") row.append(b("Purge…", "act-purge", () => { box.hidden = false; box.querySelector("input").focus(); }, "danger"));
  const comment = h("input", { id: "feedback-comment", placeholder: "comment (optional)", size: 22, "aria-label": "feedback comment" });
  const fb = (signal, label) => b(label, `fb-${signal.toLowerCase()}`, () => {
    const args = { key, signal };
    if (comment.value.trim()) args.comment = comment.value.trim();
    act("memory_feedback", args, `Feedback recorded: ${signal}.`);
  }, "ghost");
  const feedback = h("div", { class: "feedback" }, h("span", { class: "muted" }, "Was it useful?"),
    fb("POSITIVE", "▲ Useful"), fb("NEUTRAL", "Neutral"), fb("NEGATIVE", "▼ Not useful"), comment);
  return [row, box, feedback];
}

// Why the memory may be stale: each ref's change and the commits that moved the code, with the
// two ways to clear it: confirm (still true) or edit.
function staleBox(key, verdict) {
  return h("div", { class: "stale-box panel", id: "memory-stale" },
    h("p", {}, staleBadge(verdict.reason), ` The code it names changed since commit ${verdict.since}.`),
    h("ul", {}, verdict.changes.map((c) => h("li", {}, h("code", {}, c.ref), ": ", c.reason,
      h("ul", { class: "commits" }, c.commits.map((x) => h("li", { class: "small" },
        h("code", {}, x.commit.slice(0, 8)), " ", x.subject, " ", h("span", { class: "muted" }, time(x.date)))))))),
    h("button", { type: "button", id: "act-confirm", onclick: () => act("memory_confirm", { key }, "Confirmed: still true of the code.") },
      "Still true: confirm"));
}

export async function memoryPage(root, r) {
  const key = r.arg;
  let shownMemory, history;
  try {
    [shownMemory, history] = await Promise.all([call("memory_show", { key }), call("memory_history", { key, limit: 1000 })]);
  } catch (err) {
    if (err.data?.kind !== "not_found") throw err;
    root.dataset.title = "Not found";
    root.append(h("h1", {}, "Memory not found"), h("div", { class: "empty", id: "not-found" },
      h("p", {}, err.data.message, ": it was purged, or the link has a wrong key."),
      link("#/memories", "← Back to the memories"), " · ", link("#/search", "Search")));
    return;
  }
  const m = shownMemory.memory;
  root.dataset.title = m.introduction;
  const stale = shownMemory.stale ? staleBox(m.key, shownMemory.stale) : null;
  const fb = m.feedback || {};
  const refs = (m.refs || []).length ? h("ul", { class: "refs", id: "memory-refs" }, m.refs.map((x) => h("li", {}, refLink(x)))) : h("span", { class: "muted" }, "none");
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
  for (const k of other) if (m[k]) dl.append(...detail(k.replace(/_/g, " "), k === "artifact_url" ? refLink(m[k]) : m[k]));
  if (m.metadata && Object.keys(m.metadata).length) dl.append(...detail("Metadata", h("code", {}, JSON.stringify(m.metadata))));

  const explain = eventDetails(history.events, m);
  // An event an edit came after can be returned to: `memory_revert` with `to` (= `nxm revert --to`).
  const edits = history.events.filter((ev) => ["UPDATED", "CLASSIFIED", "REVERTED"].includes(ev.type) && ev.data && (ev.data.fields || []).length);
  const lastEdit = Math.max(0, ...edits.map((ev) => ev.n));
  const revertTo = (ev) => (ev.n < lastEdit ? h("button", {
    type: "button", class: "link small revert", dataset: { to: ev.n },
    title: "put the body, introduction, priority and classification back as they were after this event",
    onclick: () => act("memory_revert", { key: m.key, to: ev.n }, `Reverted to event ${ev.n}.`),
  }, "Revert to here") : null);
  const timeline = h("ol", { class: "timeline", id: "history" }, history.events.map((ev) => h("li", { dataset: { type: ev.type, n: ev.n } },
    h("div", {}, h("span", { class: "muted" }, `#${ev.n} `), badge(ev.type, "event"), " ", time(ev.at), h("span", { class: "muted" }, ` by ${ev.actor}`), " ", revertTo(ev)),
    explain(ev))));

  // The body as Markdown by default; its source a click away (and what the tests read).
  const rendered = markdown(m.body, { id: "memory-rendered" });
  const source = h("pre", { class: "body", id: "memory-body", hidden: true }, m.body);
  const toggle = h("button", {
    type: "button", class: "link small", id: "body-source", "aria-pressed": "false",
    onclick: () => {
      source.hidden = !source.hidden;
      rendered.hidden = !source.hidden;
      toggle.setAttribute("aria-pressed", String(!source.hidden));
      toggle.textContent = source.hidden ? "show source" : "show rendered";
    },
  }, "show source");
  const shown = h("div", { class: "body-box panel" }, rendered, source);
  const edit = editForm(m, shown);
  root.append(
    h("p", { class: "crumbs" }, link("#/memories", "Memories"), " / ", h("code", {}, m.key.slice(0, 8))),
    h("h1", { id: "memory-title" }, m.introduction),
    ...actions(m, edit, shown), stale,
    h("div", { class: "columns" },
      h("section", { class: "main-col" },
        h("div", { class: "page-head" }, h("h2", {}, "Body"), toggle), shown, edit,
        h("h2", {}, `History (${history.total})`), timeline),
      h("aside", { class: "side-col" }, h("h2", {}, "Classification"), dl, classifyForm(m))));
}

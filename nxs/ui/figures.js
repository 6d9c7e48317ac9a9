// Figures (totals, events over time, who did what) and what a session sees. Charts are SVG
// drawn here: no chart library, nothing fetched from elsewhere.
import { badge, call, go, h, link, plural, s, select, time, view, when } from "./dom.js";

const GROUP_LABELS = { created: "created", edited: "edited", closed: "closed or forgotten", restored: "reopened or restored", feedback: "feedback" };

function barChart(rows, labels, W) {
  // rows: [label, current, previous]; two bars a row, the previous window in grey.
  const left = 110, row = 30, top = 28;
  const max = Math.max(1, ...rows.flatMap((x) => [x[1], x[2]]));
  const scale = (v) => ((W - left - 50) * v) / max;
  const svg = s("svg", { viewBox: `0 0 ${W} ${top + rows.length * row + 6}`, class: "chart", role: "img", "aria-label": `${labels[0]} against ${labels[1]}` });
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

// Round numbers for an axis from 0 to at least `max`.
function ticks(max) {
  const step0 = Math.max(1, max / 4);
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= step0);
  const out = [];
  for (let v = 0; out.length < 2 || out[out.length - 1] < max; v += step) out.push(Math.round(v));
  return out;
}

const day = (iso, long) => new Date(iso).toLocaleDateString(undefined, long ? { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" } : { month: "short", day: "numeric", timeZone: "UTC" });

// Time on x, one bucket a column: stacked bars (events) or lines (memories), with a legend.
function timeChart({ id, buckets, bucketDays, series, kind, label }) {
  const W = 560, H = 210, left = 36, right = 10, top = 26, bottom = 30;
  const n = buckets.length;
  const cw = (W - left - right) / n;
  const totals = buckets.map((_, i) => (kind === "bars" ? series.reduce((a, x) => a + x.values[i], 0) : Math.max(...series.map((x) => x.values[i]))));
  const axis = ticks(Math.max(1, ...totals));
  const top0 = axis[axis.length - 1];
  const y = (v) => H - bottom - ((H - top - bottom) * v) / top0;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart time", id, role: "img", "aria-label": label });
  for (const v of axis) {
    svg.append(s("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }),
      s("text", { x: left - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, String(v)));
  }
  const every = Math.max(1, Math.ceil(n / 7));
  buckets.forEach((b, i) => {
    if (i % every === 0 || (i === n - 1 && i % every > every / 2)) svg.append(s("text", { x: left + cw * (i + 0.5), y: H - bottom + 16, class: "tick", "text-anchor": "middle" }, day(b)));
  });
  const span = (i) => (bucketDays === 1 ? day(buckets[i], true) : `week of ${day(buckets[i], true)}`);
  if (kind === "bars") {
    buckets.forEach((_, i) => {
      let base = 0;
      const x = left + cw * i + cw * 0.12;
      for (const [k, sr] of series.entries()) {
        const v = sr.values[i];
        if (!v) continue;
        svg.append(s("rect", { x: x.toFixed(1), y: y(base + v).toFixed(1), width: Math.max(cw * 0.76, 1).toFixed(1), height: (y(base) - y(base + v)).toFixed(1), class: `bar s${k}`, dataset: { bucket: i, series: sr.name } },
          s("title", {}, `${span(i)}: ${v} ${sr.label}`)));
        base += v;
      }
    });
  } else {
    for (const [k, sr] of series.entries()) {
      const pts = sr.values.map((v, i) => `${(left + cw * (i + 0.5)).toFixed(1)},${y(v).toFixed(1)}`);
      svg.append(s("polyline", { points: pts.join(" "), class: `line s${k}`, dataset: { series: sr.name } }));
      sr.values.forEach((v, i) => svg.append(s("circle", { cx: left + cw * (i + 0.5), cy: y(v), r: n > 60 ? 1.5 : 2.5, class: `dot s${k}` }, s("title", {}, `${span(i)}: ${v} ${sr.label}`))));
    }
  }
  let lx = left;
  for (const [k, sr] of series.entries()) {
    svg.append(s("rect", { x: lx, y: 6, width: 10, height: 10, class: `swatch s${k}` }), s("text", { x: lx + 14, y: 15, class: "tick" }, sr.label));
    lx += 24 + sr.label.length * 6;
  }
  return svg;
}

function sparkline(values) {
  const W = 120, H = 22, max = Math.max(1, ...values);
  const pts = values.map((v, i) => `${((W * (i + 0.5)) / values.length).toFixed(1)},${(H - 2 - ((H - 4) * v) / max).toFixed(1)}`);
  return s("svg", { viewBox: `0 0 ${W} ${H}`, class: "spark", "aria-hidden": "true" }, s("polyline", { points: pts.join(" ") }));
}

function delta(now, before) {
  if (now === before) return h("span", { class: "muted small" }, "same as before");
  const up = now > before;
  return h("span", { class: `small ${up ? "up" : "down"}` }, `${up ? "▲" : "▼"} ${Math.abs(now - before)} ${up ? "more" : "fewer"} than the ${before} before`);
}

function whoTable(id, title, rows, total, filterField) {
  if (!rows.length) return h("section", { class: "panel who", id }, h("h2", {}, title), h("p", { class: "muted small" }, "nobody in these memories"));
  return h("section", { class: "panel who", id }, h("h2", {}, title),
    h("div", { class: "table-wrap" }, h("table", { class: "list compact" },
      h("thead", {}, h("tr", {}, ["Who", "Events", "Created", "Memories", "Over time", "Last"].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows.map((r) => h("tr", { dataset: { name: r.name } },
        h("td", {}, filterField ? link(`#/memories?${new URLSearchParams({ [filterField]: r.name, status: "all" })}`, r.name) : r.name),
        h("td", {}, String(r.events)), h("td", {}, String(r.created)), h("td", {}, String(r.memories)),
        h("td", {}, sparkline(r.series)), h("td", { class: "nowrap" }, h("time", { datetime: r.last, title: when(r.last) }, day(r.last, true)))))))),
    total > rows.length ? h("p", { class: "muted small" }, `the ${rows.length} most active of ${total}`) : null);
}

export async function figuresPage(root, r) {
  const days = Number(r.params.get("days")) || 30;
  const [st, act, who] = await Promise.all([call("memory_stats", { days }), view("activity", { days }), call("memory_entities", {})]);
  root.dataset.title = "Figures";
  const prev = st.comparisonPeriod;
  const pick = select("days", [["7", "last 7 days"], ["30", "last 30 days"], ["90", "last 90 days"], ["365", "last year"]], String(days), {
    onchange: (ev) => go("figures", new URLSearchParams({ days: ev.target.value })), "aria-label": "window",
  });
  const card = (label, value, extra) => h("div", { class: "card" }, h("div", { class: "muted small" }, label), h("div", { class: "figure" }, String(value)), extra || null);
  const t = st.totals;
  const cards = h("div", { class: "cards", id: "totals" },
    card("stored", t.stored), card("open", t.open), card("closed", t.closed), card("forgotten", t.forgotten), card("expired", t.expired),
    card("searches", st.searches, delta(st.searches, prev.searches)),
    card("tokens (est.)", st.tokens, delta(st.tokens, prev.tokens)));
  const growth = timeChart({
    id: "chart-growth", buckets: act.buckets, bucketDays: act.bucketDays, kind: "lines", label: "memories stored and open over time",
    series: [{ name: "stored", label: "stored", values: act.stored }, { name: "open", label: "open", values: act.open }],
  });
  const activity = timeChart({
    id: "chart-events", buckets: act.buckets, bucketDays: act.bucketDays, kind: "bars", label: "memory events over time",
    series: Object.keys(GROUP_LABELS).filter((name) => act.events[name]).map((name) => ({ name, label: GROUP_LABELS[name], values: act.events[name] })),
  });
  const names = Object.keys(st.memories);
  const labels = [`last ${days} days`, `the ${days} days before`];
  const events = barChart(names.map((k) => [k, st.memories[k], prev.memories[k]]), labels, 620);
  events.id = "chart-memories";
  const feedback = barChart(Object.keys(st.feedback).map((k) => [k.toLowerCase(), st.feedback[k], prev.feedback[k]]), labels, 420);
  const people = who.entities.length ? h("div", { class: "table-wrap" }, h("table", { class: "list" },
    h("thead", {}, h("tr", {}, ["", "Who", "Open memories", "Stored", "Last activity"].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, who.entities.map((e) => {
      const id = e.userId || e.agentId;
      const filter = new URLSearchParams({ [e.kind === "user" ? "user_id" : "agent_id"]: id, status: "all" });
      return h("tr", {}, h("td", {}, badge(e.kind)), h("td", {}, link(`#/memories?${filter}`, id)), h("td", {}, String(e.memoryCount)), h("td", {}, String(e.storedCount)), h("td", {}, time(e.lastActivityAt)));
    })))) : h("p", { class: "empty" }, "No memory names a user or an agent.");
  const unit = act.bucketDays === 1 ? "day" : "week";
  root.append(
    h("div", { class: "page-head" }, h("h1", {}, "Figures"), pick),
    h("p", { class: "muted" }, `From ${when(st.from)} to ${when(st.to)}, compared with the ${days} days before.`),
    cards,
    h("div", { class: "charts wide-first" },
      h("section", { class: "panel" }, h("h2", {}, "Memories over time"), growth),
      h("section", { class: "panel" }, h("h2", {}, `Events by ${unit}`), activity)),
    h("div", { class: "charts" },
      h("section", { class: "panel" }, h("h2", {}, "Memory events"), events),
      h("section", { class: "panel" }, h("h2", {}, "Feedback"), feedback)),
    h("h2", {}, "Who did what"),
    h("p", { class: "muted small" }, "Events in the window by the actor that recorded them, and by the agent, program tool and user the memories name; ", act.method, "."),
    h("div", { class: "who-grid" },
      whoTable("by-actor", "Actors", act.actors, act.actorsTotal, null),
      whoTable("by-agent", "Agents", act.agents, act.agentsTotal, "agent_id"),
      whoTable("by-tool", "Program tools", act.tools, act.toolsTotal, null),
      whoTable("by-user", "Users", act.users, act.usersTotal, "user_id")),
    h("section", {}, h("h2", {}, "Users and agents"), people),
    h("p", { class: "muted small" }, Object.entries(st.methods).map(([k, v]) => `${k}: ${v}. `)));
}

// -- what a session sees --------------------------------------------------------------------

const kb = (n) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`);

export async function sessionPage(root) {
  const got = await view("session", {});
  root.dataset.title = "Session";
  const total = got.instructionsBytes + got.toolsBytes;
  const max = Math.max(...got.tools.map((t) => t.bytes), 1);
  const rows = got.tools.map((t) => h("tr", { dataset: { tool: t.name } },
    h("td", {}, h("code", {}, t.name)), h("td", {}, t.group), h("td", {}, t.writes ? "writes" : "reads"),
    h("td", { class: "num" }, String(t.bytes)),
    h("td", { class: "bar-cell" }, h("span", { class: "hbar", dataset: { w: Math.round((100 * t.bytes) / max) } })),
    h("td", { class: "desc" }, t.description)));
  const table = h("div", { class: "table-wrap" }, h("table", { class: "list", id: "session-tools" },
    h("thead", {}, h("tr", {}, ["Tool", "Group", "", "Bytes", "", "Description"].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows)));
  for (const bar of table.querySelectorAll(".hbar")) bar.style.width = `${bar.dataset.w}%`; // CSSOM, allowed by the policy
  root.append(
    h("h1", {}, "What a session sees"),
    h("p", { class: "muted" }, "An MCP session started in this workspace receives these instructions at initialize (or, in Claude Code with the nxs hook installed, the same text from its SessionStart hook, the instructions then only pointing to it), then this tool list; both sit in the model's context before any work begins."),
    h("div", { class: "cards", id: "session-sizes" },
      h("div", { class: "card" }, h("div", { class: "muted small" }, "instructions"), h("div", { class: "figure", id: "prime-bytes" }, kb(got.instructionsBytes)), h("div", { class: "muted small" }, `${got.instructionsBytes} bytes · ~${Math.ceil(got.instructionsBytes / 4)} tokens`)),
      h("div", { class: "card" }, h("div", { class: "muted small" }, `tools/list (${plural(got.tools.length, "tool")})`), h("div", { class: "figure", id: "tools-bytes" }, kb(got.toolsBytes)), h("div", { class: "muted small" }, `${got.toolsBytes} bytes · ~${Math.ceil(got.toolsBytes / 4)} tokens`)),
      h("div", { class: "card" }, h("div", { class: "muted small" }, "together"), h("div", { class: "figure" }, kb(total)), h("div", { class: "muted small" }, `groups: ${got.groups.join(", ") || "none"}`))),
    h("h2", {}, "Instructions"),
    h("pre", { class: "body prime", id: "prime-text" }, got.instructions),
    h("h2", {}, "Tools"),
    table);
}

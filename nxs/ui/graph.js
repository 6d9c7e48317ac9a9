// The entity graph: a deterministic force layout drawn in SVG, with pan and zoom, type
// filters, search, labels that never overlap, and the neighbourhood of a chosen entity.
import { badge, call, errorBox, flash, h, link, memoryHref, s, shortKey, view } from "./dom.js";

const TYPES = ["PERSON", "ORGANIZATION", "PLACE", "THING"];
const VW = 900, VH = 600; // the picture's own units (it scales to its box)
const FONT = 12;

// Fruchterman-Reingold from a spiral: deterministic, so the same graph draws the same way.
// Repulsion reaches 2.5k at most, so a grid of that size finds every pair that pushes.
export function layout(nodes, edges, width, height) {
  const n = nodes.length;
  const k = Math.sqrt((width * height) / Math.max(n, 1)) * 0.8;
  nodes.forEach((node, i) => {
    const a = 2.399963 * i; // the golden angle spreads any count evenly
    const r = Math.sqrt((i + 0.5) / Math.max(n, 1));
    node.x = width / 2 + (width / 2.6) * r * Math.cos(a);
    node.y = height / 2 + (height / 2.6) * r * Math.sin(a);
  });
  const reach = 2.5 * k;
  let temp = width / 8;
  const steps = n > 150 ? 220 : 300;
  for (let step = 0; step < steps; step++) {
    const grid = new Map();
    nodes.forEach((v, i) => {
      v.dx = 0; v.dy = 0; v.i = i;
      const cell = Math.floor(v.x / reach) * 4096 + Math.floor(v.y / reach);
      if (!grid.has(cell)) grid.set(cell, []);
      grid.get(cell).push(v);
    });
    for (const a of nodes) {
      const cx = Math.floor(a.x / reach), cy = Math.floor(a.y / reach);
      for (let gx = cx - 1; gx <= cx + 1; gx++) {
        for (let gy = cy - 1; gy <= cy + 1; gy++) {
          const near = grid.get(gx * 4096 + gy);
          if (!near) continue;
          for (const b of near) {
            if (b.i <= a.i) continue;
            let dx = a.x - b.x, dy = a.y - b.y;
            const d = Math.max(Math.hypot(dx, dy), 0.01);
            if (d > reach) continue; // far apart: no push, so gravity can gather the islands
            const f = (k * k) / d;
            dx = (dx / d) * f; dy = (dy / d) * f;
            a.dx += dx; a.dy += dy; b.dx -= dx; b.dy -= dy;
          }
        }
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

// Rings around the chosen entity: its neighbours, then theirs, each near the one it came from.
function rings(centre, hop) {
  const pos = new Map([[centre, { x: 0, y: 0 }]]);
  const byHop = [[centre]];
  for (const [node, d] of hop) if (d > 0) (byHop[d] = byHop[d] || []).push(node);
  for (let d = 1; d < byHop.length; d++) {
    const ring = byHop[d] || [];
    const angle = (node) => {
      if (d === 1) return 0;
      const parent = [...node.near].find((p) => hop.get(p) === d - 1);
      return parent && pos.get(parent) ? Math.atan2(pos.get(parent).y, pos.get(parent).x) : 0;
    };
    ring.sort((a, b) => angle(a) - angle(b) || b.weight - a.weight || a.name.localeCompare(b.name));
    const radius = Math.max(150 * d, (ring.length * 26) / (2 * Math.PI));
    ring.forEach((node, i) => {
      const a = (2 * Math.PI * i) / ring.length - Math.PI / 2;
      pos.set(node, { x: radius * Math.cos(a), y: radius * Math.sin(a) });
    });
  }
  return pos;
}

const laidOut = { shape: null, at: null };
let measure = null;
function textWidth(text) {
  if (!measure) {
    measure = document.createElement("canvas").getContext("2d");
    measure.font = `${FONT}px ${getComputedStyle(document.body).fontFamily}`;
  }
  return measure.measureText(text).width;
}

export async function graphPage(root) {
  const g = await view("graph", {});
  root.dataset.title = "Graph";
  root.append(h("h1", {}, "Entity graph"));
  if (!g.entities.length) {
    root.append(h("p", { class: "empty" }, "No entities yet: they are extracted from open memories, or added with `nxm graph add`."));
    return;
  }
  const nodes = g.entities.map((e) => ({ ...e, near: new Set(), weight: e.sourceMemoryIds.length + e.relationCount }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = g.relations.map((rel) => ({ rel, a: byId.get(rel.source.id), b: byId.get(rel.target.id) })).filter((e) => e.a && e.b);
  for (const e of edges) { e.a.near.add(e.b); e.b.near.add(e.a); }
  // The same graph lays out the same way, so coming back to the page reuses the last layout.
  const shape = `${nodes.map((n) => n.id).join(",")}|${edges.map((e) => e.rel.id).join(",")}`;
  if (laidOut.shape !== shape) {
    const W = Math.max(VW, Math.sqrt(nodes.length * 9000 * 1.5)), H = (W * VH) / VW;
    layout(nodes, edges, W, H);
    laidOut.shape = shape;
    laidOut.at = new Map(nodes.map((n) => [n.id, { x: n.x, y: n.y }]));
  }
  for (const n of nodes) { n.home = { ...laidOut.at.get(n.id) }; n.labelW = textWidth(n.name) + 6; }

  const st = { k: 1, tx: 0, ty: 0, selected: null, focus: null, hops: 1, query: "", off: new Set() };
  const svg = s("svg", { viewBox: `0 0 ${VW} ${VH}`, class: "graph", id: "graph-svg", role: "application", tabindex: "0",
    "aria-label": "entity graph: drag to pan, wheel or + and − to zoom, arrows to move, 0 to fit, Escape to go back" },
  s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" },
    s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  const back = s("rect", { x: 0, y: 0, width: VW, height: VH, class: "graph-bg" });
  const edgeLayer = s("g", { class: "edges" });
  const nodeLayer = s("g", { class: "nodes" });
  svg.append(back, edgeLayer, nodeLayer);
  const radius = (n) => Math.min(5 + 2 * Math.sqrt(n.weight), 16) * Math.min(1.4, Math.max(0.6, Math.sqrt(st.k)));

  for (const e of edges) {
    e.line = s("line", { class: e.rel.authored ? "edge authored" : "edge", "marker-end": "url(#arrow)" }, s("title", {}, `${e.a.name} ${e.rel.relation} ${e.b.name}`));
    e.label = s("text", { class: "edge-label" }, e.rel.relation);
    edgeLayer.append(e.line, e.label);
  }
  for (const n of nodes) {
    n.circle = s("circle", {});
    n.text = s("text", {}, n.name);
    n.el = s("g", { class: `node t-${n.type.toLowerCase()}`, dataset: { id: n.id, name: n.name, type: n.type } }, n.circle, n.text, s("title", {}, `${n.name} (${n.type.toLowerCase()})`));
    nodeLayer.append(n.el);
  }

  const drawn = () => nodes.filter((n) => n.el.dataset.drawn === "1");
  const visible = (n) => !st.off.has(n.type) && (!st.focus || st.hopOf.has(n));
  const matches = (n) => st.query && n.name.toLowerCase().includes(st.query);

  // Labels in order of importance, each kept only where it overlaps none already placed.
  const placeLabels = (shown) => {
    const near = st.selected ? st.selected.near : new Set();
    const rank = (n) => (n === st.selected ? 0 : near.has(n) ? 1 : matches(n) ? 2 : 3);
    const order = [...shown].sort((a, b) => rank(a) - rank(b) || b.weight - a.weight || a.name.localeCompare(b.name));
    const cell = 60, grid = new Map();
    const boxes = (x0, y0, x1, y1, f) => {
      for (let gx = Math.floor(x0 / cell); gx <= Math.floor(x1 / cell); gx++) for (let gy = Math.floor(y0 / cell); gy <= Math.floor(y1 / cell); gy++) f(`${gx},${gy}`);
    };
    const put = (box) => boxes(...box, (key) => { if (!grid.has(key)) grid.set(key, []); grid.get(key).push(box); });
    for (const n of shown) { const r = radius(n); put([n.sx - r, n.sy - r, n.sx + r, n.sy + r]); } // no label on a dot
    for (const n of order) {
      const r = radius(n);
      const x0 = n.sx - n.labelW / 2, x1 = n.sx + n.labelW / 2, y0 = n.sy + r + 1, y1 = n.sy + r + FONT + 5;
      let clash = x1 < 0 || x0 > VW || y1 < 0 || y0 > VH;
      if (!clash) boxes(x0, y0, x1, y1, (key) => {
        for (const b of grid.get(key) || []) if (x0 < b[2] && b[0] < x1 && y0 < b[3] && b[1] < y1) clash = true;
      });
      n.text.classList.toggle("hidden-label", clash);
      if (!clash) put([x0, y0, x1, y1]);
    }
  };

  const draw = () => {
    const shown = [];
    for (const n of nodes) {
      const on = visible(n);
      n.el.dataset.drawn = on ? "1" : "0";
      if (!on) continue;
      const p = st.focus ? st.pos.get(n) : n.home;
      n.sx = p.x * st.k + st.tx;
      n.sy = p.y * st.k + st.ty;
      const r = radius(n);
      n.el.setAttribute("transform", `translate(${n.sx.toFixed(1)},${n.sy.toFixed(1)})`);
      n.circle.setAttribute("r", r.toFixed(1));
      n.text.setAttribute("dy", (r + FONT + 1).toFixed(1));
      n.el.setAttribute("tabindex", "-1");
      n.el.classList.toggle("match", Boolean(matches(n)));
      shown.push(n);
    }
    const few = shown.length <= 60;
    svg.classList.toggle("crowded", shown.length > 80);
    for (const n of shown) if (few) n.el.setAttribute("tabindex", "0");
    for (const e of edges) {
      const on = e.a.el.dataset.drawn === "1" && e.b.el.dataset.drawn === "1";
      e.line.classList.toggle("off", !on);
      const hot = on && st.selected && (e.a === st.selected || e.b === st.selected);
      e.line.classList.toggle("hot", Boolean(hot));
      e.label.classList.toggle("off", !(on && (hot || (st.focus && shown.length <= 40))));
      if (!on) continue;
      const dx = e.b.sx - e.a.sx, dy = e.b.sy - e.a.sy;
      const d = Math.max(Math.hypot(dx, dy), 0.01);
      const ra = radius(e.a), rb = radius(e.b) + 2;
      e.line.setAttribute("x1", (e.a.sx + (dx / d) * ra).toFixed(1));
      e.line.setAttribute("y1", (e.a.sy + (dy / d) * ra).toFixed(1));
      e.line.setAttribute("x2", (e.b.sx - (dx / d) * rb).toFixed(1));
      e.line.setAttribute("y2", (e.b.sy - (dy / d) * rb).toFixed(1));
      e.label.setAttribute("x", ((e.a.sx + e.b.sx) / 2).toFixed(1));
      e.label.setAttribute("y", ((e.a.sy + e.b.sy) / 2 - 4).toFixed(1));
    }
    for (const n of nodes) {
      n.el.classList.toggle("selected", n === st.selected);
      n.el.classList.toggle("dim", Boolean(st.selected && n !== st.selected && !st.selected.near.has(n)));
    }
    placeLabels(shown);
    status.textContent = `${shown.length} of ${g.total} entities drawn${st.focus ? ` (within ${st.hops} ${st.hops === 1 ? "hop" : "hops"} of ${st.focus.name})` : ""} · zoom ${(st.k / st.fit).toFixed(1)}×`;
  };
  let frame = 0;
  const redraw = () => { if (!frame) frame = requestAnimationFrame(() => { frame = 0; draw(); }); };

  const fit = () => {
    const pts = nodes.filter(visible).map((n) => (st.focus ? st.pos.get(n) : n.home));
    if (!pts.length) return;
    const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    st.k = Math.min((VW - 120) / Math.max(x1 - x0, 1), (VH - 90) / Math.max(y1 - y0, 1), 1.6);
    st.fit = st.fit || st.k;
    st.tx = VW / 2 - ((x0 + x1) / 2) * st.k;
    st.ty = VH / 2 - ((y0 + y1) / 2) * st.k - 8;
  };
  const zoom = (factor, cx = VW / 2, cy = VH / 2) => {
    const k = Math.min(Math.max(st.k * factor, st.fit * 0.4), st.fit * 16);
    st.tx = cx - ((cx - st.tx) * k) / st.k;
    st.ty = cy - ((cy - st.ty) * k) / st.k;
    st.k = k;
    redraw();
  };
  const pan = (dx, dy) => { st.tx += dx; st.ty += dy; redraw(); };

  const panel = h("aside", { class: "graph-side", id: "entity-panel" },
    h("p", { class: "muted" }, "Click an entity to see its relations and the memories it comes from; double-click it (or press its Neighbourhood button) to draw only what surrounds it."));
  const choose = (node) => {
    st.selected = node;
    redraw();
    showEntity(panel, node, (id) => { const other = byId.get(id); if (other) (st.focus ? focusOn(other) : choose(other)); }, () => focusOn(node));
  };
  const hopSelect = h("select", { id: "graph-hops", "aria-label": "hops", onchange: () => { st.hops = Number(hopSelect.value); if (st.focus) focusOn(st.focus); } },
    h("option", { value: "1" }, "1 hop"), h("option", { value: "2" }, "2 hops"), h("option", { value: "3" }, "3 hops"));
  const focusOn = (node) => {
    const hop = new Map([[node, 0]]);
    let edge = [node];
    for (let d = 1; d <= st.hops; d++) {
      const next = [];
      for (const v of edge) for (const u of v.near) if (!hop.has(u)) { hop.set(u, d); next.push(u); }
      edge = next;
    }
    st.focus = node;
    st.hopOf = hop;
    st.pos = rings(node, hop);
    whole.hidden = false;
    fit();
    choose(node);
  };
  const whole = h("button", { type: "button", class: "ghost", id: "graph-all", hidden: true, onclick: () => { st.focus = null; whole.hidden = true; fit(); redraw(); } }, "Whole graph");

  // Pointer: drag the background to pan, drag a node to move it, click to choose, wheel to zoom.
  const point = (ev) => {
    const box = svg.getBoundingClientRect();
    return { x: ((ev.clientX - box.left) / box.width) * VW, y: ((ev.clientY - box.top) / box.height) * VH };
  };
  let drag = null;
  svg.addEventListener("pointerdown", (ev) => {
    const el = ev.target.closest("g.node");
    drag = { node: el ? byId.get(el.dataset.id) : null, start: point(ev), last: point(ev), moved: false };
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const p = point(ev);
    if (!drag.moved && Math.hypot(p.x - drag.start.x, p.y - drag.start.y) < 4) return;
    drag.moved = true;
    if (drag.node) {
      const home = st.focus ? st.pos.get(drag.node) : drag.node.home;
      home.x = (p.x - st.tx) / st.k;
      home.y = (p.y - st.ty) / st.k;
      redraw();
    } else pan(p.x - drag.last.x, p.y - drag.last.y);
    drag.last = p;
  });
  svg.addEventListener("pointerup", () => {
    const was = drag;
    drag = null;
    if (was && !was.moved) {
      if (was.node) choose(was.node);
      else if (st.selected) { st.selected = null; redraw(); }
    }
  });
  svg.addEventListener("dblclick", (ev) => { const el = ev.target.closest("g.node"); if (el) focusOn(byId.get(el.dataset.id)); });
  svg.addEventListener("wheel", (ev) => { ev.preventDefault(); const p = point(ev); zoom(Math.exp(-ev.deltaY * 0.0015), p.x, p.y); }, { passive: false });
  svg.addEventListener("keydown", (ev) => {
    const node = ev.target.closest && ev.target.closest("g.node");
    if (node && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); choose(byId.get(node.dataset.id)); return; }
    const keys = { "+": () => zoom(1.25), "=": () => zoom(1.25), "-": () => zoom(0.8), 0: () => { fit(); redraw(); },
      ArrowLeft: () => pan(40, 0), ArrowRight: () => pan(-40, 0), ArrowUp: () => pan(0, 40), ArrowDown: () => pan(0, -40),
      Escape: () => { if (st.focus) whole.click(); else if (st.selected) { st.selected = null; redraw(); } } };
    if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
  });

  const counts = TYPES.map((t) => [t, nodes.filter((n) => n.type === t).length]).filter(([, c]) => c);
  const legend = h("fieldset", { class: "legend", id: "graph-types" }, h("legend", { class: "sr-only" }, "types shown"),
    counts.map(([t, c]) => h("label", { class: `key-${t.toLowerCase()}` },
      h("input", { type: "checkbox", checked: true, dataset: { type: t }, onchange: (ev) => { if (ev.target.checked) st.off.delete(t); else st.off.add(t); redraw(); } }),
      h("i", {}), `${t.toLowerCase()} ${c}`)));
  const status = h("p", { class: "muted small", id: "graph-status", "aria-live": "polite" });
  const tools = h("div", { class: "zoom" },
    h("button", { type: "button", class: "ghost", id: "zoom-in", "aria-label": "zoom in", onclick: () => zoom(1.4) }, "+"),
    h("button", { type: "button", class: "ghost", id: "zoom-out", "aria-label": "zoom out", onclick: () => zoom(1 / 1.4) }, "−"),
    h("button", { type: "button", class: "ghost", id: "zoom-fit", onclick: () => { fit(); redraw(); } }, "Fit"),
    hopSelect, whole);

  const find = h("input", { type: "search", id: "graph-search", placeholder: "find an entity", "aria-label": "find an entity", autocomplete: "off" });
  const hits = h("ul", { class: "hits", id: "graph-hits" });
  const hit = (e) => h("li", {}, h("button", { type: "button", class: "link", onclick: () => { const n = byId.get(e.id); if (n) focusOn(n); else flash(`${e.name} is not among the entities drawn.`, "error"); } }, e.name),
    h("span", { class: "muted small" }, ` ${e.type.toLowerCase()}`));
  find.addEventListener("input", () => {
    st.query = find.value.trim().toLowerCase();
    const found = st.query ? nodes.filter(matches).sort((a, b) => b.weight - a.weight).slice(0, 12) : [];
    hits.replaceChildren(...found.map(hit));
    if (st.query && !found.length) hits.replaceChildren(h("li", { class: "muted" }, "no name matches: Enter asks graph_search"));
    redraw();
  });
  const findForm = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      if (!find.value.trim()) return;
      try {
        const res = await call("graph_search", { query: find.value, limit: 12 });
        hits.replaceChildren(...res.entities.map(hit));
        if (!res.entities.length) hits.replaceChildren(h("li", { class: "muted" }, "no match"));
      } catch (err) { flash(err.message, "error"); }
    },
  }, find);
  const ask = h("input", { type: "search", id: "graph-ask", placeholder: "ask, e.g. who owns the webhooks worker?", "aria-label": "ask the graph" });
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
  fit();
  draw();
  root.append(
    h("div", { class: "graph-bar" }, legend, tools),
    status,
    h("div", { class: "graph-wrap" },
      h("div", { class: "graph-box panel" }, svg),
      h("div", { class: "graph-tools" }, findForm, hits, askForm, answer, panel)));
  if (g.shown < g.total) root.insertBefore(h("p", { class: "muted small" }, `The ${g.shown} best-supported of ${g.total} entities are drawn; search finds the rest.`), status);
}

async function showEntity(panel, node, selectId, focus) {
  panel.replaceChildren(h("h2", { id: "entity-name" }, node.name),
    h("p", {}, badge(node.type, "type"), node.authored ? " · stated by an agent" : "", " ",
      h("button", { type: "button", class: "ghost small", id: "focus-neighbourhood", onclick: focus }, "Neighbourhood")),
    ...(node.description ? [h("p", { class: "small" }, node.description)] : []));
  try {
    const [paths, ...memories] = await Promise.all([
      call("graph_traverse", { entity: node.id, hops: 1 }),
      ...node.sourceMemoryIds.slice(0, 8).map((key) => call("memory_show", { key }).catch(() => null)),
    ]);
    const other = (p) => h("button", { type: "button", class: "link", onclick: () => selectId(p.entity.id) }, p.entity.name);
    panel.append(h("h3", {}, `Relations (${paths.total})`),
      paths.total ? h("ul", { class: "relations", id: "entity-relations" }, paths.paths.map((p) => h("li", {},
        p.direction === "outgoing" ? `${node.name} ` : [other(p), " "],
        h("span", { class: "rel" }, p.relationship),
        p.direction === "outgoing" ? [" ", other(p)] : ` ${node.name}`,
        p.authored ? h("span", { class: "muted small" }, " (agent)") : ""))) : h("p", { class: "muted" }, "none"));
    panel.append(h("h3", {}, `Source memories (${node.sourceMemoryIds.length})`),
      h("ul", { class: "sources", id: "entity-sources" }, memories.filter(Boolean).map((res) => h("li", {},
        link(memoryHref(res.memory.key), res.memory.introduction), " ", shortKey(res.memory.key)))));
  } catch (err) {
    panel.append(errorBox(err));
  }
}

// The position lesson's RoPE, answered in the browser: the rotation of a pair up to position m,
// the angles of every pair around m, the score of two fixed vectors at positions n and m (and
// shifted), and one layer of the live model's queries and keys turned by RoPE.
//
// The server sends each part its data once (ui/lessons/position/sections.py): the model's θ_i, two fixed
// vectors, one layer's vectors before RoPE (packed, lib/serving/payload.py) and each head's mean score by
// distance (lib.lessons.rope.score_by_distance). Every move is worked out here with the same rules as
// lib/lessons/rope.py (frequencies, angles, apply_rope, scores, score_vs_distance); tests/js/position.test.js
// holds the two together on fixtures tests/views_fixtures.py writes from lib.
//
// The four parts share their settings through the page store ("position.settings"): the angle
// heatmap follows the m chosen in the rotation part; a share link's values reach every part once.

import {
  cellCanvas, chartBox, drawChart, el, fill, formatNumber, hoverTip, keepSettings, linkedSettings, metric, noteBox, numberBox,
  perFrame, plotlyText, radios, slider, store, unpackU16, viewBox,
} from "./common.js";

const STORE = "position.settings";

// ------------------------------------------------------------------ the maths (as lib/lessons/rope.py)

/** lib.lessons.rope.frequencies: θ_i = base^(−2i/Dh), pair 0 the fastest. */
export function frequencies(dHead, base) {
  const out = new Float64Array(dHead / 2);
  for (let i = 0; i < out.length; i++) out[i] = Math.pow(base, -(2 * i) / dHead);
  return out;
}

/** lib.lessons.rope.angles: the angle m·θ_i (radians, not reduced) of every pair at every position. */
export function angles(positions, theta) {
  return positions.map((m) => Float64Array.from(theta, (th) => m * th));
}

/** One vector [Dh] turned to position `pos`, half-split pairs (i, i + Dh/2), as lib.lessons.rope.apply_rope. */
export function rotate(x, pos, theta) {
  const h = theta.length;
  const out = new Float64Array(2 * h);
  for (let i = 0; i < h; i++) {
    const a = pos * theta[i];
    const c = Math.cos(a);
    const s = Math.sin(a);
    out[i] = x[i] * c - x[i + h] * s;
    out[i + h] = x[i + h] * c + x[i] * s;
  }
  return out;
}

/** lib.lessons.rope.apply_rope on rows [T, Dh] (flat, from `offset`) at positions 0..T−1. */
export function applyRope(flat, rows, theta, offset = 0) {
  const d = 2 * theta.length;
  const out = new Float64Array(rows * d);
  for (let t = 0; t < rows; t++) out.set(rotate(flat.subarray(offset + t * d, offset + (t + 1) * d), t, theta), t * d);
  return out;
}

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** lib.lessons.rope.scores for one query at n and one key at m: each turned to its own position, then the dot product. */
export function score(q, k, n, m, theta) {
  return dot(rotate(q, n, theta), rotate(k, m, theta));
}

/** lib.lessons.rope.score_vs_distance: the query turned by each distance, the key at position 0. */
export function scoreVsDistance(q, k, distances, theta) {
  return Float64Array.from(distances, (d) => dot(rotate(q, d, theta), k));
}

/** The angle heatmap's window: up to `width` positions around m inside the context, and
 * (m·θ_i) mod 2π for each pair (rows) and position (columns). */
export function angleWindow(theta, m, context, width) {
  const lo = Math.min(Math.max(0, m - Math.floor(width / 2)), Math.max(0, context - width));
  const hi = Math.min(lo + width, context);
  const positions = Array.from({ length: hi - lo }, (_, j) => lo + j);
  const z = Array.from(theta, (th) => positions.map((p) => (th * p) % (2 * Math.PI)));
  return { positions, z };
}

/** The settings brought into the model's range: {values, moved: [{name, asked, value}]}. The shift
 * keeps the later of n and m inside the context. */
export function clampSettings(s, limits) {
  const values = Object.assign({}, s);
  const moved = [];
  const put = (name, hi) => {
    const asked = Number(values[name]);
    const ok = Number.isFinite(asked) ? Math.round(asked) : 0;
    const value = Math.min(Math.max(ok, 0), Math.max(hi, 0));
    if (value !== asked) moved.push({ name, asked, value });
    values[name] = value;
  };
  for (const [name, hi] of Object.entries(limits)) if (name !== "shift") put(name, hi);
  if ("shift" in limits) put("shift", limits.shift - Math.max(values.n, values.k));
  if (values.which !== "q" && values.which !== "k") values.which = "q";
  return { values, moved };
}

/** Python's "%.1e": one decimal, the exponent's sign and two digits at least. */
export function sci1(x) {
  const [m, e] = x.toExponential(1).split("e");
  const n = Number(e);
  return `${m}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
}

// ------------------------------------------------------------------ shared pieces of the view

/** The settings: a share link's values (sent by the server) win once, then the page store's. */
function startSettings(data) {
  return linkedSettings("position", data.settings);
}

function publish(values) {
  keepSettings("position", values);
}

/** A copy of a layout with {name} filled in its title and axis titles. */
function filled(layout, values) {
  const out = JSON.parse(JSON.stringify(layout));
  const fix = (obj) => { if (obj && typeof obj.text === "string") obj.text = fill(obj.text, values); };
  fix(out.title);
  for (const [k, v] of Object.entries(out)) if (/^[xy]axis\d*$/.test(k) && v) fix(v.title);
  return out;
}

function plainTitle(layout) {
  const t = layout.title && layout.title.text ? layout.title.text : "";
  return t.replace(/<br\s*\/?>/g, " ").replace(/<[^>]+>/g, "");
}

/** A named chart (role figure) with its table alternative under it: `draw(spec, name)`, `table(make)`. */
function namedChart(parent, data, height) {
  const c = chartBox(parent, { tableLabel: data.labels.table, height });
  return {
    fig: c.fig,
    plot: c.plot,
    draw(spec, name) {
      c.fig.setAttribute("aria-label", name);
      return drawChart(c.plot, data.plotly, spec, data.config, data.labels.unavailable);
    },
    /** The table alternative, `make()` -> [head, rows] run when the table is open (chartBox's lazyTable). */
    table: c.table,
  };
}

const DEG = 180 / Math.PI;

// ------------------------------------------------------------------ part: the rotation

function rotationFigure(data, m, pair) {
  const L = data.labels;
  const lang = data.lang;
  const theta = data.theta;
  const n = theta.length;
  const trail = [];
  for (let p = Math.max(0, m - data.trail); p <= m; p++) trail.push(p);
  const deg = trail.map((p) => ((p * theta[pair]) * DEG) % 360);
  const fan = Array.from(theta, (th) => ((m * th) * DEG) % 360);
  const idx = Array.from({ length: n }, (_, i) => i);
  const traces = [
    { type: "scatterpolar", r: trail.map(() => 1), theta: deg, mode: "markers", name: L.trail,
      marker: { color: trail, colorscale: data.scales.blues, size: 7, cmin: trail[0] - 5, cmax: m },
      hovertext: trail.map((p) => fill(L.hover_pos, { m: formatNumber(p, lang) })), hoverinfo: "text", subplot: "polar" },
    { type: "scatterpolar", r: [0, 1], theta: [0, 0], mode: "lines", name: L.start,
      line: { color: "#999", dash: "dot" }, subplot: "polar" },
    { type: "scatterpolar", r: [0, 1], theta: [deg[deg.length - 1], deg[deg.length - 1]], mode: "lines+markers",
      name: L.now, line: { color: data.palette[3], width: 4 }, marker: { size: [0, 12] }, subplot: "polar" },
    { type: "scatterpolar", r: idx.map((i) => i + 1), theta: fan, mode: "markers", name: L.pairs,
      marker: { color: idx, colorscale: data.scales.viridis, size: idx.map((i) => (i === pair ? 16 : 8)),
                line: { color: idx.map((i) => (i === pair ? data.palette[3] : "white")), width: 2 } },
      hovertext: idx.map((i) => fill(L.hover_pair, { i: formatNumber(i, lang) })), hoverinfo: "text", subplot: "polar2" },
  ];
  const angle = m * theta[pair];
  const layout = filled(data.layout, { pair: formatNumber(pair, lang), m: formatNumber(m, lang),
    angle: formatNumber(angle, lang, 2), turns: formatNumber(angle / (2 * Math.PI), lang, 2),
    period: formatNumber(2 * Math.PI / theta[pair], lang, 1) });
  return { data: traces, layout };
}

function rotationTable(data, m, pair) {
  const L = data.labels;
  const lang = data.lang;
  const rows = Array.from(data.theta, (th, i) => {
    const a = m * th;
    return [formatNumber(i, lang) + (i === pair ? " ◀" : ""), formatNumber(th, lang), formatNumber(a % (2 * Math.PI), lang, 4),
      formatNumber(a / (2 * Math.PI), lang, 4), formatNumber(2 * Math.PI / th, lang, 1)];
  });
  return [[L.col_pair, L.col_theta, L.col_angle, L.col_turns, L.col_period], rows];
}

function buildRotation(root, box, data) {
  const L = data.labels;
  const lang = data.lang;
  const n = data.theta.length;
  const limits = { m: data.context - 1, pair: n - 1 };
  const { values, moved } = clampSettings(startSettings(data), limits);
  const controls = el(box, "div", "itt-controls");
  const fmt = (v) => formatNumber(v, lang);
  const mIn = slider(controls, { label: L.position, min: 0, max: limits.m, step: 1, value: values.m, format: fmt,
    testid: "position.m" });
  const pairIn = slider(controls, { label: L.pair, min: 0, max: limits.pair, step: 1, value: values.pair, format: fmt,
    testid: "position.pair" });
  const notes = noteBox(box);
  const names = { m: [L.clamped_position, data.context], pair: [L.clamped_pair, n] };
  notes(moved.filter((x) => names[x.name]).map((x) => fill(names[x.name][0], { asked: fmt(x.asked),
    value: fmt(x.value), limit: fmt(names[x.name][1]) })));
  const chart = namedChart(box, data, data.layout.height);
  const update = () => {
    const m = Number(mIn.value);
    const pair = Number(pairIn.value);
    publish({ m, pair });
    const spec = rotationFigure(data, m, pair);
    box.dataset.state = JSON.stringify({ m, pair });
    chart.draw(spec, plainTitle(spec.layout)).then(() => { box.dataset.drawn = box.dataset.state; });
    chart.table(() => rotationTable(data, m, pair));
  };
  const later = perFrame(update);
  for (const input of [mIn, pairIn]) input.addEventListener("input", later);
  update();
}

// ------------------------------------------------------------------ part: the angles around m

function buildAngles(root, box, data) {
  const L = data.labels;
  const lang = data.lang;
  const chart = namedChart(box, data, data.layout.height);
  const title = plainTitle(data.layout);
  const rows = Array.from(data.theta, (_, i) => i);
  let shown = null;
  let w = null;
  let drawn = null;  // the window plotly has drawn
  const update = (s) => {
    const m = Math.min(Math.max(Math.round(Number(s.m) || 0), 0), data.context - 1);
    if (m === shown) return;
    shown = m;
    const next = angleWindow(data.theta, m, data.context, data.window);
    if (!w || w.positions[0] !== next.positions[0] || w.positions.length !== next.positions.length) w = next;
    const line = [{ type: "line", x0: m, x1: m, xref: "x", y0: 0, y1: 1, yref: "y domain",
      line: { color: data.palette[3], width: 2 } }];
    // The same window: the layout plotly holds (its axes' ranges worked out) with the marker line
    // moved, so plotly moves the line only. A fresh layout has it work the heatmap's ranges out
    // again: about 20 ms a move on the course's 2-core machine, against 4.
    const same = drawn === w && chart.plot.layout;
    const layout = same ? Object.assign({}, chart.plot.layout, { shapes: line }) : filled(data.layout, {});
    if (!same) layout.shapes = line;
    const trace = same ? chart.plot.data[0] : { type: "heatmap", z: w.z, x: w.positions, y: rows,
      colorscale: data.scale, zmin: 0, zmax: 2 * Math.PI, colorbar: { title: { text: L.colorbar } },
      hovertemplate: `${L.hover}<extra></extra>` };
    box.dataset.state = JSON.stringify({ m });
    const mine = w;
    chart.draw({ data: [trace], layout }, title).then((ok) => {
      drawn = ok && w === mine ? mine : null;
      box.dataset.drawn = box.dataset.state;
    });
    // The table: every pair's angle (mod 2π) at the window's first position, at m and at its last.
    const cols = [...new Set([w.positions[0], m, w.positions[w.positions.length - 1]])];
    const at = cols.map((p) => w.positions.indexOf(p));
    chart.table(() => [[L.col_pair].concat(cols.map((p) => fill(L.col_at, { m: formatNumber(p, lang) }))),
      w.z.map((row, i) => [formatNumber(i, lang)].concat(at.map((j) => formatNumber(row[j], lang, 3))))]);
  };
  const later = perFrame(update);
  root.__ittUnsub = store().subscribe(STORE, (s) => later(s || {}));
  update(startSettings(data));
}

// ------------------------------------------------------------------ part: only the distance counts

function buildRelative(root, box, data) {
  const L = data.labels;
  const lang = data.lang;
  const theta = frequencies(data.d_head, data.rope_base); // "base" is the views' folder (ui/views/browser.py)
  const q = Float64Array.from(data.q);
  const k = Float64Array.from(data.k);
  const last = data.context - 1;
  const { values, moved } = clampSettings(startSettings(data), { n: last, k: last, shift: last });
  const controls = el(box, "div", "itt-controls");
  const nIn = numberBox(controls, { label: L.n, min: 0, max: last, step: 1, value: values.n, testid: "position.n" });
  const kIn = numberBox(controls, { label: L.k, min: 0, max: last, step: 1, value: values.k, testid: "position.k" });
  const shiftIn = numberBox(controls, { label: L.shift, min: 0, max: last - Math.max(values.n, values.k), step: 1,
    value: values.shift, testid: "position.shift" });
  const notes = noteBox(box);
  const fmt = (v) => formatNumber(v, lang);
  const limitOf = { n: L.clamped_position, k: L.clamped_position, shift: L.clamped_shift };
  const tell = (items) => notes(items.map((x) => fill(limitOf[x.name], { asked: fmt(x.asked), value: fmt(x.value),
    limit: fmt(data.context) })));
  tell(moved);
  const row = el(box, "div", "itt-metrics");
  const before = metric(row, { testid: "position.score_before" });
  const after = metric(row, { testid: "position.score_after" });
  const diff = metric(row, { label: L.score_diff, testid: "position.score_diff" });
  const distances = Array.from({ length: data.distances }, (_, i) => i);
  const same = scoreVsDistance(q, q, distances, theta);
  const different = scoreVsDistance(q, k, distances, theta);
  const chart = namedChart(box, data, data.layout.height);
  const title = plainTitle(data.layout);
  const update = () => {
    // A number typed past the context is brought back, with a notice.
    const asked = { n: nIn.value === "" ? 0 : Number(nIn.value), k: kIn.value === "" ? 0 : Number(kIn.value),
      shift: shiftIn.value === "" ? 0 : Number(shiftIn.value) };
    const { values: v, moved: out } = clampSettings(asked, { n: last, k: last, shift: last });
    tell(out);
    shiftIn.max = String(last - Math.max(v.n, v.k));
    for (const [input, name] of [[nIn, "n"], [kIn, "k"], [shiftIn, "shift"]]) {
      if (out.some((x) => x.name === name)) input.value = String(v[name]);
    }
    publish({ n: v.n, k: v.k, shift: v.shift });
    const s0 = score(q, k, v.n, v.k, theta);
    const s1 = score(q, k, v.n + v.shift, v.k + v.shift, theta);
    before.label.textContent = fill(L.score_at, { n: fmt(v.n), m: fmt(v.k) });
    after.label.textContent = fill(L.score_at, { n: fmt(v.n + v.shift), m: fmt(v.k + v.shift) });
    before.value.textContent = formatNumber(s0, lang, 4);
    after.value.textContent = formatNumber(s1, lang, 4);
    diff.value.textContent = sci1(Math.abs(s1 - s0));
    const mark = v.n - v.k;
    const layout = filled(data.layout, {});
    if (mark >= 0 && mark < distances.length) {
      layout.shapes = [{ type: "line", x0: mark, x1: mark, xref: "x", y0: 0, y1: 1, yref: "y domain",
        line: { color: data.palette[3], dash: "dash" } }];
    }
    const traces = [
      { type: "scatter", x: distances, y: Array.from(same), mode: "lines", name: L.same, line: { color: data.palette[0] } },
      { type: "scatter", x: distances, y: Array.from(different), mode: "lines", name: L.different,
        line: { color: data.palette[1] } },
    ];
    box.dataset.state = JSON.stringify({ n: v.n, k: v.k, shift: v.shift });
    chart.draw({ data: traces, layout }, title).then(() => { box.dataset.drawn = box.dataset.state; });
    // The table: the first distances one by one, then doubling, and the marked one.
    const rows = new Set();
    for (let d = 0; d < Math.min(9, distances.length); d++) rows.add(d);
    for (let d = 16; d < distances.length; d *= 2) rows.add(d);
    rows.add(distances.length - 1);
    if (mark >= 0 && mark < distances.length) rows.add(mark);
    chart.table(() => [[L.col_distance, L.same, L.different], [...rows].sort((a, b) => a - b).map((d) => [
      fmt(d) + (d === mark ? " ◀" : ""), formatNumber(same[d], lang, 4), formatNumber(different[d], lang, 4)])]);
  };
  const later = perFrame(update);
  for (const input of [nIn, kIn, shiftIn]) input.addEventListener("input", later);
  update();
}

// ------------------------------------------------------------------ part: the live model's layer

function norm(x, from, d) {
  let s = 0;
  for (let i = 0; i < d; i++) s += x[from + i] * x[from + i];
  return Math.sqrt(s);
}

/** Every head's vectors of one kind ("q": the queries, "k": the keys) before RoPE, after it and
 * the change, worked out once per head: get(w, head) -> { before, after, change, top, most }, `top`
 * the largest |value| before or after (the two panels' colour range), `most` the change's. */
function vectorsOf(data, q, k, theta) {
  const T = data.n_tokens;
  const D = data.d_head;
  const kept = new Map();
  const slot = (w, head) => (w === "q" ? head : data.kv_of_head[head]);
  return { get: (w, head) => {
    const id = `${w}${slot(w, head)}`;
    if (!kept.has(id)) {
      const src = w === "q" ? q : k;
      const offset = slot(w, head) * T * D;
      const before = src.subarray(offset, offset + T * D);
      const after = applyRope(src, T, theta, offset);
      const change = Float64Array.from(after, (v, i) => v - before[i]);
      let top = 0, most = 0;
      for (let i = 0; i < T * D; i++) {
        top = Math.max(top, Math.abs(before[i]), Math.abs(after[i]));
        most = Math.max(most, Math.abs(change[i]));
      }
      kept.set(id, { before, after, change, top: top || 1, most: most || 1 });
    }
    return kept.get(id);
  } };
}

/** One head's three panels as rows of values from 0 to 1 on their colour ranges (cellCanvas):
 * before and after on ±v.top, the change on ±v.most. */
export function heatCells(v, T, D) {
  const rows = (x, lim) => Array.from({ length: T }, (_, t) => Array.from(x.subarray(t * D, (t + 1) * D),
    (z) => (z + lim) / (2 * lim)));
  return [rows(v.before, v.top), rows(v.after, v.top), rows(v.change, v.most)];
}

/** A colour key in HTML under a chart: its name, the low end, the scale's gradient, the high end.
 * Returns set(lo, hi). A head's own range is then true at once, and no move redraws plotly's
 * colour bar (a gradient and an axis drawn again with the chart). */
function colourKey(parent, scale, name, lang, digits = 2) {
  const row = el(parent, "div", "itt-key");
  el(row, "span", "itt-key-name").textContent = name;
  const lo = el(row, "span");
  const bar = el(row, "span", "itt-key-bar");
  bar.setAttribute("aria-hidden", "true");
  bar.style.background = `linear-gradient(to right, ${scale.map(([at, c]) => `${c} ${at * 100}%`).join(", ")})`;
  const hi = el(row, "span");
  return (a, b) => { lo.textContent = formatNumber(a, lang, digits); hi.textContent = formatNumber(b, lang, digits); };
}

/**
 * The three heatmaps [T, Dh] of one head (before RoPE, after it, the change), each head on its
 * own colour range. plotly draws them once (the axes); another head is painted on a canvas over
 * each panel (common.js cellCanvas), plotly catching up once the learner pauses: plotly replots the
 * whole chart, its 64 token labels measured again, when a heatmap's values change. The chart's
 * name is an HTML heading, its colour key HTML and its hover a tooltip of the values shown, so
 * none of them waits for plotly.
 */
function heatChart(box, data, vectors) {
  const L = data.labels;
  const lang = data.lang;
  const T = data.n_tokens;
  const D = data.d_head;
  const c = chartBox(box, { tableLabel: L.table, height: data.layouts.heat.height });
  const heading = el(c.fig, "p", "itt-chart-title");
  c.fig.insertBefore(heading, c.plot);
  // Rows named by their tokens (unique names: plotly's category axis keeps their order, rows 0..T−1).
  const names = data.tokens.map(plotlyText);
  const keys = c.fig.insertBefore(el(c.fig, "div", "itt-keys"), c.plot.nextSibling);
  const keyBoth = colourKey(keys, data.scales.rdbu, `${L.heat_before}, ${L.heat_after}`, lang);
  const keyChange = colourKey(keys, data.scales.rdbu, L.heat_change, lang);
  let painters = null;
  let shown = null;  // { w, head }
  let catchUp = null;
  const replot = (w, head) => {
    const v = vectors.get(w, head);
    const layout = filled(data.layouts.heat, {});
    layout.title = { text: "" };
    const traces = [[v.before, v.top, ""], [v.after, v.top, "2"], [v.change, v.most, "3"]].map(([z, lim, sfx]) => ({
      type: "heatmap", z: Array.from({ length: T }, (_, t) => Array.from(z.subarray(t * D, (t + 1) * D))),
      y: names, colorscale: data.scales.rdbu, zmin: -lim, zmax: lim,
      showscale: false, hoverinfo: "none", xaxis: `x${sfx}`, yaxis: `y${sfx}` }));
    return drawChart(c.plot, data.plotly, { data: traces, layout }, data.config, L.unavailable).then((ok) => {
      if (!ok) return false;
      if (painters === null) {
        painters = ["", "2", "3"].map((sfx) => cellCanvas(c.fig, c.plot, data.scales.rdbu,
          { gap: 0, xaxis: `xaxis${sfx}`, yaxis: `yaxis${sfx}` }));
        if (painters.some((p) => !p)) painters = false;
        hoverTip(c.fig, c.plot, (pt) => {
          if (!shown) return null;
          const [t, d] = pt.pointIndex;
          const cur = vectors.get(shown.w, shown.head);
          const z = [cur.before, cur.after, cur.change][pt.curveNumber] || cur.before;
          return fill(L.hover, { token: data.tokens[t], d: formatNumber(d, lang), v: formatNumber(z[t * D + d], lang, 3) });
        });
      }
      return true;
    });
  };
  const paint = (w, head) => {
    const cells = heatCells(vectors.get(w, head), T, D);
    painters.forEach((p, i) => p(cells[i]));
  };
  /** Shows one head: resolves when it is on screen. */
  return (w, head, name) => {
    shown = { w, head };
    heading.textContent = name;
    c.fig.setAttribute("aria-label", name);
    clearTimeout(catchUp);
    const v = vectors.get(w, head);
    keyBoth(-v.top, v.top);
    keyChange(-v.most, v.most);
    c.table(() => [[L.col_token, L.col_norm_before, L.col_norm_after, L.col_change], data.tokens.map((tok, t) => {
      let most = 0;
      for (let i = t * D; i < (t + 1) * D; i++) most = Math.max(most, Math.abs(v.change[i]));
      return [tok, formatNumber(norm(v.before, t * D, D), lang, 3), formatNumber(norm(v.after, t * D, D), lang, 3),
        formatNumber(most, lang, 3)];
    })]);
    if (painters) {
      paint(w, head);
      catchUp = setTimeout(() => { if (shown.w === w && shown.head === head) replot(w, head); }, 1500);
      return Promise.resolve(true);
    }
    return replot(w, head).then((ok) => { if (ok && painters) paint(w, head); return ok; });
  };
}

function buildLive(root, box, data) {
  const L = data.labels;
  const lang = data.lang;
  const T = data.n_tokens;
  const D = data.d_head;
  const half = D / 2;
  const theta = Float64Array.from(data.theta);
  const vectors = vectorsOf(data, unpackU16(data.q) /* [H, T, Dh] */, unpackU16(data.k) /* [Hkv, T, Dh] */, theta);
  const withRope = unpackU16(data.with_rope); // [H, T_all]
  const without = unpackU16(data.without);
  const nAll = withRope.length / data.n_heads;
  const fmt = (v) => formatNumber(v, lang);
  const { values, moved } = clampSettings(startSettings(data), { head: data.n_heads - 1, live_pair: half - 1 });
  const controls = el(box, "div", "itt-controls");
  const headIn = slider(controls, { label: L.head, min: 0, max: data.n_heads - 1, step: 1, value: values.head,
    format: fmt, testid: "position.head" });
  const pairIn = slider(controls, { label: L.live_pair, min: 0, max: half - 1, step: 1, value: values.live_pair,
    format: fmt, testid: "position.live_pair" });
  const which = radios(controls, { label: L.which, name: `${data.key}-which`, value: values.which,
    options: [["q", L.which_q], ["k", L.which_k]], testid: "position.which" });
  const notes = noteBox(box);
  const limits = { head: [L.clamped_head, data.n_heads], live_pair: [L.clamped_pair, half] };
  notes(moved.filter((x) => limits[x.name]).map((x) => fill(limits[x.name][0], { asked: fmt(x.asked),
    value: fmt(x.value), limit: fmt(limits[x.name][1]) })));
  if (data.n_total > T) {
    const cut = el(box, "p", "itt-help");
    cut.textContent = fill(L.shown, { n: fmt(T), total: fmt(data.n_total) });
  }
  const plane = namedChart(box, data, data.layouts.plane.height);
  // The tokens' colour: their position, said by a key in HTML under the plane.
  const planeKeys = el(plane.fig, "div", "itt-keys");
  colourKey(planeKeys, data.scales.viridis, L.position, lang, 0)(0, T - 1);
  const heat = heatChart(box, data, vectors);
  const dist = namedChart(box, data, data.layouts.dist.height);
  const names = data.tokens.map(plotlyText);
  const positions = Array.from({ length: T }, (_, i) => i);
  const xs = Array.from({ length: nAll }, (_, i) => i);
  let drawnHeat = null;
  // The distance curves on one y range for every head: heads compare, and the axis's labels stay.
  let lo = Infinity, hi = -Infinity;
  for (const arr of [withRope, without]) for (const v of arr) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const pad = (hi - lo) * 0.05 || 1;
  const distRange = [lo - pad, hi + pad];
  const update = () => {
    const head = Number(headIn.value);
    const pair = Number(pairIn.value);
    const w = which.value();
    publish({ head, live_pair: pair, which: w });
    const { before, after } = vectors.get(w, head);
    const vector = w === "q" ? L.which_q : L.which_k;
    // The pair's plane: each token before (hollow) and after (filled), joined by a line.
    const bx = [], by = [], ax = [], ay = [], sx = [], sy = [];
    let lim = 0;
    for (let t = 0; t < T; t++) {
      const i = t * D + pair;
      bx.push(before[i]); by.push(before[i + half]); ax.push(after[i]); ay.push(after[i + half]);
      sx.push(before[i], after[i], null); sy.push(before[i + half], after[i + half], null);
      lim = Math.max(lim, Math.abs(before[i]), Math.abs(before[i + half]), Math.abs(after[i]), Math.abs(after[i + half]));
    }
    lim = lim * 1.1 || 1;
    const pl = filled(data.layouts.plane, { vector, pair: fmt(pair), i: String(pair), j: String(pair + half) });
    pl.xaxis = Object.assign({}, pl.xaxis, { range: [-lim, lim] });
    pl.yaxis = Object.assign({}, pl.yaxis, { range: [-lim, lim] });
    const planeSpec = { layout: pl, data: [
      { type: "scatter", x: sx, y: sy, mode: "lines", line: { color: "#bbb", width: 1 }, hoverinfo: "skip", showlegend: false },
      { type: "scatter", x: bx, y: by, mode: "markers", name: L.before, text: names, hoverinfo: "text",
        marker: { symbol: "circle-open", size: 9, color: positions, colorscale: data.scales.viridis } },
      { type: "scatter", x: ax, y: ay, mode: "markers", name: L.after, text: names, hoverinfo: "text",
        marker: { size: 9, color: positions, colorscale: data.scales.viridis } },
    ] };
    const state = JSON.stringify({ head, live_pair: pair, which: w });
    box.dataset.state = state;
    const drawn = [plane.draw(planeSpec, plainTitle(pl))];
    plane.table(() => [[L.col_token, L.col_before, L.col_after], data.tokens.map((tok, t) => [tok,
      `(${formatNumber(bx[t], lang, 3)}; ${formatNumber(by[t], lang, 3)})`,
      `(${formatNumber(ax[t], lang, 3)}; ${formatNumber(ay[t], lang, 3)})`])]);
    // The heatmaps and the distance curve do not depend on the pair: a pair move redraws the plane only.
    const heatKey = `${w}:${head}`;
    if (heatKey !== drawnHeat) {
      drawnHeat = heatKey;
      drawn.push(heat(w, head, plainTitle(filled(data.layouts.heat, { vector, layer: fmt(data.layer), head: fmt(head) }))));
      // Each head's mean score by distance, with and without RoPE (lib, on every token of the text).
      const d0 = head * nAll;
      const ws = Array.from(withRope.subarray(d0, d0 + nAll));
      const wo = Array.from(without.subarray(d0, d0 + nAll));
      const distLayout = filled(data.layouts.dist, {});
      distLayout.yaxis = Object.assign({}, distLayout.yaxis, { range: distRange });
      drawn.push(dist.draw({ layout: distLayout, data: [
        { type: "scatter", x: xs, y: ws, mode: "lines", name: L.with, line: { color: data.palette[0] } },
        { type: "scatter", x: xs, y: wo, mode: "lines", name: L.without, line: { color: data.palette[1] } },
      ] }, plainTitle(distLayout)));
      dist.table(() => [[L.col_distance, L.with, L.without], xs.map((d) => [fmt(d), formatNumber(ws[d], lang, 3),
        formatNumber(wo[d], lang, 3)])]);
    }
    Promise.all(drawn).then(() => { box.dataset.drawn = state; });
  };
  const later = perFrame(update);
  for (const input of [headIn, pairIn, ...which.inputs]) input.addEventListener("input", later);
  for (const input of which.inputs) input.addEventListener("change", later);
  update();
}

// ------------------------------------------------------------------ mount

const PARTS = { rotation: buildRotation, angles: buildAngles, relative: buildRelative, live: buildLive };

export function mount(root, data) {
  // The same data again (a rerun of the page): nothing to redo, the learner's settings stay.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  if (root.__ittUnsub) { root.__ittUnsub(); root.__ittUnsub = null; }
  // Only the view's own box is replaced: other children of root are Streamlit's.
  const old = root.querySelector(":scope > .itt-view");
  if (old) old.remove();
  const box = viewBox(root, `itt-position itt-position-${data.part}`, `position.${data.part}`);
  PARTS[data.part](root, box, data);
}

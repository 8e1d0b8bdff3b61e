// The embeddings lesson's views, answered in the browser: how many dimensions of the table's rows
// are shown, how many neighbours and by which measure, the projection with or without the
// neighbours, and the depth at which a word's two vectors are compared.
//
// The server sends each once per (model, text or words, language) with what lib worked out
// (ui/lessons/embeddings/sections.py): the rows at the most dimensions the slider offers (packed), the 30
// nearest tokens by both measures (lib.lessons.embeddings.nearest), both projections (lib.lessons.embeddings.pca_2d),
// the cosines at every depth. The view picks what to show and computes nothing of its own: the
// two choices that read lib's results (`rowsAt`, `topNeighbours`) are held to lib by
// tests/js/embeddings.test.js on fixtures tests/views_fixtures.py writes.

import { chartBox, drawChart, el, fill, formatNumber, keepSettings, linkedSettings, metric, perFrame, plotlyText, radios,
  slider, table, unpackU16, viewBox, viewHost } from "./common.js";

// ------------------------------------------------------------------ what the view picks (pure)

/** The first `dims` columns of `n` rows sent at `nDims` columns each (row after row): [n][dims]. */
export function rowsAt(values, n, nDims, dims) {
  const d = Math.max(0, Math.min(dims, nDims));
  return Array.from({ length: n }, (_, i) => Array.from(values.slice(i * nDims, i * nDims + d)));
}

/** The k nearest by `metric` from the lists sent (lib's nearest at its largest k, best first):
 * a shorter list is a prefix of a longer one, ties going to the smaller id. */
export function topNeighbours(sent, metric, k) {
  const m = sent[metric];
  const n = Math.max(0, Math.min(k, m.ids.length));
  return Array.from({ length: n }, (_, i) => ({ rank: i + 1, id: m.ids[i], token: m.tokens[i],
    cosine: m.cosine[i], distance: m.distance[i] }));
}

/** A remembered whole number if it is one and in lo..hi, else the fallback (the model may have changed). */
export function clamp(v, lo, hi, fallback) {
  return Number.isInteger(v) && v >= lo && v <= hi ? v : fallback;
}

// ------------------------------------------------------------------ helpers

const FIELDS = ["dims", "k", "metric", "pca_add", "depth"];  // ui/learner/share.py's IN_BROWSER for this lesson

/** The settings the page store holds (a share link's values, sent by the server, win once). */
const startSettings = (data) => linkedSettings("embeddings", data.settings || {}, FIELDS);
const keep = (values) => keepSettings("embeddings", values);

function draw(data, c, traces, layout, drawn, box) {
  drawChart(c.plot, data.plotly, { data: traces, layout: Object.assign({ separators: data.separators }, layout) },
    data.config, data.labels.unavailable).then((ok) => { if (ok) box.dataset.drawn = drawn; });
}

// ------------------------------------------------------------------ the table's rows

function rowsPart(box, data) {
  const L = data.labels;
  const num = (v, d = null) => formatNumber(v, data.lang, d);
  const st = startSettings(data);
  const names = data.names;
  const nDims = data.n_dims;
  const values = unpackU16(data.rows);
  const dims = slider(box, { label: L.dims, min: data.dims_min, max: nDims, step: 1,
    value: clamp(st.dims, data.dims_min, nDims, Math.min(32, nDims)), format: (v) => num(v), testid: "embeddings.dims" });
  const height = Math.max(260, 22 * names.length + 110);
  const c = chartBox(box, { label: L.name, tableLabel: L.table, height });
  const show = () => {
    const d = Number(dims.value);
    keep({ dims: d });
    const z = rowsAt(values, names.length, nDims, d);
    const y = names.map(plotlyText);
    draw(data, c, [{ type: "heatmap", z, x: Array.from({ length: d }, (_, j) => j), y, colorscale: data.colorscale,
      zmid: 0, hovertemplate: `${L.hover}<extra></extra>` }],
    { height, margin: { l: 10, r: 10, t: 30, b: 10 }, xaxis: { title: { text: L.x } },
      yaxis: { autorange: "reversed", type: "category" } }, String(d), box);
    c.table(() => [[L.token].concat(Array.from({ length: d }, (_, j) => num(j))),
      z.map((row, i) => [names[i]].concat(row.map((v) => num(v, 3))))]);
    box.dataset.state = JSON.stringify({ dims: d });
  };
  dims.addEventListener("input", perFrame(show));
  show();
}

// ------------------------------------------------------------------ the nearest tokens

function neighboursPart(box, data) {
  const L = data.labels;
  const num = (v, d = null) => formatNumber(v, data.lang, d);
  const st = startSettings(data);
  const controls = el(box, "div", "itt-controls");
  const k = slider(controls, { label: L.k, min: data.k_min, max: data.k_max, step: 1,
    value: clamp(st.k, data.k_min, data.k_max, 10), format: (v) => num(v), testid: "embeddings.k" });
  const metrics = Object.keys(data.neighbours);
  const measure = radios(controls, { label: L.metric, options: metrics.map((m) => [m, L.metrics[m]]),
    value: metrics.includes(st.metric) ? st.metric : metrics[0], name: "embeddings.metric", testid: "embeddings.metric" });
  // The neighbours are the section's content: their table is shown, not folded away.
  const list = el(box, "div", "itt-table-box itt-table");
  list.setAttribute("role", "region");
  list.setAttribute("aria-label", L.caption);
  list.dataset.testid = "embeddings.neighbours_table";
  const show = () => {
    const n = Number(k.value);
    const by = measure.value();
    keep({ k: n, metric: by });
    table(list, [L.rank, L.token, L.id, L.cosine, L.distance], topNeighbours(data.neighbours, by, n).map((r) =>
      [num(r.rank), r.token, String(r.id), num(r.cosine, 3), num(r.distance, 3)]));
    box.dataset.state = JSON.stringify({ k: n, metric: by });
    box.dataset.drawn = `${n},${by}`;
  };
  const later = perFrame(show);
  k.addEventListener("input", later);
  for (const i of measure.inputs) i.addEventListener("change", later);
  show();
}

// ------------------------------------------------------------------ the projection

function pcaPart(box, data) {
  const L = data.labels;
  const num = (v, d = null) => formatNumber(v, data.lang, d);
  const st = startSettings(data);
  const lab = el(box, "label", "itt-check");
  const add = el(lab, "input");
  Object.assign(add, { type: "checkbox", checked: st.pca_add !== false });
  add.dataset.testid = "embeddings.pca_add";
  lab.appendChild(document.createTextNode(L.add));
  const c = chartBox(box, { label: L.name, tableLabel: L.table, height: 460 });
  const caption = el(box, "p", "itt-help");
  const show = () => {
    const on = add.checked;
    keep({ pca_add: on });
    const p = data.projections[on ? "with" : "alone"];
    const share = (x) => num(100 * x, 1);
    const traces = [];
    for (const [kind, colour, size] of [[true, data.palette[0], 12], [false, "#9a9a9a", 7]]) {
      const sel = p.is_word.map((w, i) => (w === kind ? i : -1)).filter((i) => i >= 0);
      if (!sel.length) continue;
      traces.push({ type: "scatter", x: sel.map((i) => p.x[i]), y: sel.map((i) => p.y[i]),
        mode: kind ? "markers+text" : "markers", text: sel.map((i) => plotlyText(p.names[i])), textposition: "top center",
        name: kind ? L.words : L.neighbours, marker: { size, color: colour }, hovertemplate: "%{text}<extra></extra>" });
    }
    draw(data, c, traces, { height: 460, margin: { l: 10, r: 10, t: 30, b: 10 },
      xaxis: { title: { text: fill(L.x, { share: share(p.explained[0]) }) } },
      yaxis: { title: { text: fill(L.y, { share: share(p.explained[1]) }) } } }, on ? "with" : "alone", box);
    c.table(() => [[L.point, L.kind, L.first, L.second], p.names.map((name, i) =>
      [name, p.is_word[i] ? L.words : L.neighbours, num(p.x[i], 3), num(p.y[i], 3)])]);
    caption.textContent = fill(L.caption, { share: share(p.explained[0] + p.explained[1]) });
    box.dataset.state = JSON.stringify({ pca_add: on });
  };
  add.addEventListener("change", perFrame(show));
  show();
}

// ------------------------------------------------------------------ the word in context, by depth

function depthPart(box, data) {
  const L = data.labels;
  const num = (v, d = null) => formatNumber(v, data.lang, d);
  const st = startSettings(data);
  const nL = data.n_layers;
  const depth = slider(box, { label: L.depth, min: 0, max: nL, step: 1, value: clamp(st.depth, 0, nL, nL),
    format: (v) => num(v), testid: "embeddings.depth" });
  const metrics = el(box, "div", "itt-metrics");
  const cells = [metric(metrics, { testid: "embeddings.cos_ab", delta: true }), metric(metrics), metric(metrics)];
  const c = chartBox(box, { label: L.name, tableLabel: L.table, height: 320 });
  const depths = Array.from({ length: nL + 1 }, (_, j) => j);
  const show = () => {
    const d = Number(depth.value);
    keep({ depth: d });
    cells[0].label.textContent = fill(L.cos_ab, { depth: num(d) });
    cells[0].value.textContent = num(data.cos[d], 3);
    cells[0].delta.textContent = fill(L.delta, { delta: num(data.cos[d] - data.cos[0], 3) });
    ["A", "B"].forEach((which, i) => {
      cells[i + 1].label.textContent = fill(L.cos_input, { which, depth: num(d) });
      cells[i + 1].value.textContent = num(data.own[i][d], 3);
    });
    draw(data, c, [
      { type: "scatter", x: depths, y: data.cos, mode: "lines+markers", line: { color: data.palette[0] },
        hovertemplate: `${L.hover}<extra></extra>` },
      { type: "scatter", x: [d], y: [data.cos[d]], mode: "markers", marker: { size: 16, color: data.palette[1] },
        hoverinfo: "skip" }],
    { height: 320, showlegend: false, margin: { l: 10, r: 10, t: 30, b: 10 }, xaxis: { title: { text: L.x } },
      yaxis: { title: { text: L.y }, range: data.range } }, String(d), box);
    c.table(() => [[L.col_depth, L.col_ab, L.col_a, L.col_b], depths.map((j) =>
      [num(j), num(data.cos[j], 3), num(data.own[0][j], 3), num(data.own[1][j], 3)])]);
    box.dataset.state = JSON.stringify({ depth: d });
  };
  depth.addEventListener("input", perFrame(show));
  show();
}

// ------------------------------------------------------------------ mount

export function mount(root, data) {
  // The same data again (a rerun of the page): nothing to redo, the learner's choices stay.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  const box = viewBox(viewHost(root), `itt-embeddings itt-embeddings-${data.part}`, `embeddings.${data.part}`);
  ({ rows: rowsPart, neighbours: neighboursPart, pca: pcaPart, depth: depthPart })[data.part](box, data);
}

// The block lesson's views, answered in the browser: one token through the norm (at the layer the
// server sent), one token's contributions up the stack, and the logit lens at any layer and position.
//
// The server sends each once per (model, text, language) with what lib worked out
// (ui/lessons/block/sections.py): every block's attention and MLP lengths for every token (lib.lessons.block.contributions),
// the lens's top tokens, their probabilities and the final prediction's rank at every layer and
// position (lib.lessons.logit_lens, computed by the lens service), every token's vector at the norm's layer
// with lib's mean, RMS and σ. Choosing a token, a layer or a position picks what to show; the one
// sum the view does (the norm's two outputs, `normLines`) is held to lib by tests/js/block.test.js.

import {
  chartBox, drawChart, el, fill, formatNumber, keepSettings, linkedSettings, metric, perFrame, plotlyText, richText, select,
  slider, table, unpackInts, unpackU16, viewBox, viewHost,
} from "./common.js";

// ------------------------------------------------------------------ helpers

/** The settings the page store holds (a share link's values, sent by the server, win once). */
function startSettings(data) {
  return linkedSettings("block", data.settings || {}, ["resid_token", "lens_layer", "lens_pos", "norm_token"]);
}

function keep(values) {
  keepSettings("block", values);
}

const clamp = (v, lo, hi, fallback) => (Number.isInteger(v) && v >= lo && v <= hi ? v : fallback);

/** The token a part follows: a <select> of the text's tokens at the stored choice `name`, else the last. */
function tokenPick(box, data, name) {
  const T = data.tokens.length;
  return select(box, { label: data.labels.token, options: data.tokens.map((tok, i) => [i, `${i}: ${tok}`]),
    value: clamp(startSettings(data)[name], 0, T - 1, T - 1), testid: `block.${name}` });
}

// ------------------------------------------------------------------ one token through the norm

/**
 * The two outputs of normalising x with the same gain g (and LayerNorm's bias b, or null), from
 * lib's mean, RMS and σ of x (lib/lessons/block.py's rms_norm and layer_norm):
 * RMSNorm x / RMS · g, LayerNorm (x − μ) / σ · g + b.
 */
export function normLines(x, g, b, mean, rms, std) {
  const n = x.length;
  const rmsOut = new Float64Array(n);
  const layerOut = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    rmsOut[i] = (x[i] / rms) * g[i];
    layerOut[i] = ((x[i] - mean) / std) * g[i] + (b ? b[i] : 0);
  }
  return { rmsOut, layerOut };
}

function normPart(box, data) {
  const L = data.labels;
  const lang = data.lang;
  const num = (v, d = null) => formatNumber(v, lang, d);
  const pick = tokenPick(box, data, "norm_token");
  const metrics = el(box, "div", "itt-metrics");
  const cells = ["mean", "rms", "std", "length_in", "length_scaled"].map((name) =>
    metric(metrics, { label: L[name], help: name === "length_scaled" ? L.sqrt_d : null }).value);
  const c = chartBox(box, { tableLabel: L.table, height: data.layout.height });
  const gap = el(box, "p", "itt-help");
  const dims = Array.from({ length: data.weight.length }, (_, i) => i);
  const show = () => {
    const tok = Number(pick.value);
    keep({ norm_token: tok });
    const [mean, rms, std, lenIn, lenScaled, diff] = data.stats[tok];
    [num(mean, 3), num(rms, 3), num(std, 3), num(lenIn, 1), num(lenScaled, 2)].forEach((v, i) => { cells[i].textContent = v; });
    const x = unpackU16(data.x[tok]);
    const { rmsOut, layerOut } = normLines(x, data.weight, data.bias, mean, rms, std);
    const title = fill(L.title, { token: data.tokens[tok] });
    c.fig.setAttribute("aria-label", `${L.name}: ${title}`);
    const layout = JSON.parse(JSON.stringify(data.layout));
    for (const note of layout.annotations || []) note.text = fill(note.text, { token: plotlyText(data.tokens[tok]) });
    const line = (y, row, color, extra) => Object.assign({ type: "scatter", x: dims, y: Array.from(y), mode: "lines",
      line: { color }, xaxis: row === 1 ? "x" : `x${row}`, yaxis: row === 1 ? "y" : `y${row}` }, extra);
    drawChart(c.plot, data.plotly, { data: [
      line(x, 1, data.palette[0], { name: "x", showlegend: false }),
      line(data.weight, 2, data.palette[2], { name: "g", showlegend: false }),
      line(rmsOut, 3, data.palette[1], { name: L.rms_name }),
      line(layerOut, 3, data.palette[3], { name: L.layer_name, line: { color: data.palette[3], dash: "dot" } })],
    layout }, data.config, L.unavailable).then((drawn) => { if (drawn) box.dataset.drawn = String(tok); });
    c.table(() => [[L.dim, "x", "g", L.rms_name, L.layer_name], dims.map((i) => [num(i), num(x[i], 3),
      num(data.weight[i], 3), num(rmsOut[i], 3), num(layerOut[i], 3)])]);
    gap.textContent = fill(L.gap, { diff: num(diff, 3), mean: num(mean, 3) });
    box.dataset.state = JSON.stringify({ norm_token: tok });
  };
  pick.addEventListener("change", perFrame(show));
  show();
}

// ------------------------------------------------------------------ one token's contributions

function contribPart(box, data) {
  const L = data.labels;
  const lang = data.lang;
  const num = (v, d = null) => formatNumber(v, lang, d);
  const T = data.tokens.length;
  const nL = data.n_layers;
  // Lengths travel as their base-10 logarithms (lib.serving.payload.pack_u16): a few digits of each, at every scale.
  const back = (p) => Array.from(unpackU16(p), (v) => 10 ** v);
  const attn = back(data.attn);  // [L, T]
  const mlp = back(data.mlp);  // [L, T]
  const resid = back(data.resid);  // [L+1, T]
  const pick = tokenPick(box, data, "resid_token");
  const c = chartBox(box, { tableLabel: L.table, height: 380 });
  const show = () => {
    const tok = Number(pick.value);
    keep({ resid_token: tok });
    const title = fill(L.title, { token: data.tokens[tok] });
    c.fig.setAttribute("aria-label", title);
    const layers = Array.from({ length: nL }, (_, l) => l);
    const col = (a, rows) => Array.from({ length: rows }, (_, l) => a[l * T + tok]);
    const a = col(attn, nL);
    const m = col(mlp, nL);
    const r = col(resid, nL + 1);
    drawChart(c.plot, data.plotly, { data: [
      { type: "bar", x: layers, y: a, name: L.attn, marker: { color: data.palette[1] } },
      { type: "bar", x: layers, y: m, name: L.mlp, marker: { color: data.palette[2] } },
      { type: "scatter", x: r.map((_, l) => l), y: r, name: L.resid, mode: "lines+markers", line: { color: data.palette[0] } }],
    layout: { barmode: "group", height: 380, autosize: true, margin: { l: 10, r: 10, t: 40, b: 10 }, separators: data.separators,
      title: { text: plotlyText(title) }, xaxis: { title: { text: L.x } }, yaxis: { title: { text: L.y }, type: "log" },
      legend: { orientation: "h", y: -0.2 } } }, data.config, L.unavailable)
      .then((drawn) => { if (drawn) box.dataset.drawn = String(tok); });
    c.table(() => [[L.x, L.attn, L.mlp, L.resid], r.map((v, l) => [num(l), l < nL ? num(a[l], 1) : "—",
      l < nL ? num(m[l], 1) : "—", num(v, 1)])]);
    box.dataset.state = JSON.stringify({ resid_token: tok });
  };
  pick.addEventListener("change", perFrame(show));
  show();
}

// ------------------------------------------------------------------ the logit lens

function lensPart(box, data) {
  const L = data.labels;
  const lang = data.lang;
  const num = (v, d = null) => formatNumber(v, lang, d);
  const st = startSettings(data);
  const P = data.inputs.length;
  const nL = data.n_layers;
  const k = data.k;
  const top = unpackInts(data.top);  // [L+1, P, k] indices into words
  const topP = unpackU16(data.top_probs);  // [L+1, P, k]
  const finalP = unpackU16(data.final_prob);  // [L+1, P]
  const finalRank = unpackInts(data.final_rank);  // [L+1, P], 0 = top
  const words = data.words;
  const controls = el(box, "div", "itt-controls");
  const layer = slider(controls, { label: L.layer, min: 0, max: nL, step: 1, value: clamp(st.lens_layer, 0, nL, nL),
    format: (v) => num(v), testid: "block.lens_layer" });
  const pos = select(controls, { label: L.position, options: data.inputs.map((tok, i) => [i, `${data.positions[i]}: ${tok}`]),
    value: clamp(st.lens_pos, 0, P - 1, P - 1), testid: "block.lens_pos" });
  const reading = el(box, "p", "itt-result");
  reading.setAttribute("aria-live", "polite");
  reading.dataset.testid = "block.lens.reading";
  const c = chartBox(box, { tableLabel: L.table, height: 340 });
  const onTop = el(box, "p", "itt-help");
  const grid = el(box, "div", "itt-table-box itt-lens-table");
  grid.setAttribute("role", "region");
  grid.setAttribute("aria-label", fill(L.table_title, { layer: "" }));
  grid.tabIndex = 0;
  let gridLayer = null;

  const show = () => {
    const l = Number(layer.value);
    const i = Number(pos.value);
    keep({ lens_layer: l, lens_pos: i });
    const at = (layerIx, p, r) => (layerIx * P + p) * k + r;
    const final = words[data.final[i]];
    richText(reading, L.reading, { layer: num(l), token: data.inputs[i], top: words[top[at(l, i, 0)]],
      p: num(topP[at(l, i, 0)], 3), final, rank: num(finalRank[l * P + i] + 1), pf: num(finalP[l * P + i], 3) });
    onTop.textContent = fill(L.first_on_top, { layer: num(data.first_on_top[i]), final });
    // The final prediction's probability and rank at every layer, the chosen layer marked.
    const layers = Array.from({ length: nL + 1 }, (_, j) => j);
    const prob = layers.map((j) => finalP[j * P + i]);
    const rank = layers.map((j) => finalRank[j * P + i] + 1);
    const topRank = Math.log10(Math.max(10, Math.max(...rank) + 1));
    const title = fill(L.curve_title, { token: data.inputs[i], final });
    c.fig.setAttribute("aria-label", title);
    drawChart(c.plot, data.plotly, { data: [
      { type: "scatter", x: layers, y: prob, mode: "lines+markers", name: plotlyText(fill(L.prob, { final })),
        line: { color: data.palette[0] }, xaxis: "x", yaxis: "y" },
      { type: "scatter", x: layers, y: rank, mode: "lines", name: L.rank, line: { color: data.palette[1], dash: "dot" },
        xaxis: "x", yaxis: "y2" }],
    // The rank axis keeps a fixed margin, not plotly's automargin: its labels follow the position,
    // and a label that grows would make plotly lay the chart out and draw it twice on a move.
    layout: { height: 340, autosize: true, margin: { l: 10, r: 80, t: 40, b: 10 }, separators: data.separators, title: { text: plotlyText(title) },
      legend: { orientation: "h", y: -0.25 }, xaxis: { title: { text: L.x } },
      yaxis: { title: { text: plotlyText(fill(L.prob, { final })) }, range: [0, 1] },
      yaxis2: { title: { text: L.rank }, type: "log", range: [topRank + 0.05, -0.05], dtick: 1, overlaying: "y", side: "right",
        automargin: false },
      shapes: [{ type: "line", x0: l, x1: l, xref: "x", y0: 0, y1: 1, yref: "paper", line: { color: data.palette[3], width: 2 } }] } },
    data.config, L.unavailable).then((drawn) => { if (drawn) box.dataset.drawn = `${l},${i}`; });
    c.table(() => [[L.x, fill(L.prob, { final }), L.rank], layers.map((j) => [num(j), num(prob[j], 3), num(rank[j])])]);
    // The chosen layer's top tokens at every position (the table the lesson reads): the same for
    // every position, built again only for another layer.
    if (l !== gridLayer) {
      gridLayer = l;
      grid.setAttribute("aria-label", fill(L.table_title, { layer: num(l) }));
      table(grid, [L.col_position].concat(Array.from({ length: k }, (_, r) => fill(L.col_rank, { r: num(r + 1) }))),
        data.inputs.map((tok, p) => [`${data.positions[p]}: ${tok}`].concat(Array.from({ length: k }, (_, r) =>
          `${words[top[at(l, p, r)]]} (${num(topP[at(l, p, r)], 3)})`))));
    }
    box.dataset.state = JSON.stringify({ lens_layer: l, lens_pos: i });
  };
  const later = perFrame(show);
  layer.addEventListener("input", later);
  pos.addEventListener("change", later);
  show();
}

// ------------------------------------------------------------------ mount

export function mount(root, data) {
  // The same data again (a rerun of the page): nothing to redo, the learner's choices stay.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  const box = viewBox(viewHost(root), `itt-block itt-block-${data.part}`, `block.${data.part}`);
  ({ norm: normPart, contrib: contribPart, lens: lensPart })[data.part](box, data);
}

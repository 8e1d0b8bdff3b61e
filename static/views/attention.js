// The attention lesson's chosen head: every head of one layer, sent once per (text, layer), drawn
// here. Moving the head is answered in the browser; a layer the browser has not been sent is asked
// of the server (one run of this section), and every layer already sent stays in the browser.
//
// This view publishes the chosen layer and head in the page store ("attention.chosen"). The
// sections further down that draw the head (the formula, the mask, flash attention:
// attention_steps.js) follow it there, in the browser, from every head of the layer sent once;
// a layer not sent yet reruns them with this section (ui/lessons/attention/sections.py take_layer),
// and bertviz with them while it is open. bertviz's page is built on the server: a layer already
// sent, while bertviz's head view draws another, asks for bertviz's section alone ("bertviz").
import {
  cellCanvas, chartBox, clearView, keepFocus, el, fill, formatNumber, hoverTip, perFrame, plotly, slider, store, unpackU16,
} from "./common.js";

/** One head's [n, n] weights out of the layer's [H, n, n], as rows. */
export function headRows(weights, n, head) {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(Array.from(weights.subarray((head * n + i) * n, (head * n + i + 1) * n)));
  return rows;
}

/** "**bold**" in a label drawn as <strong>, every other character as text. */
function richText(parent, text) {
  parent.replaceChildren();
  text.split("**").forEach((part, i) => {
    if (!part) return;
    if (i % 2) el(parent, "strong").textContent = part;
    else parent.appendChild(document.createTextNode(part));
  });
}

/** One head's weights as the chart's cells: rows, null where the mask hides a key. */
export function headCells(layerData, head) {
  const n = layerData.n;
  return headRows(layerData.w, n, head).map((r, i) => r.map((w, j) => (layerData.mask[i * n + j] ? w : null)));
}

/** What the pointer over cell (i, j) of a head's chart reads. */
function hoverText(layerData, head, i, j, data) {
  const n = layerData.n;
  if (!layerData.mask[i * n + j]) return data.labels.hidden;
  const w = layerData.w[(head * n + i) * n + j];
  return fill(data.labels.hover, { q: data.ticks[i], i, k: data.ticks[j], j, w: w.toFixed(3) });
}

function figure(layerData, head, data) {
  const n = layerData.n;
  const L = data.labels;
  const z = headCells(layerData, head);
  const ticks = { tickmode: "array", tickvals: data.ticks.map((_, i) => i), ticktext: data.ticks,
    tickfont: { size: n > 24 ? 10 : 12 } };
  const side = Math.min(800, Math.max(340, 22 * n + 200));
  return {
    // The hover's text is the view's own (the head shown may be the canvas's, not plotly's).
    data: [{ type: "heatmap", z, zmin: 0, zmax: 1, colorscale: data.colorscale, hoverinfo: "none",
      colorbar: { title: { text: L.weight }, thickness: 12 }, xgap: 1, ygap: 1 }],
    layout: { xaxis: Object.assign({ title: { text: L.x }, side: "top" }, ticks),
      yaxis: Object.assign({ title: { text: L.y }, autorange: "reversed" }, ticks),
      height: side - 30, margin: { l: 10, r: 10, t: 100, b: 10 }, autosize: true,
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", separators: data.lang === "it" ? ",." : ".," },
  };
}

/** The head's weights as its chart's table: [head, rows] for common.js's table (a query's row
 * headed by its token, "—" where the mask hides a key). */
function weightsTable(layerData, head, data) {
  const n = layerData.n;
  const rows = headRows(layerData.w, n, head).map((r, i) => [data.tokens[i]].concat(
    r.map((w, j) => (layerData.mask[i * n + j] ? formatNumber(w, data.lang, 4) : "—"))));
  return [[data.labels.corner].concat(data.tokens), rows];
}

function scoresTable(box, headData, data) {
  const t = document.createElement("table");
  const tr = el(el(t, "thead"), "tr");
  for (const h of [data.labels.pattern, data.labels.share]) { const th = el(tr, "th"); th.scope = "col"; th.textContent = h; }
  const body = el(t, "tbody");
  for (const [name, share] of headData.rows) {
    const row = el(body, "tr");
    const th = el(row, "th");
    th.scope = "row";
    th.textContent = name;
    el(row, "td").textContent = share;
  }
  box.replaceChildren(t);
}

/** Tell the sections that follow the chosen head, through the page store. */
function publish(layer, head) {
  // Merged: the object also holds flash attention's tile size (attention_steps.js), for a share link.
  store().set("attention.chosen", Object.assign({}, store().get("attention.chosen", {}), { layer, head }));
}

/** The layer bertviz's head view draws, from its section's key (ui/lessons/attention/sections.py
 * bertviz_section: "attention.bertviz_head_<layer>"), or null while it is closed. */
export function bertvizLayer(doc) {
  const box = doc.querySelector('[class*="st-key-attention-bertviz_head_"]');
  const m = box && /(?:^|\s)st-key-attention-bertviz_head_(\d+)(?:\s|$)/.exec(box.className);
  return m ? Number(m[1]) : null;
}

function build(root, data, component) {
  const L = data.labels;
  const layers = root.__ittLayers || (root.__ittLayers = new Map());
  layers.set(data.layer, { n: data.n, w: unpackU16(data.weights), mask: data.mask, heads: data.heads });
  // The head: the server's choice when it made one (a link, a click on the overview), else the
  // learner's last one in this browser.
  const kept = store().get("attention.chosen", null);
  const serverChose = data.chosen.token && store().get("attention.server_token", "") !== data.chosen.token;
  if (serverChose) store().set("attention.server_token", data.chosen.token);
  let head = !serverChose && kept && kept.layer === data.layer ? Math.min(kept.head, data.n_heads - 1) : data.chosen.head;
  let layer = data.layer;

  clearView(root);
  const box = el(root, "div", "itt-view itt-attention");
  box.dataset.testid = "ittView";
  box.dataset.view = "attention";
  const controls = el(box, "div", "itt-controls");
  const count = (v) => formatNumber(v, data.lang);
  const layerInput = slider(controls, { label: L.layer, min: 0, max: Math.max(data.n_layers - 1, 1), step: 1,
    value: layer, format: count, testid: "attention.layer" });
  layerInput.disabled = data.n_layers === 1;
  const headInput = slider(controls, { label: L.head, min: 0, max: Math.max(data.n_heads - 1, 1), step: 1,
    value: head, format: count, testid: "attention.head" });
  headInput.disabled = data.n_heads === 1;
  const waiting = el(box, "div", "itt-help");
  waiting.setAttribute("role", "status");
  const main = el(box, "div", "itt-columns");
  const left = el(main, "div", "itt-wide");
  const heatmap = chartBox(left, { tableLabel: L.table });
  const chart = heatmap.fig;
  const plot = heatmap.plot;
  // The head's name above the chart, not in plotly's layout, so that a head drawn on the canvas
  // (cellCanvas) is named without a replot.
  const heading = chart.insertBefore(el(chart, "p", "itt-chart-title"), plot);
  const sums = el(left, "p", "itt-help");
  const right = el(main, "div", "itt-side");
  const said = el(right, "p", "itt-said");
  said.dataset.testid = "attention.said";
  const scoresBox = el(right, "div", "itt-table itt-table-box");

  // plotly draws the chart once (its axes are the text's tokens); every other head and layer sent
  // is painted on the canvas over it, and plotly's own cells catch up once the learner pauses (for
  // the chart's picture download).
  let plotted = null;  // { layer, head, n } plotly drew last
  let paint = null;
  let catchUp = null;
  const replot = (here, l, h) => {
    const spec = figure(here, h, data);
    return plotly(data.plotly).then((P) => P.react(plot, spec.data, spec.layout, Object.assign({ responsive: true }, data.config)))
      .then(() => {
        plotted = { layer: l, head: h, n: here.n };
        if (paint === null) {
          paint = cellCanvas(chart, plot, data.colorscale) || false;
          hoverTip(chart, plot, (pt) => {
            const at = layers.get(layer);
            if (!at) return null;
            const [i, j] = pt.pointIndex;
            return hoverText(at, Math.min(head, data.n_heads - 1), i, j, data);
          });
        }
      });
  };
  const draw = () => {
    const here = layers.get(layer);
    if (!here) return;
    const h = Math.min(head, data.n_heads - 1);
    const hd = here.heads[h];
    chart.setAttribute("aria-label", hd.title);
    richText(said, hd.said);
    said.classList.toggle("itt-clear", hd.clear);
    sums.textContent = hd.sums;
    scoresTable(scoresBox, hd, data);
    heatmap.table(() => weightsTable(here, h, data));
    const state = JSON.stringify({ layer, head: h });
    box.dataset.state = state;
    clearTimeout(catchUp);
    // Every layer of a text has the same tokens, so plotly's axes serve any layer already sent.
    if (paint && plotted && plotted.n === here.n) {
      paint(headCells(here, h));
      heading.textContent = hd.title;
      box.dataset.drawn = state;
      if (plotted.head !== h || plotted.layer !== layer) catchUp = setTimeout(() => {
        if (layers.get(layer) === here) replot(here, layer, h).catch(() => { plot.textContent = L.unavailable; });
      }, 1500);
      return;
    }
    replot(here, layer, h)
      .then(() => { if (paint) paint(headCells(here, h)); heading.textContent = hd.title; box.dataset.drawn = state; })
      .catch(() => { plot.textContent = L.unavailable; });
  };
  const later = perFrame(draw);
  headInput.addEventListener("input", () => {
    head = Number(headInput.value);
    publish(layer, head);
    later();
  });
  // A layer already sent is drawn at once; another is asked of the server when the learner lets
  // go of the slider (or at each key press), the one run this view causes.
  layerInput.addEventListener("input", () => {
    layer = Number(layerInput.value);
    if (layers.has(layer)) { waiting.textContent = ""; publish(layer, head); later(); }
    else waiting.textContent = L.loading;
  });
  layerInput.addEventListener("change", () => {
    if (!layers.has(layer)) {
      publish(layer, head);
      component.setTriggerValue("layer", { layer, head });
    } else {
      const shown = bertvizLayer(document);
      if (shown !== null && shown !== layer) component.setTriggerValue("bertviz", layer);
    }
  });
  publish(layer, head);
  draw();
}

export function mount(root, data, component) {
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  if (root.__ittText !== data.text_key) { root.__ittLayers = new Map(); root.__ittText = data.text_key; }
  keepFocus(root, () => build(root, data, component));
}

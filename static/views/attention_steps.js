// The attention lesson's sections that draw the chosen head further down the page: the formula's
// steps ("formula"), the head recomputed without the mask ("mask") and flash attention ("flash");
// and the scaling demo ("scaling": every d_head's seeded results sent once). One module, four mounts. Each is sent every head of the chosen layer once per (model, text,
// language, layer) and follows the head that attention.js publishes in the page store
// ("attention.chosen"): a head move, a tab, a tile size or a tile step runs nothing on the server.
// A layer not sent yet comes with the live view's own run (its trigger reruns these sections too).
//
// Flash attention's bookkeeping (the running maximum, sum and rescaling of every tile) is worked
// out here from the head's scores, `flashWalk`, held to lib.lessons.attention.flash_attention by the shared
// fixtures (tests/js/attention_steps.test.js); the difference from the naive result and the memory
// come from lib's own runs.
import { chartBox, clearView, drawChart, el, fill, formatNumber, keepFocus, metric, perFrame, plotly, slider, store, table, unpackU16 } from "./common.js";

const CHOSEN = "attention.chosen";
const TAB = "attention.step_tab";
const FLASH_STEP = "attention.flash_step";
const FLASH_TOKEN = "attention.flash_token";
const SCALING_TOKEN = "attention.scaling_token";
const STEPS = ["qkv", "scores", "scale", "mask", "softmax", "sum", "concat"];

// ------------------------------------------------------------------ the maths

/** lib/serving/payload.py's pack_f32 read back: little-endian float32, as float64. */
export function unpackF32(packed) {
  let bytes;
  if (typeof atob === "function") {
    const s = atob(packed.b64);
    bytes = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  } else bytes = new Uint8Array(Buffer.from(packed.b64, "base64")); // node, for the tests
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / 4;
  if (n !== packed.n) throw new Error(`payload holds ${n} values, says ${packed.n}`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

/** The rows of a lower triangle sent row by row (numpy's tril_indices order): row i holds keys 0..i.
 * `offset`: where this matrix starts in `values` (one head of several). */
export function lowerRows(values, n, offset = 0) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const start = offset + (i * (i + 1)) / 2;
    rows.push(values.subarray ? values.subarray(start, start + i + 1) : values.slice(start, start + i + 1));
  }
  return rows;
}

/** lib.lessons.attention.flash_attention's walk over the tiles (square tiles of `block` tokens, causal,
 * `window` as head_steps), keeping what the view shows: per computed tile its rows' running
 * maximum m, running sum ℓ of e^(s − m) and the factor e^(m_old − m_new) that shrank the earlier
 * sums; the tiles skipped. `rows[i][j]`: query i's scaled score against key j (j ≤ i). */
export function flashWalk(rows, block, window = null) {
  const t = rows.length;
  const nQ = Math.ceil(t / block);
  const steps = [];
  const skipped = [];
  for (let qb = 0; qb < nQ; qb++) {
    const q0 = qb * block;
    const q1 = Math.min(t, q0 + block);
    const m = new Array(q1 - q0).fill(-Infinity);
    const l = new Array(q1 - q0).fill(0);
    for (let kb = 0; kb < nQ; kb++) {
      const k0 = kb * block;
      const k1 = Math.min(t, k0 + block);
      if (k0 > q1 - 1 || (window !== null && window !== undefined && k1 - 1 <= q0 - window)) {
        skipped.push([qb, kb]);
        continue;
      }
      const rescale = [];
      for (let r = 0; r < q1 - q0; r++) {
        const i = q0 + r;
        const row = rows[i];
        const lo = window === null || window === undefined ? k0 : Math.max(k0, i - window + 1);
        const hi = Math.min(k1, i + 1); // keys after the query are masked
        let top = -Infinity;
        for (let j = lo; j < hi; j++) if (row[j] > top) top = row[j];
        const mNew = Math.max(m[r], top);
        // A row that has seen nothing yet (a window) is measured against 0, as lib does.
        const ref = Number.isFinite(mNew) ? mNew : 0;
        const shrink = Number.isFinite(m[r]) ? Math.exp(m[r] - ref) : 0;
        let p = 0;
        for (let j = lo; j < hi; j++) p += Math.exp(row[j] - ref);
        l[r] = l[r] * shrink + p;
        m[r] = mNew;
        rescale.push(shrink);
      }
      steps.push({ qBlock: qb, kBlock: kb, q0, q1, k0, k1, rowMax: m.slice(), rowSum: l.slice(), rescale });
    }
  }
  return { steps, skipped, nQ, nK: nQ, block };
}

/** The tiles' states after `step` (1-based) of a walk: 0 to do, 1 skipped, 2 done, 3 the current one. */
export function tileStates(walk, step) {
  const z = Array.from({ length: walk.nQ }, () => new Array(walk.nK).fill(0));
  for (const [qb, kb] of walk.skipped) z[qb][kb] = 1;
  for (const s of walk.steps.slice(0, step)) z[s.qBlock][s.kBlock] = 2;
  const cur = walk.steps[step - 1];
  if (cur) z[cur.qBlock][cur.kBlock] = 3;
  return z;
}

// ------------------------------------------------------------------ drawing helpers

/** A real table: `caption`, column headers `head` (the first over the row headers), rows of
 * [row header, cells...]. */
function tableOf(box, { caption, head, rows, testid }) {
  const t = table(box, head, rows);
  if (testid) t.dataset.testid = testid;
  if (caption) t.prepend(Object.assign(document.createElement("caption"), { textContent: caption }));
  return t;
}

/** The chart drawn (common.js's drawChart, following the window's width), then `done`. */
function draw(plot, data, spec, done) {
  drawChart(plot, data.plotly, spec, Object.assign({ responsive: true }, data.config), data.labels.unavailable)
    .then((drawn) => { if (drawn) done(); });
}

const num = (x, lang, digits) => (x === -Infinity ? "−∞" : formatNumber(x, lang, digits));

/** Follows the page store's chosen head: draws now, and again at each change while the section is
 * on screen or near it (a section far below catches up when it is reached). `show(layer, head)`
 * draws a head of a layer sent; a layer not sent yet is said to be coming. */
function follow(root, data, show, status) {
  if (root.__ittStop) root.__ittStop();
  const layers = root.__ittLayers;
  let shown = "";
  const update = (chosen) => {
    const c = chosen && layers.has(chosen.layer) ? chosen : null;
    status(chosen && !c && chosen.layer !== data.layer ? data.labels.loading : "");
    const layer = c ? c.layer : data.layer;
    const want = c ? c.head : chosen && chosen.layer === data.layer ? chosen.head : data.chosen.head;
    const head = Math.min(Math.max(Number(want) || 0, 0), data.n_heads - 1);
    const now = `${layer}:${head}`;
    if (now === shown) return;
    shown = now;
    show(layers.get(layer), layer, head);
  };
  const later = perFrame(update);
  let near = typeof IntersectionObserver === "undefined";
  let owed = null;
  const seen = near ? null : new IntersectionObserver((entries) => {
    near = entries[entries.length - 1].isIntersecting;
    if (near && owed !== null) { later(owed); owed = null; }
  }, { rootMargin: "300px 0px" });
  if (seen) seen.observe(root);
  const stop = store().subscribe(CHOSEN, (v) => { if (near) later(v); else owed = v; });
  root.__ittStop = () => { stop(); if (seen) seen.disconnect(); };
  update(store().get(CHOSEN, null));
}

function frame(root, data) {  // the view's box, and its status line
  clearView(root);
  const box = el(root, "div", `itt-view itt-attention-${data.part}`);
  box.dataset.testid = "ittView";
  box.dataset.view = `attention_steps.${data.part}`;
  const status = el(box, "div", "itt-help");
  status.setAttribute("role", "status");
  return { box, status: (text) => { status.textContent = text; } };
}

// ------------------------------------------------------------------ the formula, step by step

function buildFormula(root, data) {
  const L = data.labels;
  const { box, status } = frame(root, data);
  const check = el(box, "div", "itt-note");
  check.setAttribute("role", "status");
  const list = el(box, "div", "itt-tabs");
  list.setAttribute("role", "tablist");
  list.setAttribute("aria-label", L.tabs);
  const panel = el(box, "div", "itt-tab-panel");
  panel.setAttribute("role", "tabpanel");
  panel.id = `${root.id || "itt"}-formula-panel-${Math.random().toString(36).slice(2, 8)}`;
  const proj = el(box, "p", "itt-help");
  let tab = STEPS.includes(store().get(TAB, "qkv")) ? store().get(TAB, "qkv") : "qkv";
  const buttons = STEPS.map((name) => {
    const b = el(list, "button", "itt-button itt-tab");
    b.type = "button";
    b.setAttribute("role", "tab");
    b.id = `${panel.id}-${name}`;
    b.setAttribute("aria-controls", panel.id);
    b.dataset.testid = `attention.step_tab.${name}`;
    b.textContent = L[`tab_${name}`];
    return b;
  });
  let current = null;
  const fill_ = () => {
    buttons.forEach((b, i) => {
      const on = STEPS[i] === tab;
      b.setAttribute("aria-selected", String(on));
      b.tabIndex = on ? 0 : -1;
    });
    panel.setAttribute("aria-labelledby", `${panel.id}-${tab}`);
    if (current) drawTab(panel, data, current.layer, current.head, current.sent, tab);
  };
  const choose = (i, focus) => {
    tab = STEPS[i];
    store().set(TAB, tab);
    fill_();
    if (focus) buttons[i].focus();
  };
  buttons.forEach((b, i) => {
    b.addEventListener("click", () => choose(i, false));
    b.addEventListener("keydown", (e) => {
      const k = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: STEPS.length - 1 }[e.key];
      if (k === undefined) return;
      e.preventDefault();
      choose((k + STEPS.length) % STEPS.length, true);
    });
  });
  follow(root, data, (sent, layer, head) => {
    const f = sent.formula;
    const h = f.heads[head];
    check.textContent = h.check;
    check.dataset.kind = h.ok ? "success" : "warning";
    proj.textContent = f.proj;
    current = { sent, layer, head };
    box.dataset.state = JSON.stringify({ layer, head });
    fill_();
  }, status);
}

function drawTab(panel, data, layer, head, sent, tab) {
  const L = data.labels;
  const lang = data.lang;
  const f = sent.formula;
  const h = f.heads[head];
  const rows = data.tokens.slice(0, f.n);
  const dims = Array.from({ length: f.d }, (_, j) => `d${j}`);
  const more = f.more ? ["…"] : [];
  panel.replaceChildren();
  panel.dataset.tab = tab;
  const caption = el(panel, "p", "itt-help");
  const wide = (parent, a, digits, name, testid) => {
    const box = el(parent, "div", "itt-table itt-table-box");
    tableOf(box, { caption: name, testid, head: [""].concat(dims, more),
      rows: a.map((r, i) => [rows[i]].concat(r.map((x) => num(x, lang, digits)), more)) });
  };
  const square = (a, digits, name, hidden) => {
    const box = el(panel, "div", "itt-table itt-table-box");
    tableOf(box, { caption: L[`tab_${name}`], testid: `attention.step.${name}`, head: [""].concat(rows),
      rows: a.map((r, i) => [rows[i]].concat(r.map((x, j) => (hidden && !f.mask[i * f.n + j] ? "−∞" : num(x, lang, digits))))) });
  };
  if (tab === "qkv") {
    caption.textContent = h.qkv;
    const cols = el(panel, "div", "itt-columns");
    for (const name of ["q", "k", "v"]) wide(el(cols, "div", "itt-half"), h[name], 2, name.toUpperCase(), `attention.step.${name.toUpperCase()}`);
  } else if (tab === "scores") { caption.textContent = f.captions.scores; square(h.scores, 2, "scores"); }
  else if (tab === "scale") { caption.textContent = f.captions.scale; square(h.scaled, 2, "scale"); }
  else if (tab === "mask") { caption.textContent = f.captions.mask; square(h.scaled, 2, "mask", true); }
  else if (tab === "softmax") { caption.textContent = f.captions.softmax; square(h.weights, 3, "softmax"); }
  else if (tab === "sum") { caption.textContent = f.captions.sum; wide(panel, h.out, 2, L.tab_sum, "attention.step.out"); }
  else {
    caption.textContent = f.captions.concat;
    const chart = chartBox(panel, { tableLabel: L.table });
    chart.fig.setAttribute("aria-label", L.concat_title);
    chart.fig.dataset.testid = "attention.step.concat_chart";
    const names = f.share.map((_, i) => fill(L.head_n, { h: i }));
    chart.table(() => [[L.head, L.share], f.share.map((s, i) => [names[i], formatNumber(s, lang, 3)])]);
    const spec = { data: [{ type: "bar", x: names, y: f.share,
      marker: { color: f.share.map((_, i) => (i === head ? data.palette[3] : data.palette[0])) },
      hovertemplate: "%{x}: %{y:.3f}<extra></extra>" }],
    layout: { height: 260, margin: { l: 10, r: 10, t: 30, b: 10 }, title: { text: L.concat_title },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", separators: lang === "it" ? ",." : ".," } };
    draw(chart.plot, data, spec, () => { chart.fig.dataset.drawn = String(head); });
    const box = el(panel, "div", "itt-table itt-table-box");
    tableOf(box, { caption: "", testid: "attention.step.o", head: [""].concat(dims),
      rows: f.o.map((r, i) => [rows[i]].concat(r.map((x) => num(x, lang, 2)))) });
  }
}

// ------------------------------------------------------------------ the head without the mask

function buildMask(root, data) {
  const L = data.labels;
  const lang = data.lang;
  const { box, status } = frame(root, data);
  if (!data.weights) {
    const note = el(box, "div", "itt-note");
    note.textContent = L.one_token;
    return;
  }
  const row = el(box, "div", "itt-metrics");
  const value = metric(row, { label: L.metric, help: L.help, testid: "attention.unmasked.metric" }).value;
  const chart = chartBox(box, { tableLabel: L.table });
  chart.fig.dataset.testid = "attention.unmasked_chart";
  follow(root, data, (sent, layer, head) => {
    const m = sent.mask;
    const n = m.n;
    if (!m.w) m.w = unpackU16(m.weights);
    const w = m.w.subarray(head * n * n, (head + 1) * n * n);
    value.textContent = `${formatNumber(100 * m.future[head], lang, 0)}%`;
    const title = fill(L.title, { layer, head });
    chart.fig.setAttribute("aria-label", title);
    const z = [];
    const hover = [];
    for (let i = 0; i < n; i++) {
      z.push(Array.from(w.subarray(i * n, (i + 1) * n)));
      hover.push(z[i].map((x, j) => fill(L.hover, { q: data.ticks[i], i, k: data.ticks[j], j, w: x.toFixed(3) })));
    }
    const ticks = { tickmode: "array", tickvals: data.ticks.map((_, i) => i), ticktext: data.ticks,
      tickfont: { size: n > 24 ? 10 : 12 } };
    const spec = { data: [{ type: "heatmap", z, zmin: 0, zmax: 1, colorscale: data.colorscale, text: hover, hoverinfo: "text",
      colorbar: { title: { text: L.weight }, thickness: 12 }, xgap: 1, ygap: 1 }],
    layout: { xaxis: Object.assign({ title: { text: L.x }, side: "top" }, ticks),
      yaxis: Object.assign({ title: { text: L.y }, autorange: "reversed" }, ticks),
      height: Math.min(800, Math.max(340, 22 * n + 200)), margin: { l: 10, r: 10, t: 130, b: 10 },
      title: { text: title, y: 0.99, yanchor: "top", x: 0.01 },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", separators: lang === "it" ? ",." : ".," } };
    const state = JSON.stringify({ layer, head });
    box.dataset.state = state;
    draw(chart.plot, data, spec, () => { box.dataset.drawn = state; });
    chart.table(() => [[L.corner].concat(data.tokens), z.map((r, i) => [data.tokens[i]].concat(
      r.map((x) => formatNumber(x, lang, 4))))]);
  }, status);
}

// ------------------------------------------------------------------ flash attention

/** The tile size to start from: a link's (once), else the learner's last, else the default. */
function startBlock(data, options) {
  const ok = (b) => options.includes(Number(b));
  const token = data.chosen.token;
  if (token && data.asked_block !== null && store().get(FLASH_TOKEN, "") !== token) {
    store().set(FLASH_TOKEN, token);
    if (ok(data.asked_block)) return Number(data.asked_block);
  }
  const kept = (store().get(CHOSEN, null) || {}).block;
  return ok(kept) ? Number(kept) : data.default;
}

function buildFlash(root, data) {
  const L = data.labels;
  const lang = data.lang;
  const { box, status } = frame(root, data);
  const options = data.options.map((o) => o.block);
  let block = startBlock(data, options);
  if (data.total > data.n) el(box, "p", "itt-help").textContent = fill(L.cut, { n: formatNumber(data.n, lang),
    total: formatNumber(data.total, lang) });
  const cols = el(box, "div", "itt-columns");
  const left = el(cols, "div", "itt-side");
  const right = el(cols, "div", "itt-wide");
  const controls = el(left, "div", "itt-controls");
  const wrap = el(controls, "div", "itt-control");
  const id = `itt-flash-block-${Math.random().toString(36).slice(2, 8)}`;
  const lab = el(wrap, "label", "itt-label");
  lab.htmlFor = id;
  lab.textContent = L.block;
  const pick = el(wrap, "select", "itt-select");
  pick.id = id;
  pick.dataset.testid = "attention.block";
  for (const b of options) {
    const o = el(pick, "option");
    o.value = String(b);
    o.textContent = formatNumber(b, lang);
  }
  pick.value = String(block);
  const stepBox = el(controls, "div");
  const tile = el(left, "p", "itt-help");
  tile.dataset.testid = "attention.flash.tile";
  const rowsBox = el(left, "div", "itt-table itt-table-box");
  const chart = chartBox(right, { tableLabel: L.table });
  chart.fig.dataset.testid = "attention.flash_chart";
  const metrics = el(box, "div", "itt-metrics");
  const diff = metric(metrics, { label: L.diff, testid: "attention.flash.diff" }).value;
  const naive = metric(metrics, { label: L.naive_mem, testid: "attention.flash.naive_mem" }).value;
  const tiled = metric(metrics, { label: L.tiled_mem, testid: "attention.flash.tiled_mem" }).value;
  const far = el(box, "p", "itt-help");

  let current = null; // { sent, layer, head }
  let walk = null;
  let stepInput = null;
  let step = 1;
  const rowsOf = (sent, head) => {
    const f = sent.flash;
    if (!f.values) f.values = unpackF32(f.scores);
    f.rows = f.rows || {};
    if (!f.rows[head]) f.rows[head] = lowerRows(f.values, f.n, (head * f.n * (f.n + 1)) / 2);
    return f.rows[head];
  };
  const drawStep = () => {
    const { sent, layer, head } = current;
    const f = sent.flash;
    const s = walk.steps[step - 1];
    tile.textContent = fill(L.tile, { step: formatNumber(step, lang), total: formatNumber(walk.steps.length, lang),
      q0: formatNumber(s.q0, lang), q1: formatNumber(s.q1 - 1, lang), k0: formatNumber(s.k0, lang),
      k1: formatNumber(s.k1 - 1, lang), skipped: formatNumber(walk.skipped.length, lang) });
    tableOf(rowsBox, { testid: "attention.flash_rows", head: ["", L.max, L.sum, L.rescale],
      rows: s.rowMax.map((m, r) => [data.tokens[s.q0 + r], num(m, lang, 3), num(s.rowSum[r], lang, 3), num(s.rescale[r], lang, 3)]) });
    const z = tileStates(walk, step);
    const names = [L.todo, L.skipped, L.done, L.current];
    const span = (i) => `${i * block}–${Math.min(f.n, (i + 1) * block) - 1}`;
    const hover = z.map((r, i) => r.map((v, j) => `${names[v]} · q ${span(i)} · k ${span(j)}`));
    const few = walk.nQ <= 16;
    const ticks = z.map((_, i) => span(i));
    const yaxis = { autorange: "reversed", title: { text: L.y }, tickmode: few ? "array" : "auto" };
    const xaxis = { title: { text: L.x }, side: "top", tickmode: few ? "array" : "auto" };
    if (few) {
      Object.assign(yaxis, { tickvals: ticks.map((_, i) => i), ticktext: ticks });
      Object.assign(xaxis, { tickvals: ticks.map((_, i) => i), ticktext: ticks });
    }
    const scale = [];
    data.colours.forEach((c, i) => { scale.push([i / 4, c], [(i + 1) / 4, c]); });
    const spec = { data: [{ type: "heatmap", z, zmin: 0, zmax: 4, colorscale: scale, showscale: false, xgap: 2, ygap: 2,
      text: hover, hoverinfo: "text" }],
    layout: { xaxis, yaxis, height: Math.min(560, Math.max(280, 22 * walk.nQ + 140)), margin: { l: 10, r: 10, t: 70, b: 10 },
      plot_bgcolor: "#ffffff", paper_bgcolor: "rgba(0,0,0,0)" } };
    const aria = `${L.y} × ${L.x}: ${tile.textContent}`;
    chart.fig.setAttribute("aria-label", aria);
    const state = JSON.stringify({ layer, head, block, step });
    box.dataset.state = state;
    draw(chart.plot, data, spec, () => { box.dataset.drawn = state; });
    chart.table(() => [[L.corner].concat(ticks), z.map((r, i) => [ticks[i]].concat(r.map((v) => names[v])))]);
    store().set(FLASH_STEP, step);
  };
  const laterStep = perFrame(drawStep);
  const drawBlock = () => {
    const { sent, head } = current;
    const f = sent.flash;
    const option = f.options.find((o) => o.block === block) || f.options[0];
    walk = flashWalk(rowsOf(sent, head), block, f.window);
    const total = walk.steps.length;
    step = Math.min(Math.max(Number(store().get(FLASH_STEP, 1)) || 1, 1), total);
    const focused = stepInput && document.activeElement === stepInput;
    stepBox.replaceChildren();
    stepInput = null;
    if (total > 1) {
      stepInput = slider(stepBox, { label: L.step, min: 1, max: total, step: 1, value: step,
        format: (v) => formatNumber(v, lang), testid: "attention.step" });
      stepInput.addEventListener("input", () => { step = Number(stepInput.value); laterStep(); });
      if (focused) stepInput.focus({ preventScroll: true });
    }
    diff.textContent = option.diff[head];
    naive.textContent = `${formatNumber(option.naive / 1024, lang, 1)} KiB`;
    tiled.textContent = `${formatNumber(option.tiled / 1024, lang, 1)} KiB`;
    far.textContent = fill(L.mem_caption, { far: formatNumber(data.far, lang), naive: formatNumber(option.far_naive / 1e9, lang, 1),
      tiled: formatNumber(option.far_tiled / 1e6, lang, 2) });
    drawStep();
  };
  pick.addEventListener("change", () => {
    block = Number(pick.value);
    store().set(CHOSEN, Object.assign({}, store().get(CHOSEN, {}), { block }));
    if (current) drawBlock();
  });
  follow(root, data, (sent, layer, head) => {
    current = { sent, layer, head };
    drawBlock();
  }, status);
}

// ------------------------------------------------------------------ why divide by √d_head

/** The d_head to start from: a link's (once), else the learner's last, else the model's own. */
function startDh(data, options) {
  const ok = (v) => options.includes(Number(v));
  const token = data.chosen.token;
  if (token && data.asked_dh !== null && store().get(SCALING_TOKEN, "") !== token) {
    store().set(SCALING_TOKEN, token);
    if (ok(data.asked_dh)) return Number(data.asked_dh);
  }
  const kept = (store().get(CHOSEN, null) || {}).dh;
  return ok(kept) ? Number(kept) : data.default;
}

function buildScaling(root, data) {
  const L = data.labels;
  const lang = data.lang;
  const { box } = frame(root, data);
  const values = data.options.map((o) => o.dh);
  let index = values.indexOf(startDh(data, values));
  const controls = el(box, "div", "itt-controls");
  const input = slider(controls, { label: L.dh, min: 0, max: values.length - 1, step: 1, value: index,
    format: (i) => formatNumber(values[i], lang), testid: "attention.dh" });
  const row = el(box, "div", "itt-metrics");
  const metrics = ["var_raw", "var_scaled", "max_raw", "max_scaled"].map((k) => [k, metric(row, { label: L[k], testid: `attention.scaling.${k}` }).value]);
  const chart = chartBox(box, { tableLabel: L.table });
  chart.fig.dataset.testid = "attention.scaling_chart";
  chart.fig.setAttribute("aria-label", `${L.spread} · ${L.row}`);
  el(box, "p", "itt-help").textContent = L.caption;
  const show = () => {
    const o = data.options[index];
    for (const [k, value] of metrics) {
      value.textContent = k.startsWith("var") ? formatNumber(o[k], lang, k === "var_raw" ? 1 : 2)
        : `${formatNumber(100 * o[k], lang, 0)}%`;
    }
    const bars = (h, name, colour) => ({ type: "bar", name, x: h.counts.map((_, i) => h.lo + (i + 0.5) * h.width),
      y: h.counts, width: h.width, opacity: 0.6, marker: { color: colour }, xaxis: "x", yaxis: "y" });
    const keys = o.weights_raw.map((_, j) => fill(L.key, { j }));
    const pair = (w, name, colour, offset) => ({ type: "bar", name, x: keys, y: w, width: 0.4, offset, marker: { color: colour },
      showlegend: false, xaxis: "x2", yaxis: "y2" });
    const title = (text, x) => ({ text, x, y: 1, xref: "paper", yref: "paper", xanchor: "center", yanchor: "bottom", showarrow: false });
    const spec = { data: [bars(o.raw, L.raw, data.palette[1]), bars(o.scaled, L.scaled, data.palette[0]),
      pair(o.weights_raw, L.raw, data.palette[1], -0.4), pair(o.weights_scaled, L.scaled, data.palette[0], 0)],
    layout: { barmode: "overlay", height: 340, margin: { l: 10, r: 10, t: 40, b: 10 },
      xaxis: { domain: [0, 0.45] }, yaxis: { anchor: "x" }, xaxis2: { domain: [0.55, 1], anchor: "y2" },
      yaxis2: { anchor: "x2", range: [0, 1] }, annotations: [title(L.spread, 0.225), title(L.row, 0.775)],
      legend: { orientation: "h", y: -0.15 }, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      separators: lang === "it" ? ",." : ".," } };
    const state = JSON.stringify({ dh: o.dh });
    box.dataset.state = state;
    draw(chart.plot, data, spec, () => { box.dataset.drawn = state; });
    chart.table((into) => {
      const one = el(into, "div");
      const two = el(into, "div");
      tableOf(one, { caption: L.row, head: ["", L.raw, L.scaled],
        rows: keys.map((k, j) => [k, formatNumber(o.weights_raw[j], lang, 3), formatNumber(o.weights_scaled[j], lang, 3)]) });
      const bins = (h, name) => h.counts.map((c, i) => [name, formatNumber(h.lo + i * h.width, lang, 2),
        formatNumber(h.lo + (i + 1) * h.width, lang, 2), formatNumber(c, lang)]);
      tableOf(two, { caption: L.spread, head: ["", L.from, L.to, L.count], rows: bins(o.raw, L.raw).concat(bins(o.scaled, L.scaled)) });
    });
  };
  const later = perFrame(show);
  input.addEventListener("input", () => {
    index = Number(input.value);
    store().set(CHOSEN, Object.assign({}, store().get(CHOSEN, {}), { dh: values[index] }));
    later();
  });
  show();
}

// ------------------------------------------------------------------ mount

const PARTS = { formula: buildFormula, mask: buildMask, flash: buildFlash, scaling: buildScaling };

export function mount(root, data) {
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  if (data.part === "scaling") { keepFocus(root, () => buildScaling(root, data)); return; }
  if (root.__ittText !== data.text_key) { root.__ittLayers = new Map(); root.__ittText = data.text_key; }
  const sent = { formula: null, mask: null, flash: null };
  sent[data.part] = data.part === "mask" ? { n: data.n, weights: data.weights, future: data.future }
    : data.part === "flash" ? { n: data.n, window: data.window, scores: data.scores, options: data.options }
      : { n: data.n, d: data.d, more: data.more, mask: data.mask, heads: data.heads, captions: data.captions,
        share: data.share, o: data.o, proj: data.proj };
  root.__ittLayers.set(data.layer, sent);
  keepFocus(root, () => PARTS[data.part](root, data));
}

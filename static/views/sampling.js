// The next-token distribution, its filters and one draw, answered in the browser.
//
// The server sends the last position's logits once per text (sorted from the best token down,
// packed as 16-bit integers: lib/serving/payload.py) with the labels of the best candidates. Every move of
// temperature, top-k, top-p or the seed is worked out here, with the same rules as lib/lessons/sampling.py
// (filter_steps, seed_uniform, draw_at); tests/js/sampling.test.js holds the two together on
// fixtures that tests/test_views.py writes from lib.

import {
  boxValue, chartBox, clearView, drawChart, el, fill, formatNumber, keepFocus, linkedSettings, metric, noteBox, numberBox, pct,
  perFrame, plotlyText, slider, store, unpackU16, viewBox,
} from "./common.js";

// ------------------------------------------------------------------ the maths (as lib/lessons/sampling.py)

/** Probabilities from scores; -Infinity gets 0 (the maximum subtracted first). */
export function softmax(x) {
  let m = -Infinity;
  for (const v of x) if (v > m) m = v;
  const z = new Float64Array(x.length);
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    z[i] = x[i] === -Infinity ? 0 : Math.exp(x[i] - m);
    s += z[i];
  }
  for (let i = 0; i < x.length; i++) z[i] /= s;
  return z;
}

/**
 * lib/lessons/sampling.py's filter_steps on logits already sorted from the highest down (ties in id
 * order), so every filter keeps a prefix: temperature, then top-k (ties with the k-th score
 * kept), then top-p (drop from the bottom while what is dropped is <= 1 - p; the best stays).
 * top_k 0 or >= V is off; top_p 1 is off; temperature 0 is greedy.
 */
export function filterSteps(sorted, temperature, topK, topP) {
  const v = sorted.length;
  const k = topK >= v ? 0 : topK;
  const model = softmax(sorted);
  if (temperature === 0) {
    const one = new Float64Array(v);
    one[0] = 1;
    return { greedy: true, temperature, topK: k, topP, model, tempered: one, topKProbs: one, final: one,
             keptK: 1, keptP: 1, cumulative: new Float64Array(v).fill(1) };
  }
  const scaled = sorted.map((x) => x / temperature);
  const tempered = softmax(scaled);
  let keptK = v;
  if (k) {
    const kth = scaled[k - 1];
    keptK = k;
    while (keptK < v && scaled[keptK] >= kth) keptK++;
  }
  const masked = scaled.map((x, i) => (i < keptK ? x : -Infinity));
  const topKProbs = softmax(masked);
  const cumulative = new Float64Array(v);
  let run = 0;
  for (let i = 0; i < v; i++) { run += topKProbs[i]; cumulative[i] = run; }
  let keptP = keptK;
  if (topP < 1) {
    let below = 0;
    for (let i = v - 1; i >= 1; i--) {
      below += topKProbs[i];
      if (below <= 1 - topP) keptP = Math.min(keptP, i);
      else break;
    }
  }
  const final = softmax(scaled.map((x, i) => (i < keptP ? x : -Infinity)));
  return { greedy: false, temperature, topK: k, topP, model, tempered, topKProbs, final, keptK, keptP, cumulative };
}

/** Shannon entropy in nats. */
export function entropy(p) {
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log(x);
  return h;
}

const MASK64 = (1n << 64n) - 1n;

/** lib/lessons/sampling.py's seed_uniform: one SplitMix64 step, its top 53 bits, in [0, 1). */
export function seedUniform(seed) {
  let z = (BigInt(seed) + 0x9E3779B97F4A7C15n) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  z ^= z >> 31n;
  return Number(z >> 11n) / 2 ** 53;
}

/** lib/lessons/sampling.py's draw_at on probabilities in sorted order: the index whose CDF slice holds u. */
export function drawAt(probs, u) {
  // Best first, ties in index order (a stable sort); the view's probabilities are in that order already.
  let sortedAlready = true;
  for (let i = 1; i < probs.length && sortedAlready; i++) sortedAlready = probs[i] <= probs[i - 1];
  const order = sortedAlready ? Array.from(probs.keys())
    : Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a] || a - b);
  let total = 0;
  const cdf = order.map((i) => (total += probs[i]));
  const target = u * total;
  let i = 0;
  while (i < cdf.length && cdf[i] <= target) i++; // searchsorted(side="right")
  let nonzero = 0;
  for (const p of probs) if (p !== 0) nonzero++;
  return order[Math.min(i, nonzero - 1)];
}

// ------------------------------------------------------------------ the view

function figure(steps, data, drawn) {
  const L = data.labels;
  const n = data.tokens.length;
  const x = Array.from({ length: n }, (_, i) => i);
  const lang = data.lang;
  const hover = data.tokens.map((tok, i) => fill(L.hover, { token: plotlyText(tok), id: data.ids[i],
    model: pct(steps.model[i], lang), final: pct(steps.final[i], lang) }));
  const traces = [
    { type: "bar", x, y: Array.from(steps.model.subarray(0, n)), name: L.model, marker: { color: data.grey },
      hovertext: hover, hoverinfo: "text" },
    { type: "bar", x, y: Array.from(steps.final.subarray(0, n)), name: L.final, marker: { color: data.palette[0] },
      hovertext: hover, hoverinfo: "text" },
  ];
  const shapes = [];
  const notes = [];
  if (!steps.greedy) {
    traces.push({ type: "scatter", x, y: Array.from(steps.cumulative.subarray(0, n)), name: L.cumulative,
      mode: "lines+markers", line: { color: data.palette[1] }, hoverinfo: "skip" });
    if (steps.topP < 1) {
      shapes.push({ type: "line", x0: 0, x1: 1, xref: "x domain", y0: steps.topP, y1: steps.topP, yref: "y",
        line: { color: data.palette[3], dash: "dash" } });
      notes.push({ showarrow: false, text: fill(L.cut, { p: formatNumber(steps.topP, lang, 2) }), x: 0,
        xanchor: "left", xref: "x domain", y: steps.topP, yanchor: "bottom", yref: "y" });
    }
  }
  if (drawn !== null && drawn < n) {
    notes.push({ x: drawn, y: steps.final[drawn], text: L.drawn, showarrow: true, arrowhead: 2, ay: -40,
      font: { color: data.palette[3] } });
  }
  const layout = Object.assign({}, data.layout, {
    shapes, annotations: notes,
    xaxis: Object.assign({}, data.layout.xaxis, { tickvals: x, ticktext: data.tokens.map(plotlyText) }),
  });
  return { data: traces, layout };
}

/** The chart's table: every candidate, its token the row's header ([head, rows, rowHeader] for table). */
function candidates(steps, data) {
  const L = data.labels;
  const lang = data.lang;
  const head = [L.rank, L.token, L.model, L.final].concat(steps.greedy ? [] : [L.cumulative]);
  const rows = data.tokens.map((tok, i) => [formatNumber(i + 1, lang), tok, formatNumber(steps.model[i], lang, 4),
    formatNumber(steps.final[i], lang, 4)].concat(steps.greedy ? [] : [formatNumber(steps.cumulative[i], lang, 4)]));
  return [head, rows, 1];
}

/** Reads the settings from the store (a share link's values, sent by the server, win once). */
function startSettings(data) {
  return linkedSettings("sampling", data.settings);
}

function build(root, data, component) {
  const L = data.labels;
  const lang = data.lang;
  const st = startSettings(data);
  clearView(root);
  const box = viewBox(root, "itt-sampling", "sampling");
  const controls = el(box, "div", "itt-controls");
  const fmt2 = (v) => formatNumber(v, lang, 2);
  const temp = slider(controls, { label: L.temperature, help: L.temperature_help, min: 0, max: 2, step: 0.05,
    value: st.temperature, format: fmt2, testid: "sampling.temperature" });
  const topK = numberBox(controls, { label: L.top_k, help: L.top_k_help, min: 0, max: data.top_k_max, step: 1,
    value: st.top_k, testid: "sampling.top_k" });
  const topP = slider(controls, { label: L.top_p, help: L.top_p_help, min: 0, max: 1, step: 0.01,
    value: st.top_p, format: fmt2, testid: "sampling.top_p" });
  const note = noteBox(box);
  const main = el(box, "div", "itt-columns");
  const left = el(main, "div", "itt-wide");
  const { plot, table: toTable } = chartBox(left, { label: L.title, tableLabel: L.table, height: data.layout.height });
  const right = el(main, "div", "itt-side");
  const mKept = metric(right, { label: L.kept }).value;
  const mTop = metric(right, { label: L.top }).value;
  const mEff = metric(right, { label: L.effective, help: L.effective_help }).value;
  const mRest = metric(right, { label: L.rest, help: L.rest_help }).value;
  const drawRow = el(box, "div", "itt-draw");
  const seed = numberBox(drawRow, { label: L.seed, help: L.seed_help, min: 0, max: data.seed_max, step: 1,
    value: st.seed, testid: "sampling.seed" });
  const button = el(drawRow, "button", "itt-button");
  button.type = "button";
  button.textContent = L.sample;
  button.dataset.testid = "sampling.sample";
  const result = el(box, "p", "itt-result");
  result.setAttribute("aria-live", "polite");
  result.dataset.testid = "sampling.result";
  const sorted = unpackU16(data.logits);
  let drawn = Boolean(st.drawn);

  const settings = () => ({
    temperature: Number(temp.value), top_k: boxValue(topK, data.settings.top_k), top_p: Number(topP.value),
    seed: boxValue(seed, data.settings.seed), drawn,
  });
  const update = () => {
    const now = settings();
    store().set("sampling.settings", now);
    const steps = filterSteps(sorted, now.temperature, now.top_k, now.top_p);
    const notes = [];
    if (now.temperature === 0) notes.push(L.greedy_note);
    else {
      if (now.top_k >= sorted.length) notes.push(fill(L.top_k_all, { k: formatNumber(now.top_k, lang), vocab: formatNumber(sorted.length, lang) }));
      if (now.top_p === 0) notes.push(L.top_p_zero);
    }
    note(notes);
    let at = null;
    if (drawn) {
      const u = seedUniform(now.seed);
      at = drawAt(steps.final, u);
      const token = at < data.tokens.length ? data.tokens[at] : null;
      result.textContent = fill(L.result, { seed: String(now.seed), u: formatNumber(u, lang, 4),
        token: token === null ? fill(L.rank_only, { rank: formatNumber(at + 1, lang) }) : token,
        p: pct(steps.final[at], lang), rank: formatNumber(at + 1, lang) });
    } else {
      result.textContent = L.prompt;
    }
    mKept.textContent = formatNumber(steps.keptP, lang);
    mTop.textContent = `“${data.tokens[0]}” ${pct(steps.final[0], lang)}`;
    mEff.textContent = formatNumber(Math.exp(entropy(steps.final)), lang, 1);
    let shown = 0;
    for (let i = 0; i < data.tokens.length; i++) shown += steps.model[i];
    mRest.textContent = pct(Math.max(1 - shown, 0), lang);
    const spec = figure(steps, data, at);
    box.dataset.state = JSON.stringify({ temperature: now.temperature, top_k: now.top_k, top_p: now.top_p, seed: now.seed });
    drawChart(plot, data.plotly, spec, data.config, L.unavailable)
      .then((drawn) => { if (drawn) box.dataset.drawn = box.dataset.state; });
    toTable(() => candidates(steps, data));
  };
  const later = perFrame(update);
  for (const input of [temp, topK, topP, seed]) input.addEventListener("input", later);
  button.addEventListener("click", () => { drawn = true; update(); });
  root.__ittSettings = settings;
  update();
}

export function mount(root, data, component) {
  // The same data again (a rerun of the page): nothing to redo, the learner's settings stay.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  keepFocus(root, () => build(root, data, component));
}

// The KV-cache lesson's calculator, the cache variants at its context, and the training, serving
// and experts' sections that price its choice, answered in the browser.
//
// The server sends every model as a few numbers (lib/lessons/kvcache.py's spec: its layers grouped by
// kind, window and numbers per token, its parameters, its attention width) once per model and
// language. Every move of the preset, the context, the users, the card, the number formats or
// the learner's own numbers is worked out here with the formulas of lib/model/arithmetic.py
// (kv_cache_bytes, users_that_fit, forward_flops_per_token, attention_flops, decode_step,
// training_memory...); tests/js/kvcache.test.js holds the two together on fixtures that
// tests/views_fixtures.py writes from lib, exact for bytes.
//
// One module, five mounts on the page ("calc", "variants", "train", "serve", "moe"): the
// calculator publishes its settings and the model it prices in the page store, the others follow.

import {
  chartBox, drawChart, el, fill, formatNumber, metric, noteBox, numberBox, perFrame, radios, select, slider, store, table,
  viewBox, viewHost,
} from "./common.js";

// ------------------------------------------------------------------ the maths (as lib/model/arithmetic.py)

/** LayerCache.tokens_held: a linear layer holds none, a sliding one at most its window. */
export function tokensHeld(kind, window, tokens) {
  if (kind === "linear") return 0;
  if (kind === "sliding" && window) return Math.min(tokens, window);
  return tokens;
}

/** kv_cache_bytes from a spec: Σ numbers × tokens held × layers, × batch × bytes per number. */
export function kvBytes(spec, tokens, dtypeBytes, batch = 1) {
  let perSequence = 0;
  for (const [kind, window, numbers, count] of spec.layers) perSequence += numbers * tokensHeld(kind, window, tokens) * count;
  return perSequence * batch * dtypeBytes;
}

/** kv_bytes_per_token: what one more token costs in the layers whose cache grows forever. */
export function kvPerToken(spec, dtypeBytes) {
  let n = 0;
  for (const [kind, , numbers, count] of spec.layers) if (kind === "full") n += numbers * count;
  return n * dtypeBytes;
}

/** How many layers of each kind: {full, sliding, linear}. */
export function layerCounts(spec) {
  const out = { full: 0, sliding: 0, linear: 0 };
  for (const [kind, , , count] of spec.layers) out[kind] += count;
  return out;
}

/** Python's float floor division (CPython's float_floor_div): exact where Math.floor(a / b) can be one off. */
export function floorDiv(a, b) {
  const mod = a % b; // fmod
  let div = (a - mod) / b;
  if (mod && (b < 0) !== (mod < 0)) div -= 1;
  if (!div) return 0;
  let f = Math.floor(div);
  if (div - f > 0.5) f += 1;
  return f;
}

/** users_that_fit: users' caches beside the weights on one card; null when no cache grows. */
export function usersThatFit(cardBytes, weightBytes, perUser) {
  const free = cardBytes - weightBytes;
  if (free <= 0) return 0;
  if (perUser <= 0) return null;
  return floorDiv(free, perUser);
}

/** lib/lessons/kvcache.py's calculate: weights once, every user's cache, and the users that fit. */
export function calculate(spec, tokens, users, cacheBytes, weightPerParam, cardGb) {
  const weights = (spec.params || 0) * weightPerParam;
  const perUser = kvBytes(spec, tokens, cacheBytes);
  const total = weights + perUser * users;
  const card = cardGb * 1e9;
  return { tokens, users, weights, perUser, perToken: kvPerToken(spec, cacheBytes), cacheTotal: perUser * users,
           total, card, usersFit: usersThatFit(card, weights, perUser), fits: total <= card };
}

/** The learner's own numbers as a Llama-style config (untied, no biases): its spec, with
 * lib/model/arithmetic.py's count_params for that config. KV heads above the query heads become the query heads. */
export function customSpec(f) {
  const L = f.num_hidden_layers, H = f.num_attention_heads, Dh = f.head_dim, D = f.hidden_size;
  const F = f.intermediate_size, V = f.vocab_size;
  const Hkv = Math.min(f.num_key_value_heads, H);
  const attn = D * H * Dh + 2 * D * Hkv * Dh + H * Dh * D;
  const params = V * D + L * (attn + 3 * D * F + 2 * D) + D + V * D;
  return { layers: [["full", null, 2 * Hkv * Dh, L]], params, width: 2 * H * Dh, mla: false };
}

/** lib/lessons/kvcache.py's cache_variants from the variants' specs: bytes, average per token, saving on MHA. */
export function variantRows(variants, tokens, dtypeBytes) {
  const bytes = variants.map((v) => kvBytes(v.spec, tokens, dtypeBytes));
  const mha = bytes[0];
  return variants.map((v, i) => ({ kind: v.kind, bytes: bytes[i], perToken: tokens ? bytes[i] / tokens : 0,
                                   saving: bytes[i] ? mha / bytes[i] : Infinity }));
}

/** forward_flops_per_token: 2·N plus 2 × tokens attended × the attention's width. */
export function forwardFlopsPerToken(spec, context, nParams) {
  let attended = 0;
  for (const [kind, window, , count] of spec.layers) attended += tokensHeld(kind, window, context) * count;
  return 2 * nParams + 2 * attended * spec.width;
}

/** attention_flops over a whole sequence; a local layer reads at most its window. */
export function attentionFlops(spec, tokens, causal = false) {
  const pairs = causal ? tokens * (tokens + 1) / 2 : tokens * tokens;
  let total = 0;
  for (const [kind, window, , count] of spec.layers) {
    let one = pairs;
    if (kind === "sliding" && window && tokens > 0) {
      const w = Math.min(window, tokens);
      one = w * (w + 1) / 2 + (tokens - w) * w;
    }
    for (let i = 0; i < count; i++) total += one; // layer by layer, as lib adds them
  }
  return 2 * spec.width * total;
}

/** decode_step without a compute bound: every step reads the weights once and each user's cache. */
export function decodeStep(weightBytes, perUser, users, bandwidth) {
  const cache = perUser * users;
  const seconds = (weightBytes + cache) / bandwidth;
  return { users, cacheBytes: cache, seconds, tokensPerS: users / seconds, perUser: 1 / seconds,
           cacheShare: weightBytes + cache ? cache / (weightBytes + cache) : 0 };
}

export const trainingFlops = (nParams, nTokens) => 6 * nParams * nTokens;
export const trainingDays = (flops, gpus, peak, utilization) => flops / (gpus * peak * utilization) / 86400;

const OPTIMIZER_STATE_BYTES = { adam: 8, muon: 4 };

/** training_memory: bytes per card, ZeRO sharding by stage over the cards. */
export function trainingMemory(nParams, optimizer, gpus, stage) {
  const share = (from) => (stage >= from ? 1 / gpus : 1);
  const parts = { weights: 2 * nParams * share(3), gradients: 2 * nParams * share(2), master: 4 * nParams * share(1),
                  optimizer: OPTIMIZER_STATE_BYTES[optimizer] * nParams * share(1) };
  parts.total = parts.weights + parts.gradients + parts.master + parts.optimizer;
  return parts;
}

/** dense_vs_moe in bf16: memory for every expert, compute for the active ones. */
export function denseVsMoe(total, active = total) {
  return { total, active, flops: 2 * active, memory: total * 2, share: active / total };
}

/** lib/lessons/kvcache.py's clamp: a typed value forced into [lo, hi] (empty or not a number: lo). */
export function clamp(value, lo, hi, integer = true) {
  const x = value === "" || value === null || value === undefined ? NaN : Number(value);
  let out = Number.isNaN(x) ? lo : Math.min(Math.max(x, lo), hi);
  if (integer) out = Math.trunc(out);
  return { value: out, changed: out !== x };
}

// ---------------------------------------------------------- numbers for people (ui/lessons/kvcache/sections.py)

/** size: decimal units, three significant digits at most (1.07 GB, 13.1 GB, 840 GB). */
export function size(b, lang) {
  for (const [unit, scale] of [["TB", 1e12], ["GB", 1e9], ["MB", 1e6], ["KB", 1e3]]) {
    if (b >= scale) {
      const x = b / scale;
      return `${formatNumber(x, lang, x < 10 ? 2 : x < 100 ? 1 : 0)} ${unit}`;
    }
  }
  return `${formatNumber(b, lang, 0)} B`;
}

export const kib = (b, lang) => `${formatNumber(b / 1024, lang, 1)} KiB`;

const SUPERSCRIPT = { 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹", "-": "⁻" };

/** sci: 7.2 × 10²³. */
export function sci(x, lang, digits = 1) {
  const exp = x ? Math.floor(Math.log10(Math.abs(x))) : 0;
  return `${formatNumber(x / 10 ** exp, lang, digits)} × 10${String(exp).replace(/./g, (c) => SUPERSCRIPT[c])}`;
}

export function flops(x, lang) {
  for (const [unit, scale] of [["PFLOP", 1e15], ["TFLOP", 1e12], ["GFLOP", 1e9], ["MFLOP", 1e6]]) {
    if (x >= scale) return `${formatNumber(x / scale, lang, 1)} ${unit}`;
  }
  return `${formatNumber(x, lang, 0)} FLOP`;
}

/** ui/shell/core.py's big: a count with its unit word (8.03 B, 134.5 M). */
export function big(n, lang, units) {
  if (n >= 1e9) return `${formatNumber(n / 1e9, lang, 2)} ${units.billion}`;
  if (n >= 1e6) return `${formatNumber(n / 1e6, lang, 1)} ${units.million}`;
  return formatNumber(n, lang);
}

/** A contexts' tick: 8K, 100,000, 1M. */
export function tick(n, lang) {
  if (n === 2 ** 20) return "1M";
  return n % 1024 === 0 ? `${formatNumber(n / 1024, lang)}K` : formatNumber(n, lang);
}

// ------------------------------------------------------------------ the page's pieces

/** A sentence of a label with its **bold** and inline $maths$ (× and · written out), as DOM nodes. */
function rich(parent, text) {
  parent.replaceChildren();
  for (const piece of text.split(/(\*\*[^*]+\*\*|\$[^$]+\$)/)) {
    if (!piece) continue;
    if (piece.startsWith("**")) el(parent, "strong").textContent = piece.slice(2, -2);
    else if (piece.startsWith("$")) {
      el(parent, "em").textContent = piece.slice(1, -1).replace(/\\cdot/g, "·").replace(/\\times/g, "×")
        .replace(/\^2/g, "²").replace(/\\,/g, " ").replace(/\s+/g, " ").trim();
    } else parent.appendChild(document.createTextNode(piece));
  }
}

/** Draws a chart of the lesson, then `done()` (plotly's own responsive resizing on). */
function draw(data, plot, spec, done) {
  drawChart(plot, data.plotly, spec, Object.assign({}, data.config, { responsive: true }), data.labels["views.unavailable"])
    .then((drawn) => { if (drawn) done(); });
}

function baseLayout(data, extra) {
  const layout = Object.assign({ autosize: true, separators: data.separators, margin: { l: 10, r: 10, t: 40, b: 10 },
                                 font: { family: '"Source Sans", sans-serif' } }, extra);
  // Room for the ticks and the axes' titles, as plotly.py's template gives its charts.
  layout.xaxis = Object.assign({ automargin: true }, layout.xaxis);
  layout.yaxis = Object.assign({ automargin: true }, layout.yaxis);
  return layout;
}

/** A number box that clamps what is typed, with the calculator's notice (kvcache.clamped). */
function clampedBox(parent, { label, value, lo, hi, integer, step, testid, help }) {
  const input = numberBox(parent, { label, help, min: lo, max: hi, step: step || (integer ? 1 : "any"), value, testid });
  input.inputMode = integer ? "numeric" : "decimal";
  return {
    input,
    read(notes, L, lang) {
      const c = clamp(input.value, lo, hi, integer);
      if (c.changed) notes.push(fill(L["kvcache.clamped"], { what: label, given: input.value, used: formatNumber(c.value, lang) }));
      return c.value;
    },
  };
}

// ------------------------------------------------------------------ settings kept in the page store

const SETTINGS = "kvcache.settings";
const PRICED = "kvcache.priced";

/** The calculator's settings: the store's, except that a share link's values (and a newly pasted
 * config, which is then picked) win once. */
function startSettings(data) {
  const s = store();
  const given = data.settings;
  let now = Object.assign({ preset: "live", custom: {} }, given, s.get(SETTINGS, {}));
  if (given.from_link && s.get("kvcache.link") !== given.from_link) {
    s.set("kvcache.link", given.from_link);
    now = Object.assign(now, given);
  }
  if (given.pasted && s.get("kvcache.pasted") !== given.pasted) {
    s.set("kvcache.pasted", given.pasted);
    now.preset = "pasted";
  }
  if (!data.presets.some((p) => p.key === now.preset)) now.preset = "live";
  if (!(now.cache in data.cache_dtypes)) now.cache = "bf16";
  if (!(now.weights in data.weight_dtypes)) now.weights = "bf16";
  return now;
}

// ------------------------------------------------------------------ the calculator

function calcFigure(c, data) {
  const L = data.labels, lang = data.lang, P = data.palette, gb = 1e9;
  const x = [L["kvcache.chart.one_user"], fill(L["kvcache.chart.all_users"], { n: formatNumber(c.users, lang) })];
  const traces = [
    { type: "bar", x, y: [c.weights / gb, c.weights / gb], name: L["kvcache.weights"], marker: { color: P[0] } },
    { type: "bar", x, y: [c.perUser / gb, c.cacheTotal / gb], name: L["kvcache.chart.cache"], marker: { color: P[1] },
      text: [size(c.perUser, lang), size(c.cacheTotal, lang)], textposition: "auto" },
  ];
  let top = Math.max(c.total, c.weights, 1.0) / gb * 1.15;
  const label = fill(L["kvcache.chart.card"], { card: size(c.card, lang) });
  const shapes = [], notes = [];
  if (c.card / gb <= 4 * top) { // the card's line on the chart
    shapes.push({ type: "line", xref: "x domain", x0: 0, x1: 1, yref: "y", y0: c.card / gb, y1: c.card / gb,
                  line: { dash: "dash", color: P[3] } });
    notes.push({ text: label, xref: "x domain", x: 1, xanchor: "right", yref: "y", y: c.card / gb, yanchor: "bottom",
                 showarrow: false });
    top = Math.max(top, c.card / gb * 1.08);
  } else { // far above the bars: drawing it would flatten them
    notes.push({ text: `${label} ↑`, xref: "paper", yref: "paper", x: 1, y: 1, showarrow: false, font: { color: P[3] } });
  }
  return { data: traces, layout: baseLayout(data, {
    barmode: "stack", height: 340, shapes, annotations: notes, margin: { l: 10, r: 10, t: 30, b: 10 },
    title: { text: fill(L["kvcache.chart.title"], { tokens: formatNumber(c.tokens, lang) }) },
    yaxis: { title: { text: "GB" }, range: [0, top] } }) };
}

function buildCalc(root, data) {
  const L = data.labels, lang = data.lang;
  const st = startSettings(data);
  const box = viewBox(root, "itt-kvcache", "kvcache");

  const top = el(box, "div", "itt-controls");
  const preset = select(top, { label: L["kvcache.preset"], options: data.presets.map((p) => [p.key, p.label]),
    value: st.preset, testid: "kvcache.preset" });
  const picked = data.contexts.indexOf(st.context);
  const contextPick = slider(top, { label: L["kvcache.context_pick"], min: 0, max: data.contexts.length - 1, step: 1,
    value: picked >= 0 ? picked : data.contexts.indexOf(8192),
    format: (i) => tick(data.contexts[i], lang), testid: "kvcache.context_pick" });

  const customBox = el(box, "div", "itt-controls itt-custom");
  const custom = data.custom.map((f) => clampedBox(customBox, { label: L[`kvcache.field.${f.field}`],
    value: st.custom[f.field] ?? f.default, lo: f.lo, hi: f.hi, integer: true, testid: `kvcache.custom.${f.field}` }));

  const cols = el(box, "div", "itt-controls");
  const c1 = el(cols, "div", "itt-stack"), c2 = el(cols, "div", "itt-stack"), c3 = el(cols, "div", "itt-stack");
  const [tLo, tHi] = data.bounds.tokens, [uLo, uHi] = data.bounds.users, [cLo, cHi] = data.bounds.card_gb;
  const tokens = clampedBox(c1, { label: L["kvcache.context"], value: st.tokens, lo: tLo, hi: tHi, integer: true,
                                  step: 1, testid: "kvcache.context" });
  const users = clampedBox(c1, { label: L["kvcache.users"], value: st.users, lo: uLo, hi: uHi, integer: true,
                                 testid: "kvcache.users" });
  const cache = radios(c2, { label: L["kvcache.cache_dtype"], help: L["kvcache.cache_dtype_help"],
                             options: Object.keys(data.cache_dtypes), value: st.cache, name: "kvcache.cache_dtype",
                             testid: "kvcache.cache_dtype" });
  const weights = radios(c2, { label: L["kvcache.weight_dtype"], help: L["kvcache.weight_dtype_help"],
                               options: Object.keys(data.weight_dtypes), value: st.weights, name: "kvcache.weight_dtype",
                               testid: "kvcache.weight_dtype" });
  const card = clampedBox(c3, { label: L["kvcache.card_gb"], value: st.card_gb, lo: cLo, hi: cHi, integer: false,
                                step: 8, testid: "kvcache.card_gb" });

  const notes = noteBox(box);
  const metrics = el(box, "div", "itt-metrics");
  const mToken = metric(metrics, { testid: "kvcache.per_token" });
  const mUser = metric(metrics, { label: L["kvcache.per_user"], testid: "kvcache.per_user" });
  const mWeights = metric(metrics, { label: L["kvcache.weights"], testid: "kvcache.weights" });
  const mTotal = metric(metrics, { label: L["kvcache.total"], testid: "kvcache.total" });
  mToken.box.title = L["kvcache.per_token_help"];
  const caption = el(box, "p", "itt-help");
  const fig = chartBox(box, { label: "", tableLabel: L["chart.as_table"], plotClass: "itt-plot" });
  const verdict = el(box, "div", "itt-note");
  verdict.setAttribute("role", "status");
  verdict.dataset.testid = "kvcache.fit";

  const update = () => {
    const said = [];
    const key = preset.value;
    customBox.hidden = key !== "custom";
    const fields = {};
    data.custom.forEach((f, i) => { fields[f.field] = custom[i].read(key === "custom" ? said : [], L, lang); });
    if (key === "custom" && fields.num_key_value_heads > fields.num_attention_heads) {
      said.push(fill(L["kvcache.custom.kv_over"], { kv: formatNumber(fields.num_key_value_heads, lang),
                                                    heads: formatNumber(fields.num_attention_heads, lang) }));
    }
    const chosen = data.presets.find((p) => p.key === key);
    const spec = key === "custom" ? customSpec(fields) : chosen.spec;
    const now = { preset: key, context: data.contexts[Number(contextPick.value)], tokens: tokens.read(said, L, lang),
                  users: users.read(said, L, lang), card_gb: card.read(said, L, lang), cache: cache.value(),
                  weights: weights.value(), custom: fields };
    notes(said);
    const c = calculate(spec, now.tokens, now.users, data.cache_dtypes[now.cache], data.weight_dtypes[now.weights], now.card_gb);
    mToken.label.textContent = fill(L["kvcache.per_token"], { dtype: now.cache });
    mToken.value.textContent = c.perToken ? kib(c.perToken, lang) : "0";
    mUser.value.textContent = size(c.perUser, lang);
    mWeights.value.textContent = spec.params ? size(c.weights, lang) : "—";
    mWeights.box.title = spec.params ? fill(L["kvcache.params_are"], { n: big(spec.params, lang, data.units) }) : "";
    mTotal.value.textContent = size(c.total, lang);
    const k = layerCounts(spec);
    caption.textContent = fill(L["kvcache.layers_are"], { full: formatNumber(k.full, lang), local: formatNumber(k.sliding, lang),
      linear: formatNumber(k.linear, lang), mla: spec.mla ? L.yes : L.no });
    const cardText = size(c.card, lang);
    let kind = "success", text;
    if (c.weights > c.card) {
      kind = "error";
      text = fill(L["kvcache.weights_too_big"], { card: cardText, cards: formatNumber(Math.ceil(c.weights / c.card), lang) });
    } else if (c.usersFit === null) {
      text = fill(L["kvcache.fit_unbounded"], { card: cardText });
    } else {
      text = fill(L["kvcache.fit"], { card: cardText, n: formatNumber(c.usersFit, lang), tokens: formatNumber(c.tokens, lang) });
      if (!c.fits) { kind = "warning"; text += ` ${L["kvcache.not_fit"]}`; }
    }
    verdict.textContent = text;
    verdict.dataset.kind = kind;
    const figure = calcFigure(c, data);
    fig.fig.setAttribute("aria-label", fill(L["chart.kvcache.calc_chart"], { title: figure.layout.title.text }));
    const gb = 1e9, two = (x) => formatNumber(x, lang, 2);
    fig.table(() => [["GB", L["kvcache.weights"], L["kvcache.chart.cache"], L["kvcache.table.sum"], L["kvcache.table.card"]],
      figure.data[0].x.map((row, i) => [row, two(c.weights / gb), two(figure.data[1].y[i]),
        two(c.weights / gb + figure.data[1].y[i]), two(c.card / gb)])]);
    // What the other sections read: the settings, and the model they price (the 8B when this one
    // cannot be counted).
    const priced = spec.params ? { label: chosen.short, spec } :
      { label: data.base, spec: data.base_spec };
    store().set(SETTINGS, now);
    store().set(PRICED, Object.assign(priced, { tokens: now.tokens, cache: now.cache, weights: now.weights }));
    const state = JSON.stringify({ preset: key, tokens: now.tokens, users: now.users, card_gb: now.card_gb,
                                   cache: now.cache, weights: now.weights });
    box.dataset.state = state;
    draw(data, fig.plot, figure, () => { box.dataset.drawn = state; });
  };
  const later = perFrame(update);
  contextPick.addEventListener("input", () => {
    tokens.input.value = String(data.contexts[Number(contextPick.value)]);
    later();
  });
  for (const input of [preset, tokens.input, users.input, card.input, ...custom.map((c) => c.input),
                       ...cache.inputs, ...weights.inputs]) {
    input.addEventListener(input.tagName === "SELECT" || input.type === "radio" ? "change" : "input", later);
  }
  update();
}

// ------------------------------------------------------------------ the variants at the chosen context

function buildVariants(root, data) {
  const L = data.labels, lang = data.lang;
  const box = viewBox(root, "itt-kvcache-variants", "kvcache.variants");
  const fig = chartBox(box, { label: "", tableLabel: L["chart.as_table"], plotClass: "itt-plot" });
  const after = el(box, "p", "itt-prose");
  const weights = (data.base_spec.params || 0) * data.weight_dtypes.bf16;
  const update = (now) => {
    const tokens = now.tokens, cardGb = now.card_gb;
    const rows = variantRows(data.variants, tokens, data.cache_dtypes[now.cache] || 2);
    const fits = rows.map((r) => usersThatFit(cardGb * 1e9, weights, r.bytes));
    const names = data.variants.map((v) => v.label);
    const fitText = fits.map((f) => (f === null ? "∞" : formatNumber(f, lang)));
    const title = fill(L["kvcache.variant.title"], { tokens: formatNumber(tokens, lang) });
    const figure = { data: [{ type: "bar", x: names, y: rows.map((r) => r.bytes / 1e9), marker: { color: data.palette.slice(0, rows.length) },
      text: rows.map((r) => size(r.bytes, lang)), textposition: "outside", customdata: fitText,
      hovertemplate: `%{x}: %{text}<br>${L["kvcache.variant.hover"]}<extra></extra>` }],
      layout: baseLayout(data, { height: 360, title: { text: title }, yaxis: { title: { text: "GB" } } }) };
    fig.fig.setAttribute("aria-label", fill(L["chart.kvcache.variants_chart"], { title }));
    fig.table(() => [[L["kvcache.variant.col.kind"], L["kvcache.variant.col.per_token"], L["kvcache.variant.col.per_user"],
      L["kvcache.variant.col.saving"], fill(L["kvcache.variant.col.users"], { card: formatNumber(cardGb, lang) })],
      rows.map((r, i) => [names[i], kib(r.perToken, lang), size(r.bytes, lang), `${formatNumber(r.saving, lang, 1)}×`, fitText[i]])]);
    const by = Object.fromEntries(rows.map((r) => [r.kind, size(r.bytes, lang)]));
    rich(after, fill(data.after, Object.assign(by, { tokens: formatNumber(tokens, lang), window: formatNumber(data.local_window, lang) })));
    const state = JSON.stringify({ tokens, cache: now.cache, card_gb: cardGb });
    box.dataset.state = state;
    draw(data, fig.plot, figure, () => { box.dataset.drawn = state; });
  };
  follow(root, SETTINGS, data.settings, update);
}

/** Draws now from the store's value (or the server's default), and again whenever it changes
 * while the section is on screen or near it; a section far below catches up when it is reached,
 * so a move of the calculator redraws only what the learner can see. */
function follow(root, name, fallback, update) {
  if (root.__ittStop) root.__ittStop();
  const later = perFrame(update);
  let near = false, owed = null;
  const seen = new IntersectionObserver((entries) => {
    near = entries[entries.length - 1].isIntersecting;
    if (near && owed !== null) { later(owed); owed = null; }
  }, { rootMargin: "300px 0px" });
  seen.observe(root);
  const stop = store().subscribe(name, (v) => { if (near) later(v); else owed = v; });
  root.__ittStop = () => { stop(); seen.disconnect(); };
  update(store().get(name, fallback));
}

// ------------------------------------------------------------------ training, serving, experts

/** The training and serving sections' number boxes (what was typed is kept in the store for both
 * and for the next visit) and their notice. `watch(root, update)` calls update(values, priced) at
 * every move of a box and of the model the calculator prices. */
function costInputs(parent, data, specs) {
  const L = data.labels;
  const row = el(parent, "div", "itt-controls");
  const saved = store().get("kvcache.costs", {});
  const boxes = specs.map(([name, lo, hi, integer, fallback]) => [name, clampedBox(row, { label: L[`kvcache.${name}`],
    value: saved[name] ?? fallback, lo, hi, integer, testid: `kvcache.${name}` })]);
  const notes = noteBox(parent);
  return {
    watch(root, update) {
      let priced = null;
      const run = () => {
        const said = [];
        const values = {};
        for (const [name, b] of boxes) values[name] = b.read(said, L, data.lang);
        store().set("kvcache.costs", Object.assign({}, store().get("kvcache.costs", {}), values));
        notes(said);
        update(values, priced);
      };
      const later = perFrame(run);
      for (const [, b] of boxes) b.input.addEventListener("input", later);
      follow(root, PRICED, data.priced, (p) => { priced = p; run(); });
    },
  };
}

function buildTrain(root, data) {
  const L = data.labels, lang = data.lang, u = data.units;
  const box = viewBox(root, "itt-kvcache-train", "kvcache.train");
  const chosen = el(box, "p", "itt-prose");
  const costs = costInputs(box, data, [["train.tokens", 0.001, 1000, false, 15], ["train.gpus", 1, 1e6, true, 1000],
                                       ["train.tflops", 0.001, 1e5, false, 400], ["train.util", 1, 100, false, 40]]);
  const result = el(box, "p", "itt-result");
  const tableBox = el(el(box, "div", "itt-table"), "div", "itt-table-box");
  costs.watch(root, (v, priced) => {
    const n = priced.spec.params;
    rich(chosen, fill(data.chosen, { model: priced.label }));
    const total = trainingFlops(n, v["train.tokens"] * 1e12);
    const days = trainingDays(total, v["train.gpus"], v["train.tflops"] * 1e12, v["train.util"] / 100);
    rich(result, fill(L["kvcache.train.result"], { name: priced.label, n: big(n, lang, u), d: formatNumber(v["train.tokens"], lang),
      flops: sci(total, lang), days: formatNumber(days, lang, days < 100 ? 1 : 0), gpus: formatNumber(v["train.gpus"], lang) }));
    const rows = [];
    for (const opt of ["adam", "muon"]) {
      for (const stage of [0, 3]) {
        const m = trainingMemory(n, opt, stage ? v["train.gpus"] : 1, stage);
        const setup = `${L[`kvcache.train.${opt}`]} · ${stage ? fill(L["kvcache.train.zero"], { gpus: formatNumber(v["train.gpus"], lang) })
          : L["kvcache.train.one_card"]}`;
        rows.push([setup, ...["weights", "gradients", "master", "optimizer", "total"].map((k) => size(m[k], lang))]);
      }
    }
    table(tableBox, [L["kvcache.train.col.setup"], ...["weights", "gradients", "master", "optimizer", "total"]
      .map((k) => L[`kvcache.train.col.${k}`])], rows);
    box.dataset.state = JSON.stringify({ model: priced.label, days: Number(days.toPrecision(6)) });
  });
}

function buildServe(root, data) {
  const L = data.labels, lang = data.lang, P = data.palette;
  const box = viewBox(root, "itt-kvcache-serve", "kvcache.serve");
  const costs = costInputs(box, data, [["serve.bandwidth", 0.001, 100, false, 3], ["serve.users", 1, 1e5, true, 64]]);
  const result = el(box, "p", "itt-result");
  const line = el(box, "p", "itt-help");
  line.dataset.testid = "kvcache.serve.flops";
  const fig = chartBox(box, { label: L["chart.kvcache.serve_chart"], tableLabel: L["chart.as_table"], plotClass: "itt-plot" });
  costs.watch(root, (v, priced) => {
    const { spec, tokens } = priced;
    const bw = v["serve.bandwidth"] * 1e12, users = v["serve.users"];
    const weights = spec.params * data.weight_dtypes[priced.weights];
    const perUser = kvBytes(spec, tokens, data.cache_dtypes[priced.cache]);
    const one = decodeStep(weights, perUser, 1, bw), many = decodeStep(weights, perUser, users, bw);
    rich(result, fill(L["kvcache.serve.result"], { weights: size(weights, lang), ms: formatNumber(one.seconds * 1e3, lang, 1),
      tps: formatNumber(one.tokensPerS, lang, 0), users: formatNumber(users, lang), tokens: formatNumber(tokens, lang),
      cache: size(many.cacheBytes, lang), share: formatNumber(100 * many.cacheShare, lang, 0),
      total: formatNumber(many.tokensPerS, lang, 0), each: formatNumber(many.perUser, lang, 1) }));
    const perToken = forwardFlopsPerToken(spec, tokens, spec.params);
    rich(line, fill(L["kvcache.serve.flops"], { tokens: formatNumber(tokens, lang), flops: flops(perToken, lang),
      intensity: formatNumber(perToken / (weights + perUser), lang, 1), dtype: priced.weights,
      attn: flops(attentionFlops(spec, tokens, true), lang) }));
    const batches = [...new Set([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, users])].sort((a, b) => a - b);
    const steps = batches.map((b) => decodeStep(weights, perUser, b, bw));
    const figure = { data: [
      { type: "scatter", x: batches, y: steps.map((s) => s.tokensPerS), name: L["kvcache.serve.total"], mode: "lines+markers", line: { color: P[0] } },
      { type: "scatter", x: batches, y: steps.map((s) => s.perUser), name: L["kvcache.serve.each"], mode: "lines+markers", line: { color: P[1] } }],
    layout: baseLayout(data, { height: 340, margin: { l: 10, r: 10, t: 30, b: 10 },
      xaxis: { type: "log", title: { text: L["kvcache.serve.x"] }, tickvals: batches },
      yaxis: { type: "log", title: { text: L["kvcache.serve.y"] }, dtick: 1 } }) };
    fig.table(() => [[L["kvcache.serve.x"], L["kvcache.serve.total"], L["kvcache.serve.each"]],
      steps.map((s, i) => [formatNumber(batches[i], lang), formatNumber(s.tokensPerS, lang, 1), formatNumber(s.perUser, lang, 1)])]);
    const state = JSON.stringify({ model: priced.label, tokens, users, bandwidth: v["serve.bandwidth"] });
    box.dataset.state = state;
    draw(data, fig.plot, figure, () => { box.dataset.drawn = state; });
  });
}

function buildMoe(root, data) {
  const L = data.labels, lang = data.lang, u = data.units;
  const box = viewBox(root, "itt-kvcache-moe", "kvcache.moe");
  const tableBox = el(el(box, "div", "itt-table"), "div", "itt-table-box");
  follow(root, PRICED, data.priced, (priced) => {
    const rows = [[priced.label, denseVsMoe(priced.spec.params)], [L["kvcache.moe.typical"], denseVsMoe(400e9, 25e9)],
                  ["DeepSeek-V3", denseVsMoe(data.deepseek.total, data.deepseek.active)]];
    table(tableBox, ["model", "total", "active", "flops", "memory"].map((k) => L[`kvcache.moe.col.${k}`]),
      rows.map(([label, m]) => [label, big(m.total, lang, u), `${big(m.active, lang, u)} (${formatNumber(100 * m.share, lang, 0)}%)`,
        flops(m.flops, lang), size(m.memory, lang)]));
    box.dataset.state = JSON.stringify({ model: priced.label });
  });
}

const PARTS = { calc: buildCalc, variants: buildVariants, train: buildTrain, serve: buildServe, moe: buildMoe };

export function mount(root, data) {
  // The same data again (a rerun of the page): nothing to redo, the learner's settings stay.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  PARTS[data.part](viewHost(root), data);
}

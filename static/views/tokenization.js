// The tokenization lesson's animations, answered in the browser: the training of a small BPE
// vocabulary (target size, step, play) and the replay of the live model's merges on the learner's
// text (step, play, readable or raw, ids), and the built-in paragraphs as the model's tokens.
//
// The server sends each animation once (ui/lessons/tokenization/sections.py) as lib worked it out: every token
// that lives at some step, with the step it is born at and the step it dies at (lib/lessons/bpe.py's
// `lives`). Step k shows the tokens with born <= k < dies: the view does no BPE of its own.
// tests/js/tokenization.test.js holds `alive` to lib's segments on fixtures tests/views_fixtures.py
// writes.

import {
  boxValue, chartBox, drawChart, el, fill, formatNumber, keepSettings, linkedSettings, metric, noteBox, numberBox, perFrame,
  radios, richText, slider, store, unpackInts, viewBox, viewHost,
} from "./common.js";

// ------------------------------------------------------------------ the data, as lib gave it

/** Indices of the tokens alive after k steps (born <= k < dies), in the order sent (by start). */
export function alive(born, dies, k) {
  const out = [];
  for (let i = 0; i < born.length; i++) if (born[i] <= k && k < dies[i]) out.push(i);
  return out;
}

/** Where each step's top pairs start in the flat list: offsets[k] .. offsets[k + 1]. */
export function offsets(lengths) {
  const out = new Uint32Array(lengths.length + 1);
  for (let i = 0; i < lengths.length; i++) out[i + 1] = out[i] + lengths[i];
  return out;
}

/** "20746865" as "20 74 68 65", the chips' titles. */
export function spacedHex(hex) {
  return hex.replace(/(..)(?=.)/g, "$1 ");
}

// ------------------------------------------------------------------ drawing helpers

function code(text) {
  const c = document.createElement("code");
  c.textContent = text;
  return c;
}

function pieces(...parts) {
  const f = document.createDocumentFragment();
  for (const p of parts) f.appendChild(p instanceof Node ? p : document.createTextNode(p));
  return f;
}

function color(colors, id) {
  return id < 0 ? "#E0E0E0" : colors[(id * 7) % colors.length];
}

/** Token chips: [{id, label, hex, nl, isNew, dropped}], as ui/shell/styles.py's .tok-chip (a tap shows the title). */
function drawChips(box, chips, { colors, title, showIds }) {
  const frag = document.createDocumentFragment();
  for (const c of chips) {
    const span = document.createElement("span");
    span.className = c.dropped ? "tok-chip tok-dropped" : "tok-chip";
    span.dataset.new = c.isNew ? "1" : "0";
    span.title = fill(title, { id: String(c.id), bytes: spacedHex(c.hex) });
    span.tabIndex = -1;
    span.style.background = color(colors, c.id);
    span.textContent = c.label;
    if (showIds && c.id >= 0) {
      const sub = document.createElement("span");
      sub.className = "tok-id";
      sub.textContent = String(c.id);
      span.appendChild(sub);
    }
    frag.appendChild(span);
    if (c.nl) frag.appendChild(document.createElement("br"));
  }
  box.replaceChildren(frag);
}

/** The box of a text's chips (a group named for a screen reader), and the line that says when only
 * a window of the text is shown. */
function chipsBox(box, data, testid) {
  const chips = el(box, "div", "tok-chips");
  chips.setAttribute("role", "group");
  chips.setAttribute("aria-label", data.labels.chips);
  chips.dataset.testid = testid;
  if (data.window < data.n_bytes) {
    el(box, "p", "itt-help").textContent = fill(data.labels.window, { shown: formatNumber(data.window, data.lang),
      total: formatNumber(data.n_bytes, data.lang) });
  }
  return chips;
}

function checkbox(parent, { label, checked, testid }) {
  const lab = el(parent, "label", "itt-control itt-check");
  const input = el(lab, "input");
  Object.assign(input, { type: "checkbox", checked });
  if (testid) input.dataset.testid = testid;
  lab.appendChild(document.createTextNode(label));
  return input;
}

// ------------------------------------------------------------------ settings and the player

/** The settings the page store holds (a share link's values, sent by the server, win once). */
function startSettings(data) {
  return linkedSettings("tokenization", data.settings || {}, ["target", "view", "ids"]);
}

function keep(values) {
  keepSettings("tokenization", values);
}

/** The step a learner left this animation at (the same data only), else 0. */
function startStep(name, key) {
  const kept = store().get(name, null);
  return kept && kept.key === key ? kept.step : 0;
}

/**
 * Step controls over 0..n: first, back, forward, last, play/pause at `speed` steps per tick, the
 * step slider. `show(step)` draws a step; it is called at once and at every move.
 */
function player(parent, { n, step, speed, data, prefix, show }) {
  const L = data.labels;
  const lang = data.lang;
  const box = el(parent, "div", "itt-player");
  const top = el(box, "div", "itt-draw");
  const play = el(top, "button", "itt-button itt-primary");
  play.type = "button";
  play.dataset.testid = `${prefix}.play`;
  const speeds = radios(top, { label: L.speed, name: `${prefix}.speed.${Math.random().toString(36).slice(2)}`,
    options: data.speeds.map((s) => [s, `×${s}`]), value: speed, testid: `${prefix}.speed`, row: false });
  const row = el(box, "div", "itt-draw");
  const buttons = {};
  for (const [name, text] of [["first", "⏮"], ["prev", "◀"], ["next", "▶"], ["last", "⏭"]]) {
    const b = el(row, "button", "itt-button");
    b.type = "button";
    b.textContent = text;
    b.title = L[name];
    b.setAttribute("aria-label", L[name]);
    b.dataset.testid = `${prefix}.${name}`;
    buttons[name] = b;
  }
  let last = n;
  const input = slider(box, { label: L.step, min: 0, max: n, step: 1, value: Math.min(step, n),
    format: (v) => formatNumber(v, lang), testid: `${prefix}.step` });
  let timer = null;
  const label = () => { play.textContent = timer === null ? L.play : L.pause; };
  const stop = () => { if (timer !== null) clearInterval(timer); timer = null; label(); };
  const go = (k) => {
    const v = Math.max(0, Math.min(last, k));
    input.value = String(v);
    input.dispatchEvent(new Event("input"));
  };
  const drawn = perFrame(() => show(Number(input.value)));
  input.addEventListener("input", drawn);
  buttons.first.addEventListener("click", () => go(0));
  buttons.prev.addEventListener("click", () => go(Number(input.value) - 1));
  buttons.next.addEventListener("click", () => go(Number(input.value) + 1));
  buttons.last.addEventListener("click", () => go(last));
  const tick = () => {
    const k = Math.min(Number(input.value) + Number(speeds.value()), last);
    go(k);
    if (k >= last) stop();
  };
  play.addEventListener("click", () => {
    if (timer !== null) { stop(); return; }
    if (Number(input.value) >= last) go(0);  // play again from the start
    timer = setInterval(tick, data.tick_ms);
    label();
    tick();
  });
  label();
  show(Number(input.value));
  return {
    stop,
    step: () => Number(input.value),
    /** A new last step (the target size moved): the step stays inside. */
    limit(m) {
      last = m;
      input.max = String(m);
      if (Number(input.value) > m) go(m);
      else input.dispatchEvent(new Event("input"));
    },
  };
}

// ------------------------------------------------------------------ part 1: the training

function buildPart(box, data) {
  const L = data.labels;
  const lang = data.lang;
  const num = (v, d = null) => formatNumber(v, lang, d);
  const st = startSettings(data);
  const nTokens = unpackInts(data.n_tokens);
  const merges = unpackInts(data.merges);  // [a, b, count] per merge
  const topLen = unpackInts(data.top.len);
  const topAt = offsets(topLen);
  const pairs = unpackInts(data.top.pairs);  // [a, b, count] per pair, step after step
  const life = { id: unpackInts(data.lives.id), born: unpackInts(data.lives.born), dies: unpackInts(data.lives.dies) };
  const vocab = data.vocab;
  const controls = el(box, "div", "itt-controls");
  const target = numberBox(controls, { label: L.target, help: L.target_help, min: data.min_target,
    max: data.max_target, step: 10, value: st.target, testid: "tokenization.target" });
  const note = noteBox(box);
  const card = el(box, "p", "itt-card");
  card.setAttribute("aria-live", "polite");
  card.dataset.testid = "tokenization.build.card";
  const stage = el(box, "div");
  const metrics = el(box, "div", "itt-metrics");
  const mVocab = metric(metrics, { label: L.vocab_size, delta: true });
  const mTokens = metric(metrics, { label: L.tokens, delta: true });
  const mRatio = metric(metrics, { label: L.ratio, delta: true });
  const chips = chipsBox(box, data, "tokenization.build.chips");
  const cols = el(box, "div", "itt-columns");
  const left = el(cols, "div", "itt-half");
  const right = el(cols, "div", "itt-half");
  const pairsChart = chartBox(left, { label: L.pairs_title, tableLabel: L.table, height: 340 });
  const curveChart = chartBox(right, { label: L.curve_title, tableLabel: L.table, height: 340 });
  const wanted = () => {
    const raw = target.value === "" ? st.target : Math.round(Number(target.value));
    return Number.isFinite(raw) ? raw : st.target;
  };
  const merged = () => Math.min(boxValue(target, st.target) - data.min_target, data.n_merges);
  const pairLabel = (a, b) => `«${vocab[a]}» + «${vocab[b]}»`;
  // The pairs' axis keeps one margin for every step, room for the longest pair any step shows (a
  // monospace character is about 7.2 px at plotly's 12 px): with plotly's automargin a longer label
  // made plotly lay the chart out and draw it twice on a move.
  let longest = 0;
  for (let j = 0; j < pairs.length; j += 3) longest = Math.max(longest, pairLabel(pairs[j], pairs[j + 1]).length);
  const pairsMargin = Math.min(20 + Math.ceil(7.2 * longest), 240);
  let n = merged();

  const notes = () => {
    const asked = wanted();
    const said = [];
    if (asked < data.min_target) said.push(fill(L.target_low, { n: num(asked) }));
    else if (asked > data.max_target) said.push(fill(L.target_high, { n: num(asked), max: num(data.max_target) }));
    if (boxValue(target, st.target) - data.min_target > data.n_merges) {
      said.push(fill(L.exhausted, { n: num(data.n_merges), size: num(data.min_target + data.n_merges) }));
    }
    note(said);
  };

  const show = (k) => {
    store().set("tokenization.build.step", { key: data.key, step: k });
    if (k === 0) richText(card, L.step0, { bytes: num(data.n_bytes) });
    else {
      const [a, b, count] = [merges[3 * (k - 1)], merges[3 * (k - 1) + 1], merges[3 * (k - 1) + 2]];
      richText(card, L.stepk, { k: num(k), n: num(n), pair: pieces(code(vocab[a]), " + ", code(vocab[b])),
        new: code(vocab[data.min_target + k - 1]), id: String(data.min_target + k - 1), count: num(count) });
    }
    mVocab.value.textContent = num(data.min_target + k);
    mTokens.value.textContent = num(nTokens[k]);
    mTokens.delta.textContent = k ? num(nTokens[k] - nTokens[0]) : "";
    mRatio.value.textContent = num(data.n_bytes / Math.max(nTokens[k], 1), 2);
    const newId = k > 0 ? data.min_target + k - 1 : -1;
    drawChips(chips, alive(life.born, life.dies, k).map((i) => {
      const id = life.id[i];
      return { id, label: vocab[id], hex: data.hex[id], nl: data.hex[id].endsWith("0A"), isNew: id === newId };
    }), { colors: data.colors, title: L.chip, showIds: false });
    chips.dataset.step = String(k);
    box.dataset.step = String(k);
    // The charts: the most frequent pairs now (the first is merged next), bytes per token so far.
    const top = [];
    for (let j = topAt[k]; j < topAt[k + 1]; j++) top.push([pairs[3 * j], pairs[3 * j + 1], pairs[3 * j + 2]]);
    const labels = top.map(([a, b]) => pairLabel(a, b));
    const counts = top.map((p) => p[2]);
    const ratio = Array.from({ length: n + 1 }, (_, j) => data.n_bytes / Math.max(nTokens[j], 1));
    const layout = (title, extra) => Object.assign({ title: { text: title }, height: 340, autosize: true, separators: data.separators,
      margin: { l: 10, r: 10, t: 40, b: 10 } }, extra);
    Promise.all([
      drawChart(pairsChart.plot, data.plotly, { data: [{ type: "bar", x: counts, y: labels, orientation: "h",
        text: counts.map((c) => num(c)), textposition: "auto", hovertemplate: "%{y}: %{x}<extra></extra>",
        marker: { color: counts.map((_, j) => (j === 0 ? data.accent : "#9AA5B1")) } }],
      layout: layout(L.pairs_title, { yaxis: { autorange: "reversed", tickfont: { family: "monospace" }, automargin: false },
        xaxis: { title: { text: L.pairs_x } }, margin: { l: pairsMargin, r: 10, t: 40, b: 10 } }) }, data.config, L.unavailable),
      drawChart(curveChart.plot, data.plotly, { data: [
        { type: "scatter", x: ratio.map((_, j) => j), y: ratio, mode: "lines", line: { color: data.palette[0] },
          hovertemplate: `${L.curve_hover}<extra></extra>` },
        { type: "scatter", x: [k], y: [ratio[k]], mode: "markers", marker: { size: 12, color: data.accent }, hoverinfo: "skip" }],
      layout: layout(L.curve_title, { showlegend: false, xaxis: { title: { text: L.curve_x } }, yaxis: { title: { text: L.curve_y } } }) },
      data.config, L.unavailable)])
      .then((drawn) => { if (drawn.every(Boolean)) box.dataset.drawn = String(k); });
    pairsChart.table(() => [[L.pair_col, L.pairs_x], top.map(([a, b, c]) => [pairLabel(a, b), num(c)])]);
    curveChart.table(() => [[L.curve_x, L.curve_y],
      Array.from({ length: n + 1 }, (_, j) => [num(j), num(data.n_bytes / Math.max(nTokens[j], 1), 2)])]);
  };

  notes();
  const p = player(stage, { n, step: Math.min(startStep("tokenization.build.step", data.key), n), speed: 1, data,
    prefix: "tokenization.build", show });
  // Not once per frame itself: the player draws once per frame (its step's input event), and a
  // second wait here would add a frame to every move.
  target.addEventListener("input", () => {
    keep({ target: boxValue(target, st.target) });
    notes();
    n = merged();
    p.limit(n);
  });
  return p;
}

// ------------------------------------------------------------------ part 2: the model's merges

function realPart(box, data) {
  const L = data.labels;
  const lang = data.lang;
  const num = (v, d = null) => formatNumber(v, lang, d);
  const st = startSettings(data);
  const n = data.n_steps;
  const life = { kind: unpackInts(data.lives.kind), born: unpackInts(data.lives.born), dies: unpackInts(data.lives.dies) };
  const now = unpackInts(data.tokens_now);
  const rank = unpackInts(data.steps.rank);
  const count = unpackInts(data.steps.count);
  const card = el(box, "p", "itt-card");
  card.setAttribute("aria-live", "polite");
  card.dataset.testid = "tokenization.real.card";
  const stage = el(box, "div");
  const controls = el(box, "div", "itt-controls");
  const view = radios(controls, { label: L.view, name: `tokenization.real.view.${Math.random().toString(36).slice(2)}`,
    options: [["readable", L.view_readable], ["raw", L.view_raw]], value: st.view, testid: "tokenization.real.view", row: false });
  const ids = checkbox(controls, { label: L.show_ids, checked: Boolean(st.ids), testid: "tokenization.real.show_ids" });
  const mNow = metric(box, { label: L.tokens_now, delta: true });
  const chips = chipsBox(box, data, "tokenization.real.chips");
  let step = 0;
  const show = (k) => {
    step = k;
    if (n) store().set("tokenization.real.step", { key: data.key, step: k });
    if (k === 0) richText(card, L.step0, { bytes: num(data.n_bytes) });
    else {
      const j = k - 1;
      richText(card, L.stepk, { k: num(k), n: num(n), rank: num(rank[j] + 1), left: code(data.steps.left[j]),
        right: code(data.steps.right[j]), merged: code(data.steps.merged[j]), id: String(data.steps.id[j]), count: num(count[j]) });
    }
    mNow.value.textContent = num(now[k]);
    const raw = view.value() === "raw";
    const newId = k > 0 ? data.steps.id[k - 1] : -2;
    drawChips(chips, alive(life.born, life.dies, k).map((i) => {
      const [id, readable, rawText, hex, nl] = data.kinds[life.kind[i]];
      return { id, label: raw ? rawText : readable, hex, nl, isNew: id === newId, dropped: id < 0 };
    }), { colors: data.colors, title: L.chip, showIds: ids.checked });
    chips.dataset.step = String(k);
    box.dataset.step = String(k);
    box.dataset.state = JSON.stringify({ view: view.value(), ids: ids.checked });
  };
  const again = () => { keep({ view: view.value(), ids: ids.checked }); show(step); };
  for (const input of view.inputs) input.addEventListener("change", again);
  ids.addEventListener("change", again);
  if (n === 0) { show(0); return null; }
  return player(stage, { n, step: Math.min(startStep("tokenization.real.step", data.key), n), speed: data.speed, data,
    prefix: "tokenization.real", show });
}

// ------------------------------------------------------------------ part 3: the same paragraph in two languages

function pairPart(box, data) {
  const L = data.labels;
  const lang = data.lang;
  const chipsOf = unpackInts(data.chips);
  const kept = store().get("tokenization.paragraph", null);
  const start = kept && kept.key === data.key ? kept.value : 1;
  const pick = slider(box, { label: L.pick, min: 1, max: data.pairs.length, step: 1, value: Math.min(start, data.pairs.length),
    format: (v) => formatNumber(v, lang), testid: "tokenization.lang.paragraph" });
  const cols = el(box, "div", "itt-columns");
  const side = {};
  for (const x of ["it", "en"]) {
    const col = el(cols, "div", "itt-half");
    const head = el(col, "p");
    const chips = el(col, "div", "tok-chips");
    chips.setAttribute("role", "group");
    chips.dataset.testid = `tokenization.lang.chips.${x}`;
    side[x] = { head, chips };
  }
  const show = () => {
    const i = Number(pick.value) - 1;
    store().set("tokenization.paragraph", { key: data.key, value: i + 1 });
    for (const x of ["it", "en"]) {
      const p = data.pairs[i][x];
      richText(side[x].head, L.pair_head, { lang: L[x], n: formatNumber(p.n, lang) });
      side[x].chips.setAttribute("aria-label", `${L.chips} (${L[x]})`);
      const chips = [];
      for (let j = p.from; j < p.from + p.chips; j++) {
        const [id, readable, , hex, nl] = data.kinds[chipsOf[j]];
        chips.push({ id, label: readable, hex, nl, isNew: false, dropped: id < 0 });
      }
      drawChips(side[x].chips, chips, { colors: data.colors, title: L.chip, showIds: false });
    }
    box.dataset.step = String(i + 1);
  };
  pick.addEventListener("input", perFrame(show));
  show();
  return null;
}

// ------------------------------------------------------------------ mount

export function mount(root, data) {
  // The same data again (a rerun of the page): nothing to redo, the learner's choices stay.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  if (root.__ittPlayer) root.__ittPlayer.stop();
  const box = viewBox(viewHost(root), `itt-tokenization itt-tok-${data.part}`, `tokenization.${data.part}`);
  const part = { build: buildPart, real: realPart, pair: pairPart }[data.part];
  root.__ittPlayer = part(box, data);
}

// What every browser view shares: decoding the server's packed arrays, writing numbers the way
// the course writes them, native labelled controls, the pieces every view draws (its box, a chart
// with its table, a table, a metric, a notice, a radio group), plotly.js, and the page-level store
// through which a section follows a choice made elsewhere on the page.
//
// Pure functions (unpackU16, formatNumber, pct) are tested under node (tests/js) against
// fixtures the Python side writes from lib (tests/test_views.py): the two must agree. The drawing
// helpers keep what they compute in pure functions (tableCells, radioOptions) tested there too.

// ------------------------------------------------------------------ data

function bytesOf(b64) {
  if (typeof atob === "function") {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  return new Uint8Array(Buffer.from(b64, "base64")); // node, for the tests
}

/** lib/serving/payload.py's pack_u16 read back: value = lo + q * scale, q little-endian uint16. */
export function unpackU16(packed) {
  const bytes = bytesOf(packed.b64);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / 2;
  if (n !== packed.n) throw new Error(`payload holds ${n} values, says ${packed.n}`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = packed.lo + view.getUint16(2 * i, true) * packed.scale;
  return out;
}

// ------------------------------------------------------------------ numbers

function trimZeros(s) {
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}

function g6(x) {
  // Python's "%.6g": 6 significant digits, trailing zeros dropped, exponent below 1e-4 or from 1e6.
  if (x === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(6)))));
  if (exp < -4 || exp >= 6) {
    const [m, e] = x.toExponential(5).split("e");
    const n = Number(e);
    return `${trimZeros(m)}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return trimZeros(x.toFixed(Math.max(0, 5 - exp)));
}

function group(intPart) {
  return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** lib/course/quiz.py's format_number: grouped from 10,000 up, 6 significant digits, Italian marks. */
export function formatNumber(value, lang, digits = null) {
  let x = digits === null ? value : roundHalfEven(value, digits);
  let text;
  if (Number.isInteger(x)) {
    text = Math.abs(x) >= 10000 ? (x < 0 ? "-" : "") + group(String(Math.abs(x))) : String(x);
  } else {
    text = g6(x);
    if (Math.abs(x) >= 10000 && !text.includes("e")) {
      const [i, f] = text.replace("-", "").split(".");
      text = (x < 0 ? "-" : "") + group(i) + (f ? "." + f : "");
    }
  }
  if (lang === "it") text = text.replace(/[,.]/g, (c) => (c === "," ? "." : ","));
  return text;
}

/** Python's round(x, digits) on a float: the decimal nearest the exact binary value (toFixed
 * does that too), and an exact tie to the even neighbour (where toFixed takes the larger). */
export function roundHalfEven(x, digits) {
  // The exact decimal expansion (toFixed is exact up to 100 places): a tie is a 5 then only zeros.
  const exact = Math.abs(x).toFixed(100);
  const rest = exact.slice(exact.indexOf(".") + 1 + digits);
  if (/^50*$/.test(rest)) {
    const lo = Number(Math.abs(x).toFixed(100).slice(0, exact.indexOf(".") + 1 + digits)) || 0;
    const f = 10 ** digits;
    const down = Math.round(lo * f) % 2 === 0;
    const r = down ? lo : (Math.round(lo * f) + 1) / f;
    return x < 0 ? -r : r;
  }
  return Number(x.toFixed(digits));
}

/** ui/lessons/sampling/sections.py's pct: a probability as a percentage, more digits when it is small. */
export function pct(p, lang) {
  const digits = p >= 0.01 ? 1 : p >= 1e-4 ? 3 : 6;
  return `${formatNumber(100 * p, lang, digits)}%`;
}

/** A text as plotly shows it in a title, a tick or a legend: < and > written as entities, so a
 * token such as "<s>" is shown, not read as a tag.
 * Example: plotlyText("<s>") -> "&lt;s&gt;" */
export function plotlyText(text) {
  return String(text).replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A label's {name} placeholders filled (lib/course/i18n.py's fill, without its format specs). */
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
}

// ------------------------------------------------------------------ the page's store

/**
 * One store per page: a view publishes its choices (the attention lesson's head, the sampling
 * settings) and any section subscribed to a name follows at once, in the browser. Choices are
 * kept in sessionStorage, so a rerun, a lesson switch or a reload finds them again.
 */
export function store() {
  if (typeof window === "undefined") return memoryStore();
  if (!window.__ittStore) window.__ittStore = browserStore();
  return window.__ittStore;
}

/** A view's settings: the page store's `{name}.settings`, except that a share link's values, sent
 * by the server in `given` with a fresh `from_link` token, win once (only `fields` of them when
 * named); `given` fills what neither holds. `s`: the store (the page's by default). */
export function linkedSettings(name, given = {}, fields = null, s = store()) {
  const link = `${name}.link`;
  const key = `${name}.settings`;
  if (given.from_link && s.get(link) !== given.from_link) {
    s.set(link, given.from_link);
    s.set(key, fields ? Object.fromEntries(fields.map((f) => [f, given[f]])) : given);
  }
  return Object.assign({}, given, s.get(key, {}));
}

/** `values` merged into the page store's `{name}.settings` (what a reload finds again). */
export function keepSettings(name, values, s = store()) {
  s.set(`${name}.settings`, Object.assign({}, s.get(`${name}.settings`, {}), values));
}

function memoryStore() {
  const values = new Map();
  const subs = new Map();
  return {
    get: (name, fallback) => (values.has(name) ? values.get(name) : fallback),
    set(name, value) {
      values.set(name, value);
      for (const fn of subs.get(name) || []) fn(value);
    },
    subscribe(name, fn) {
      if (!subs.has(name)) subs.set(name, new Set());
      subs.get(name).add(fn);
      return () => subs.get(name).delete(fn);
    },
  };
}

function browserStore() {
  const mem = memoryStore();
  const KEY = "itt.views";
  let saved = {};
  try { saved = JSON.parse(window.sessionStorage.getItem(KEY) || "{}"); } catch (e) { saved = {}; }
  for (const [k, v] of Object.entries(saved)) mem.set(k, v);
  return {
    get: mem.get,
    subscribe: mem.subscribe,
    set(name, value) {
      mem.set(name, value);
      saved[name] = value;
      try { window.sessionStorage.setItem(KEY, JSON.stringify(saved)); } catch (e) { /* private mode: kept in memory */ }
    },
  };
}

// ------------------------------------------------------------------ controls

let uid = 0;

/** A control's box with its label, for an input of the id it returns. */
function labelled(parent, label) {
  const id = `itt-v${++uid}`;
  const wrap = el(parent, "div", "itt-control");
  const lab = el(wrap, "label", "itt-label");
  lab.htmlFor = id;
  lab.textContent = label;
  return { id, wrap };
}

/** A help line under a control, read with it by a screen reader (aria-describedby). */
function described(wrap, input, help) {
  if (!help) return;
  const h = el(wrap, "div", "itt-help");
  h.id = `${input.id}-help`;
  h.textContent = help;
  input.setAttribute("aria-describedby", h.id);
}

/** A native range input with its label and its value written beside it (role slider, arrow keys). */
export function slider(parent, { label, help, min, max, step, value, format, testid }) {
  const { id, wrap } = labelled(parent, label);
  const row = el(wrap, "div", "itt-row");
  const input = el(row, "input", "itt-range");
  Object.assign(input, { type: "range", id, min, max, step, value });
  if (testid) input.dataset.testid = testid;
  const out = el(row, "output", "itt-value");
  out.htmlFor = id;
  described(wrap, input, help);
  const show = () => {
    out.textContent = format(Number(input.value));
    input.setAttribute("aria-valuetext", out.textContent);
  };
  show();
  input.addEventListener("input", show);
  return input;
}

/** A native number input with its label. */
export function numberBox(parent, { label, help, min, max, step, value, testid }) {
  const { id, wrap } = labelled(parent, label);
  const input = el(wrap, "input", "itt-number");
  Object.assign(input, { type: "number", id, min, max, step, value });
  input.inputMode = "numeric";
  if (testid) input.dataset.testid = testid;
  described(wrap, input, help);
  return input;
}

/** A native <select> with its label; `options` are [value, text] pairs. */
export function select(parent, { label, options, value, testid }) {
  const { id, wrap } = labelled(parent, label);
  const input = el(wrap, "select", "itt-select");
  input.id = id;
  if (testid) input.dataset.testid = testid;
  for (const [v, text] of options) {
    const o = el(input, "option");
    o.value = String(v);
    o.textContent = text;
  }
  input.value = String(value);
  return input;
}

/** radios' options as [value, text, checked]: `options` are [value, text] pairs or plain strings
 * (the text is the value), compared with `value` as strings.
 * Example: radioOptions([["q", "queries"], ["k", "keys"]], "k") -> [["q", "queries", false], ["k", "keys", true]] */
export function radioOptions(options, value) {
  return options.map((o) => {
    const [v, text] = Array.isArray(o) ? o : [o, o];
    return [String(v), String(text), String(v) === String(value)];
  });
}

/** Native radio buttons in a <fieldset> with its <legend> (a keyboard moves with the arrow keys),
 * `help` a line under them. The buttons stand in a row of their own, or (`row` false) straight in
 * the fieldset. Returns { el, inputs, value() }: value() is the checked one's, else the first's. */
export function radios(parent, { label, options, value, name, testid, help, row = true }) {
  const set = el(parent, "fieldset", "itt-control itt-radios");
  el(set, "legend", "itt-label").textContent = label;
  if (testid) set.dataset.testid = testid;
  const into = row ? el(set, "div", "itt-radio-row") : set;
  const inputs = radioOptions(options, value).map(([v, text, checked]) => {
    const lab = el(into, "label", "itt-radio");
    const input = el(lab, "input");
    Object.assign(input, { type: "radio", name, value: v, checked });
    lab.appendChild(document.createTextNode(text));
    return input;
  });
  if (help) el(set, "div", "itt-help").textContent = help;
  return { el: set, inputs, value: () => (inputs.find((i) => i.checked) || inputs[0]).value };
}

/** A number box's value, clamped to its range; the fallback when it is empty or not a number. */
export function boxValue(input, fallback) {
  const v = Number(input.value);
  if (input.value === "" || !Number.isFinite(v)) return fallback;
  return Math.min(Number(input.max), Math.max(Number(input.min), Math.round(v)));
}

/** A new element `tag` of class `cls`, appended to `parent`. */
export function el(parent, tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  // A table box scrolls sideways on a narrow screen: a keyboard user must be able to reach it.
  if (cls && cls.split(" ").includes("itt-table-box")) e.tabIndex = 0;
  parent.appendChild(e);
  return e;
}

// ------------------------------------------------------------------ pieces every view draws

/** A view's own box, `<div class="itt-view {cls}" data-testid="ittView" data-view="{view}">`: what
 * the browser tests find a view by. */
export function viewBox(parent, cls, view) {
  const box = el(parent, "div", `itt-view ${cls}`);
  box.dataset.testid = "ittView";
  box.dataset.view = view;
  return box;
}

/** The view's host in `root`, emptied (made the first time): other children of `root` are
 * Streamlit's and must stay. */
export function viewHost(root) {
  const host = root.querySelector(":scope > .itt-host") || el(root, "div", "itt-host");
  host.replaceChildren();
  return host;
}

/** The cells of a table: the column headers (scope col), then each row with its cell `rowHeader`
 * a row header (a <th scope="row">) and the others data.
 * Example: tableCells(["pair", "θ"], [["0", "1"]]).body -> [[{tag: "th", scope: "row", text: "0"}, {tag: "td", text: "1"}]] */
export function tableCells(head, rows, rowHeader = 0) {
  return {
    head: head.map((text) => ({ tag: "th", scope: "col", text })),
    body: rows.map((r) => r.map((text, j) => (j === rowHeader ? { tag: "th", scope: "row", text } : { tag: "td", text }))),
  };
}

/** A table of `head` and `rows` (tableCells) in place of what `box` held: a chart's table alternative. */
export function table(box, head, rows, rowHeader = 0) {
  const cells = tableCells(head, rows, rowHeader);
  const t = document.createElement("table");
  const put = (row, { tag, scope, text }) => {
    const c = el(row, tag);
    if (scope) c.scope = scope;
    c.textContent = text;
  };
  const top = el(el(t, "thead"), "tr");
  for (const c of cells.head) put(top, c);
  const body = el(t, "tbody");
  for (const r of cells.body) {
    const row = el(body, "tr");
    for (const c of r) put(row, c);
  }
  box.replaceChildren(t);
  return t;
}

/** A chart named for a screen reader (role figure, `label` its name, or set later on `fig`), with
 * its table alternative in a <details> under it, opened by `tableLabel`. `height`: the room the plot
 * keeps until it is drawn. Returns { fig, plot, details, box, table }: `table(make)` fills the table
 * alternative from the latest data, only while it is open (lazyTable). */
export function chartBox(parent, { label, tableLabel, height, plotClass }) {
  const fig = el(parent, "div", "itt-chart");
  fig.setAttribute("role", "figure");
  if (label !== undefined) fig.setAttribute("aria-label", label);
  const plot = el(fig, "div", plotClass);
  if (height) plot.style.minHeight = `${height}px`;
  const details = el(parent, "details", "itt-table");
  el(details, "summary").textContent = tableLabel;
  const box = el(details, "div", "itt-table-box");
  return { fig, plot, details, box, table: lazyTable(details, box) };
}

/** The one way a chart's table alternative is filled: only while its <details> is open. The
 * returned set(make) takes the latest data's `make`: run at once if the table is open, else the
 * box is emptied and `make` runs when the learner opens it (the latest one only). `make(box)`
 * returns [head, rows, rowHeader?] for table(), or fills the emptied box itself and returns
 * nothing. A move then costs nothing for a closed table (64 rows rebuilt, and the page laid out
 * again, per move). */
export function lazyTable(details, box) {
  let make = null;  // the latest data's, not built yet
  const build = () => {
    const fn = make;
    make = null;
    box.replaceChildren();
    const cells = fn(box);
    if (Array.isArray(cells)) table(box, ...cells);
  };
  details.addEventListener("toggle", () => { if (details.open && make) build(); });
  return (fn) => {
    make = fn;
    if (details.open) build();
    else box.replaceChildren();
  };
}

/** Draws `spec` ({ data, layout }) into a chartBox's plot with plotly.js from `src`, and lets go of
 * the room kept for it; a plot that cannot be drawn says `unavailable` instead. Resolves to true
 * when drawn, false when not. */
export function drawChart(plot, src, spec, config, unavailable) {
  return plotly(src).then((P) => P.react(plot, spec.data, spec.layout, config))
    .then(() => { plot.style.minHeight = ""; return true; })
    .catch(() => { plot.textContent = unavailable; return false; });
}

/** A metric: its label (`help` the label's tooltip) over its value (`testid` on the value), and
 * with `delta` a line under them for the change. Returns { box, label, value, delta }. */
export function metric(parent, { label = "", help, testid, delta = false } = {}) {
  const box = el(parent, "div", "itt-metric");
  const name = el(box, "div", "itt-metric-label");
  name.textContent = label;
  if (help) name.title = help;
  const value = el(box, "div", "itt-metric-value");
  if (testid) value.dataset.testid = testid;
  return { box, label: name, value, delta: delta ? el(box, "div", "itt-metric-delta") : null };
}

/** A notice (role status), hidden while it has nothing to say. Returns say(texts): the texts
 * joined, or the notice hidden when there are none. */
export function noteBox(parent) {
  const note = el(parent, "div", "itt-note");
  note.setAttribute("role", "status");
  note.hidden = true;
  return (texts) => {
    note.textContent = texts.join(" ");
    note.hidden = texts.length === 0;
  };
}

/** A label with **bold** parts and {name} placeholders as its pieces: [bold, [text or value...]]
 * for each part between the **, a placeholder with no value left as written.
 * Example: richParts("**{n}** tokens", { n: "3" }) -> [[false, [""]], [true, ["", "3", ""]], [false, [" tokens"]]] */
export function richParts(template, values) {
  return template.split("**").map((part, i) => [i % 2 === 1, part.split(/(\{\w+\})/).map((bit) => {
    const m = /^\{(\w+)\}$/.exec(bit);
    return m && m[1] in values ? values[m[1]] : bit;
  })]);
}

/** A label written into `parent` in place of what it held (richParts): its **bold** parts in
 * <strong>, its {name} placeholders filled; a value may be a DOM node (a code span). */
export function richText(parent, template, values) {
  parent.replaceChildren();
  for (const [bold, bits] of richParts(template, values)) {
    const into = bold ? el(parent, "strong") : parent;
    for (const v of bits) into.appendChild(v instanceof Node ? v : document.createTextNode(String(v)));
  }
}

// ------------------------------------------------------------------ plotly

/** plotly.js from the app's own static files (scripts/vendor_js.sh), loaded once per page. Its
 * `react` and `newPlot` draw every view's chart by the course's layout rule (`laidOut`), at the
 * width of its box and again when the window's width changes (responsive). */
export function plotly(src) {
  return loadPlotly(src).then((P) => {
    if (!P.__ittLaidOut) {
      const draw = (fn) => (el, data, layout, config) => fn.call(P, el, data, laidOut(Object.assign({}, layout || {},
        { autosize: true, width: undefined })), Object.assign({ responsive: true }, config || {}));
      P.__ittLaidOut = { react: draw(P.react), newPlot: draw(P.newPlot) };
    }
    return new Proxy(P, { get: (t, k) => (k === "react" || k === "newPlot" ? t.__ittLaidOut[k] : t[k]) });
  });
}

function loadPlotly(src) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__ittPlotly) {
    window.__ittPlotly = new Promise((ok, fail) => {
      const s = document.createElement("script");
      s.src = src;
      s.onload = () => ok(window.Plotly);
      s.onerror = () => { window.__ittPlotly = null; fail(new Error("plotly.js not served")); };
      document.head.appendChild(s);
    });
  }
  return window.__ittPlotly;
}

/** Calls `fn` once per animation frame at most, with the latest arguments. */
export function perFrame(fn) {
  let pending = null;
  return (...args) => {
    if (pending === null) {
      requestAnimationFrame(() => { const a = pending; pending = null; fn(...a); });
    }
    pending = args;
  };
}

/** lib/serving/payload.py's pack_ints read back: whole numbers, exactly, as a typed array (little-endian). */
export function unpackInts(packed) {
  const bytes = bytesOf(packed.b64);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const w = packed.width;
  const n = bytes.byteLength / w;
  if (n !== packed.n) throw new Error(`payload holds ${n} values, says ${packed.n}`);
  const out = w === 4 ? new Uint32Array(n) : w === 2 ? new Uint16Array(n) : new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = w === 4 ? view.getUint32(4 * i, true) : w === 2 ? view.getUint16(2 * i, true) : bytes[i];
  return out;
}

/** Runs `rebuild()` and gives the focus back to the same control (by its data-testid) if one of
 * the view's controls had it: new data must not throw a keyboard user out of the slider. */
export function keepFocus(root, rebuild) {
  const active = document.activeElement;
  const id = active && root.contains(active) ? active.dataset.testid : null;
  rebuild();
  if (id) {
    const again = root.querySelector(`[data-testid="${id}"]`);
    if (again) again.focus({ preventScroll: true });
  }
}

/** Empties a view's root of what the view drew, keeping any stylesheet Streamlit puts there
 * (a component's own styles sit in a <div> holding a <style>: replaceChildren() would take it away). */
export function clearView(root) {
  for (const child of Array.from(root.children)) {
    const sheet = child.tagName === "STYLE" || child.tagName === "LINK" || child.querySelector("style, link");
    if (!sheet) child.remove();
  }
}

// ------------------------------------------------------------------ the charts' layout rule

const TITLE_CHARS = 40;
const SUBTITLE_CHARS = 46;
const AXIS_TITLE_CHARS = 44;
const TITLE_SIZE = 16;
const SUBTITLE_SIZE = 14;
const LINE_PX = { 16: 21, 14: 18 };
const MODEBAR_PX = 28;
const AXIS = /^[xy]axis\d*$/;

/** ui/views/figures.py's wrap: <br> at spaces so no line passes `width` visible characters. */
export function wrap(text, width) {
  const out = [];
  for (const line of text.split(/<br\s*\/?>/)) {
    let current = "";
    for (const word of line.split(" ")) {
      const trial = current ? `${current} ${word}` : word;
      if (current && trial.replace(/<[^>]+>/g, "").length > width) {
        out.push(current);
        current = word;
      } else current = trial;
    }
    out.push(current);
  }
  return out.join("<br>");
}

const lines = (text) => (text ? text.split(/<br\s*\/?>/).length : 0);
const titleText = (t) => (t && typeof t === "object" ? String(t.text || "") : String(t || ""));
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** ui/views/figures.py's laid_out, the course's one layout rule for every chart (docs/accessibility.md, "Charts that fit"):
 * titles above the plot under the mode bar's band, wrapped for a phone; legends flat at the foot;
 * x axis titles wrapped, one repeated under several panels said once; plotly's own tick angles.
 * Held to the Python by shared fixtures (tests/js/common.test.js). */
export function laidOut(input) {
  const layout = Object.assign({}, input);
  const notes = Array.isArray(layout.annotations) ? layout.annotations : [];
  const tops = notes.filter((n) => isObj(n) && n.yanchor === "bottom" && n.yref === "paper" && n.xref === "paper"
    && !(n.showarrow === undefined ? true : n.showarrow) && n.text);
  const perRow = new Map();
  const row = (n) => Math.round(Number(n.y === undefined ? 1 : n.y) * 1000) / 1000;
  for (const n of tops) perRow.set(row(n), (perRow.get(row(n)) || 0) + 1);
  let subLines = 0;
  if (tops.length) {
    layout.annotations = notes.map((n) => {
      if (!tops.includes(n)) return n;
      const share = perRow.get(row(n));
      const text = wrap(String(n.text), Math.max(11, Math.floor(SUBTITLE_CHARS / share) - 4));
      const m = Object.assign({}, n, { text, font: Object.assign({}, n.font || {}, { size: SUBTITLE_SIZE }) });
      if (Number(m.y === undefined ? 1 : m.y) >= 0.99) subLines = Math.max(subLines, lines(text));
      return m;
    });
  }
  const radial = [];
  for (const [name, polar] of Object.entries(layout)) {
    if (name.startsWith("polar") && isObj(polar) && isObj(polar.radialaxis)) {
      const axis = Object.assign({}, polar.radialaxis);
      if (titleText(axis.title)) { radial.push(titleText(axis.title)); delete axis.title; }
      if (axis.nticks === undefined) axis.nticks = 4;
      layout[name] = Object.assign({}, polar, { radialaxis: axis });
    }
  }
  const title = layout.title;
  const text = titleText(title);
  let room = 10 + subLines * LINE_PX[SUBTITLE_SIZE];
  const margin = Object.assign({}, layout.margin || {});
  const topTicks = Object.entries(layout).some(([k, v]) => AXIS.test(k) && k.startsWith("x") && isObj(v) && v.side === "top");
  if (text || radial.length) {
    const base = isObj(title) ? title : {};
    const wrapped = wrap(text, TITLE_CHARS);
    const t = Object.assign({}, base, { text: wrapped, font: Object.assign({}, base.font || {}, { size: TITLE_SIZE }),
      x: 0.5, xanchor: "center" });
    if (radial.length) {
      t.subtitle = { text: wrap(radial.join(" · "), TITLE_CHARS + 6) };
      room += lines(t.subtitle.text) * LINE_PX[SUBTITLE_SIZE];
    }
    if (topTicks) {
      Object.assign(t, { yref: "container", y: 1, yanchor: "top", automargin: false,
        pad: { t: MODEBAR_PX + 6 + (lines(wrapped) - 1) * LINE_PX[TITLE_SIZE] } });
      margin.t = (Math.trunc(Number(margin.t || 100)) || 100) + MODEBAR_PX + (lines(wrapped) - 1) * LINE_PX[TITLE_SIZE];
    } else {
      const extra = (lines(wrapped) - 1) * LINE_PX[TITLE_SIZE];
      Object.assign(t, { yref: "paper", y: 1, yanchor: "bottom", automargin: true, pad: { t: MODEBAR_PX, b: room + extra } });
      margin.t = MODEBAR_PX + 6 + lines(wrapped) * LINE_PX[TITLE_SIZE] + room + extra;  // see ui/views/figures.py
    }
    layout.title = t;
  } else if (topTicks) {
    margin.t = Math.trunc(Number(margin.t || 0)) + MODEBAR_PX;
  } else {
    margin.t = Math.max(Math.trunc(Number(margin.t || 0)), subLines ? MODEBAR_PX + room : MODEBAR_PX);
  }
  layout.margin = margin;
  if (layout.showlegend !== false) {
    layout.legend = Object.assign({}, layout.legend || {}, { orientation: "h", xref: "container", x: 0,
      xanchor: "left", yref: "container", y: 0, yanchor: "bottom" });
  }
  const xTitles = new Map();
  for (const [name, axis] of Object.entries(layout)) {
    if (AXIS.test(name) && name.startsWith("x") && isObj(axis) && titleText(axis.title)) {
      const [lo, hi] = (axis.domain || [0, 1]).slice(0, 2);
      const key = titleText(axis.title);
      if (!xTitles.has(key)) xTitles.set(key, []);
      xTitles.get(key).push([Math.abs((lo + hi) / 2 - 0.5), name]);
    }
  }
  const repeated = new Set();
  for (const same of xTitles.values()) {
    if (same.length > 1) {
      same.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      for (const [, name] of same.slice(1)) repeated.add(name);
    }
  }
  for (const [name, value] of Object.entries(layout)) {
    if (AXIS.test(name) && isObj(value)) {
      const axis = Object.assign({}, value);
      delete axis.tickangle;
      const at = axis.title;
      if (repeated.has(name)) axis.title = isObj(at) ? Object.assign({}, at, { text: "" }) : { text: "" };
      else if (titleText(at) && name.startsWith("x")) {
        const [lo, hi] = (axis.domain || [0, 1]).slice(0, 2);
        const w = wrap(titleText(at), Math.max(12, Math.trunc(AXIS_TITLE_CHARS * (hi - lo))));
        axis.title = isObj(at) ? Object.assign({}, at, { text: w }) : { text: w };
      }
      if (axis.automargin === undefined) axis.automargin = true;
      layout[name] = axis;
    }
  }
  return layout;
}

// ------------------------------------------------------------------ a hover label of our own

/**
 * A hover label over a plotly chart, for a chart whose cells are painted on a canvas (cellCanvas):
 * plotly's own label would read plotly's cells, which may be another head's until plotly catches
 * up. `chart` is the plot's positioned parent; the plot's traces set hoverinfo "none" (plotly then
 * draws no label but still says where the pointer is). `text(point)` gives the label of plotly's
 * hover point (its pointIndex, curveNumber), or null for none.
 */
export function hoverTip(chart, plot, text) {
  const tip = el(chart, "div", "itt-tip");
  tip.hidden = true;
  if (!plot.on) return tip;
  plot.on("plotly_hover", (e) => {
    const pt = e && e.points && e.points[0];
    const said = pt && Array.isArray(pt.pointIndex) ? text(pt) : null;
    if (said === null) return;
    tip.textContent = said;
    const r = chart.getBoundingClientRect();
    const ev = e.event || {};
    tip.style.left = `${Math.max((ev.clientX || r.left) - r.left + 12, 0)}px`;
    tip.style.top = `${Math.max((ev.clientY || r.top) - r.top + 12, 0)}px`;
    tip.hidden = false;
  });
  plot.on("plotly_unhover", () => { tip.hidden = true; });
  return tip;
}

// ------------------------------------------------------------------ heatmap cells on a canvas

/** The colour of a plotly colour scale (`[[stop, colour], ...]`, stops from 0 to 1, each colour
 * "#rrggbb" or "rgb(r, g, b)" as plotly.py writes its named scales) at `v` (clamped to 0-1),
 * interpolated in RGB as plotly does: [r, g, b], whole numbers. */
export function scaleColour(scale, v) {
  return colourScale(scale)(v);
}

/** A colour written "#rrggbb" or "rgb(r, g, b)", or already [r, g, b]: [r, g, b]. */
export function rgbOf(c) {
  if (Array.isArray(c)) return c;
  return c.startsWith("#") ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16))
    : c.slice(c.indexOf("(") + 1, c.indexOf(")")).split(",").map(Number);
}

/** scaleColour with the scale's colours read once: `colourScale(scale)(v)` is `scaleColour(scale, v)`,
 * for painting thousands of cells a move. */
export function colourScale(scale) {
  const stops = scale.map(([s]) => s);
  const colours = scale.map(([, c]) => rgbOf(c));
  return (v) => {
    const x = Math.min(Math.max(Number(v) || 0, 0), 1);
    let k = 1;
    while (k < stops.length - 1 && stops[k] < x) k++;
    const s0 = stops[k - 1];
    const s1 = stops[k];
    const t = s1 > s0 ? Math.min(Math.max((x - s0) / (s1 - s0), 0), 1) : 0;
    const a = colours[k - 1];
    const b = colours[k];
    return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * t));
  };
}

/** Where cell (row i, column j) of a heatmap whose cells are the indices 0..n-1 on both axes sits
 * in its plot area of `w` x `h` CSS pixels, given the axes' ranges as plotly holds them (the y axis
 * drawn from its range's second end at the top, so a reversed axis puts row 0 there), less `gap`
 * pixels between cells: [x, y, width, height]. */
export function cellBox(i, j, { xr, yr, w, h, gap = 0 }) {
  const px = (v) => ((v - xr[0]) / (xr[1] - xr[0])) * w;
  const py = (v) => ((yr[1] - v) / (yr[1] - yr[0])) * h;
  const x0 = Math.min(px(j - 0.5), px(j + 0.5));
  const x1 = Math.max(px(j - 0.5), px(j + 0.5));
  const y0 = Math.min(py(i - 0.5), py(i + 0.5));
  const y1 = Math.max(py(i - 0.5), py(i + 0.5));
  return [x0 + gap / 2, y0 + gap / 2, Math.max(x1 - x0 - gap, 0), Math.max(y1 - y0 - gap, 0)];
}

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** A colour as one pixel of a canvas's image (as rgbOf reads it; opaque): its RGBA bytes read
 * as one 32-bit number in the machine's byte order. */
export function packedPixel(colour) {
  const [r, g, b] = rgbOf(colour);
  return (LITTLE_ENDIAN ? (255 << 24) | (b << 16) | (g << 8) | r : (r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
}

/** A heatmap's cells as the pixels of an image `width` x `height` device pixels (`px`, one 32-bit
 * pixel each, row after row): `background` everywhere, then each cell of `rows` (values from 0 to 1,
 * null for none) its colour (`colourOf(v)` -> [r, g, b]) over its box (cellBox with `geo`, in CSS
 * pixels, times `ratio`), cut to the image. */
export function fillCells(px, width, height, rows, geo, ratio, colourOf, background) {
  px.fill(packedPixel(background));
  rows.forEach((r, i) => r.forEach((v, j) => {
    if (v === null || v === undefined) return;
    const [x, y, cw, ch] = cellBox(i, j, geo);
    const x0 = Math.max(Math.round(x * ratio), 0);
    const x1 = Math.min(Math.round((x + cw) * ratio), width);
    const y0 = Math.max(Math.round(y * ratio), 0);
    const y1 = Math.min(Math.round((y + ch) * ratio), height);
    const c = packedPixel(colourOf(v));
    for (let yy = y0; yy < y1; yy++) px.fill(c, yy * width + x0, yy * width + x1);
  }));
  return px;
}

/**
 * A heatmap's cells drawn on a canvas laid over a plotly heatmap, which keeps its axes, colour bar
 * and hover events. A move that changes only the cells (the attention lesson's head) repaints the
 * canvas instead of replotting: plotly replots the whole chart when a heatmap's z changes, its
 * axes' tick labels measured again (about 200 ms of the page's thread for 64 tokens on the course's
 * 2-core machine, Chromium's profiler). `chart` is the plot's positioned parent; the plot's trace 0
 * is a heatmap of cells at the indices 0..n-1 on both axes, drawn with `scale`; `xaxis`/`yaxis`
 * name its axes in plotly's layout (one canvas per subplot: "xaxis2" and "yaxis2" for the second).
 * Returns paint(z): z's rows of values from 0 to 1 (the heatmap's zmin to zmax; null for a hidden
 * cell, left `background`: the course's theme is light); the canvas follows the plot at each of
 * plotly's redraws (a new width, a relayout). Null where the browser gives no canvas: the caller
 * replots instead.
 */
export function cellCanvas(chart, plot, scale, { gap = 1, background = "#ffffff", xaxis = "xaxis", yaxis = "yaxis" } = {}) {
  const canvas = document.createElement("canvas");
  const ctx = canvas.getContext && canvas.getContext("2d");
  if (!ctx) return null;
  canvas.setAttribute("aria-hidden", "true");
  canvas.className = "itt-cells";
  chart.style.position = "relative";
  chart.appendChild(canvas);
  const colourOf = colourScale(scale);
  let rows = null;
  const paint = () => {
    const L = plot._fullLayout;
    const xa = L && L[xaxis];
    const ya = L && L[yaxis];
    if (!rows || !xa || !ya) return;
    // The subplot's place in the plot: plotly's axes hold their offset and length in pixels.
    const s = { l: xa._offset, t: ya._offset, w: xa._length, h: ya._length };
    const ratio = window.devicePixelRatio || 1;
    Object.assign(canvas.style, { left: `${plot.offsetLeft + s.l}px`, top: `${plot.offsetTop + s.t}px`,
      width: `${s.w}px`, height: `${s.h}px` });
    const wantW = Math.round(s.w * ratio);
    const wantH = Math.round(s.h * ratio);
    if (canvas.width !== wantW || canvas.height !== wantH) { canvas.width = wantW; canvas.height = wantH; }
    // Every cell's box in device pixels, filled in one image: a fillRect with its own colour string
    // per cell took about 20 ms a head for 3 x 64 x 64 cells (Chromium's profiler, 2-core machine).
    const image = ctx.createImageData(wantW, wantH);
    fillCells(new Uint32Array(image.data.buffer), wantW, wantH, rows,
      { xr: xa.range, yr: ya.range, w: s.w, h: s.h, gap }, ratio, colourOf, background);
    ctx.putImageData(image, 0, 0);
  };
  if (plot.on) plot.on("plotly_afterplot", paint);
  // The cells shown, on the element: the browser tests compare them with the table and a link's view.
  return (z) => { rows = z; canvas.__ittCells = z; paint(); };
}

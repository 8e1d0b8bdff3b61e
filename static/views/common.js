// What every browser view shares: decoding the server's packed arrays, writing numbers the way
// the course writes them, native labelled controls, plotly.js, and the page-level store through
// which a section follows a choice made elsewhere on the page.
//
// Pure functions (unpackU16, formatNumber, pct) are tested under node (tests/js) against
// fixtures the Python side writes from lib (tests/test_views.py): the two must agree.

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

/** lib/payload.py's pack_u16 read back: value = lo + q * scale, q little-endian uint16. */
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

/** lib/quiz.py's format_number: grouped from 10,000 up, 6 significant digits, Italian marks. */
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

/** ui/sampling_view.py's pct: a probability as a percentage, more digits when it is small. */
export function pct(p, lang) {
  const digits = p >= 0.01 ? 1 : p >= 1e-4 ? 3 : 6;
  return `${formatNumber(100 * p, lang, digits)}%`;
}

/** A label's {name} placeholders filled (lib/i18n.py's fill, without its format specs). */
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

/** A native range input with its label and its value written beside it (role slider, arrow keys). */
export function slider(parent, { label, help, min, max, step, value, format, testid }) {
  const id = `itt-v${++uid}`;
  const wrap = el(parent, "div", "itt-control");
  const lab = el(wrap, "label", "itt-label");
  lab.htmlFor = id;
  lab.textContent = label;
  const row = el(wrap, "div", "itt-row");
  const input = el(row, "input", "itt-range");
  Object.assign(input, { type: "range", id, min, max, step, value });
  if (testid) input.dataset.testid = testid;
  const out = el(row, "output", "itt-value");
  out.htmlFor = id;
  if (help) {
    const h = el(wrap, "div", "itt-help");
    h.id = `${id}-help`;
    h.textContent = help;
    input.setAttribute("aria-describedby", h.id);
  }
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
  const id = `itt-v${++uid}`;
  const wrap = el(parent, "div", "itt-control");
  const lab = el(wrap, "label", "itt-label");
  lab.htmlFor = id;
  lab.textContent = label;
  const input = el(wrap, "input", "itt-number");
  Object.assign(input, { type: "number", id, min, max, step, value });
  input.inputMode = "numeric";
  if (testid) input.dataset.testid = testid;
  if (help) {
    const h = el(wrap, "div", "itt-help");
    h.id = `${id}-help`;
    h.textContent = help;
    input.setAttribute("aria-describedby", h.id);
  }
  return input;
}

/** A number box's value, clamped to its range; the fallback when it is empty or not a number. */
export function boxValue(input, fallback) {
  const v = Number(input.value);
  if (input.value === "" || !Number.isFinite(v)) return fallback;
  return Math.min(Number(input.max), Math.max(Number(input.min), Math.round(v)));
}

export function el(parent, tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  parent.appendChild(e);
  return e;
}

// ------------------------------------------------------------------ plotly

/** plotly.js from the app's own static files (scripts/vendor_js.sh), loaded once per page. */
export function plotly(src) {
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

/** lib/payload.py's pack_ints read back: whole numbers, exactly, as a typed array (little-endian). */
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

/** Empties a view's root of what the view drew, keeping the stylesheet Streamlit puts there
 * (views.css sits inside the component's own element, in a <div> holding a <style>:
 * replaceChildren() would take it away). */
export function clearView(root) {
  for (const child of Array.from(root.children)) {
    const sheet = child.tagName === "STYLE" || child.tagName === "LINK" || child.querySelector("style, link");
    if (!sheet) child.remove();
  }
}

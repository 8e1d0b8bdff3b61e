// static/components/progress_store.js: the browser asks once per run that has not heard it, never
// twice for one, and only while no run is going or asked for.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import store, { askFor, resend } from "../../static/components/progress_store.js";

// An ask sent starts the store's watch: a look every resend.ms (10 s), three times. Those timers
// are cleared once the file's tests are done, so node's runner does not sit them out (30 s).
const timers = new Set();
const setTimer = globalThis.setTimeout;
globalThis.setTimeout = (fn, ms, ...args) => {
  const timer = setTimer(() => { timers.delete(timer); fn(...args); }, ms);
  timers.add(timer);
  return timer;
};
after(() => timers.forEach(clearTimeout));

function browser(state = "notRunning") {
  const kept = new Map([["itt.progress", "CODE"], ["itt.text", "a text"]]);
  const app = { dataset: { testScriptState: state } };
  const watchers = [];
  globalThis.MutationObserver = class {
    constructor(fn) { this.fn = fn; this.on = false; watchers.push(this); }
    observe(target) { assert.equal(target, app); this.on = true; }
    disconnect() { this.on = false; }
  };
  globalThis.window = { localStorage: { getItem: (k) => kept.get(k) ?? null, setItem: (k, v) => kept.set(k, v),
                                        removeItem: (k) => kept.delete(k) } };
  const links = ["http://h/", "http://h/position"].map((href) => ({
    href, current: href === "http://h/", keyboard: false,
    getAttribute(name) { return name === "aria-current" && this.current ? "page" : null; },
    matches(sel) { return sel === ":focus-visible" ? this.keyboard : sel === nav; },
  }));
  const listeners = [];
  const nav = '[data-testid="stSidebarNav"] a';
  globalThis.document = {
    documentElement: { dataset: {} }, cookie: "",
    addEventListener: (type, fn) => listeners.push([type, fn]),
    querySelector: (s) => (s === '[data-testid="stApp"]' ? app
      : s === nav + '[aria-current="page"]' ? links.find((l) => l.current) ?? null : null),
  };
  const runState = (s) => { app.dataset.testScriptState = s; for (const w of [...watchers]) if (w.on) w.fn(); };  // as a real observer: only those watching before the change
  const click = (i) => {  // a click on the sidebar's i-th lesson link
    const target = { closest: (sel) => (sel === nav ? links[i] : null) };
    for (const [type, fn] of listeners) if (type === "click") fn({ target });
  };
  const becomesCurrent = (i) => links.forEach((l, j) => { l.current = j === i; });
  const focus = (i, keyboard = false) => { links[i].keyboard = keyboard; globalThis.document.activeElement = links[i]; };
  return { kept, runState, click, becomesCurrent, focus };
}

const drawn = (unheard, save = null) => ({ sid: "s1", unheard, save, learner: "", learnerEntry: "itt.learner",
                                           progressEntry: "itt.progress", textEntry: "itt.text", classEntry: "itt.class" });

test("one ask per run that has not heard the browser, none twice for the same run", () => {
  browser();
  const asks = [];
  const setTriggerValue = (name, value) => asks.push([name, value]);
  store({ data: drawn(1), setTriggerValue });
  store({ data: drawn(1), setTriggerValue });  // the same drawing again (a remount): no second ask
  assert.equal(asks.length, 1);
  assert.deepEqual(asks[0], ["stored", { sid: "s1", ask: 1, learner: "", code: "CODE", text: "a text", klass: null }]);
  // The run that should have answered was stopped; the next run draws the store with the next count.
  store({ data: drawn(2), setTriggerValue });
  assert.equal(asks.length, 2);
  assert.equal(document.documentElement.dataset.ittProgress, undefined);
});

test("no ask while a run goes or a lesson switch is on its way: the latest drawing asks once after", () => {
  const { runState } = browser("running");
  const asks = [];
  const setTriggerValue = (name, value) => asks.push(value.ask);
  store({ data: drawn(1), setTriggerValue });  // drawn by the first page's run, still going
  runState("rerunRequested");  // the learner clicked another lesson
  assert.deepEqual(asks, []);
  runState("running");
  store({ data: drawn(2), setTriggerValue });  // drawn by the new lesson's run
  assert.deepEqual(asks, []);
  runState("notRunning");
  assert.deepEqual(asks, [2]);
  runState("running");
  runState("notRunning");
  assert.deepEqual(asks, [2]);  // asked once
});

test("once heard, the browser keeps what the server sends and asks no more", () => {
  const { kept, runState } = browser("running");
  const asks = [];
  store({ data: drawn(1), setTriggerValue: (...a) => asks.push(a) });
  store({ data: drawn(null, { "itt.progress": "NEW", "itt.text": "" }), setTriggerValue: (...a) => asks.push(a) });
  runState("notRunning");
  assert.equal(asks.length, 0);  // heard before the app was idle: the waiting ask is dropped
  assert.equal(document.documentElement.dataset.ittProgress, "ready");
  assert.equal(kept.get("itt.progress"), "NEW");
  assert.equal(kept.has("itt.text"), false);
  assert.equal(askFor(drawn(null, {})), null);
});

const later = (ms = 450) => new Promise((resolve) => setTimeout(resolve, ms));  // past the held ask's next look

test("no ask while a lesson clicked in the sidebar is on its way, even with the app idle", async () => {
  const { runState, click, becomesCurrent } = browser("running");
  const asks = [];
  const setTriggerValue = (name, value) => asks.push(value.ask);
  store({ data: drawn(1), setTriggerValue });  // the first page's store, its run still going
  click(1);  // the learner clicks a lesson at once
  runState("notRunning");  // the first page's run ends before the click's run starts
  assert.deepEqual(asks, []);
  runState("running");  // the new lesson's run: the sidebar marks it current
  becomesCurrent(1);
  store({ data: drawn(2), setTriggerValue });
  runState("notRunning");
  await later();
  assert.deepEqual(asks, [2]);
});

test("a link a pointer focused before this script was loaded holds the ask back too", async () => {
  // Traced under load: the click came before the store's script could note it; Streamlit's frontend
  // still named the first page when the ask left, and the new lesson was left empty.
  const { runState, becomesCurrent, focus } = browser("notRunning");
  focus(1);  // clicked, not seen by any listener; the app idle until the switch is sent
  const asks = [];
  const setTriggerValue = (name, value) => asks.push(value.ask);
  store({ data: drawn(1), setTriggerValue });
  await later();
  assert.deepEqual(asks, []);
  runState("running");  // the new lesson's run
  becomesCurrent(1);
  await later();
  assert.deepEqual(asks, []);  // not while it runs
  runState("notRunning");
  assert.deepEqual(asks, [1]);
});

test("a link focused from the keyboard is not a click: the ask goes at once", () => {
  const { focus } = browser("notRunning");
  focus(1, true);
  const asks = [];
  store({ data: drawn(1), setTriggerValue: (name, value) => asks.push(value.ask) });
  assert.deepEqual(asks, [1]);
});

test("an ask no drawing answers is sent again once the app is idle, a few times at most", async () => {
  const { runState } = browser("notRunning");
  resend.ms = 30;
  try {
    const asks = [];
    const setTriggerValue = (name, value) => asks.push(value.ask);
    store({ data: drawn(1), setTriggerValue });
    assert.deepEqual(asks, [1]);
    runState("running");  // a run that does not draw the store (the answer lost)
    await later(60);
    assert.deepEqual(asks, [1]);  // not while a run goes
    runState("notRunning");
    assert.deepEqual(asks, [1, 1]);  // idle again and still no answer: the same ask again
    await later(200);
    assert.deepEqual(asks, [1, 1, 1, 1]);  // three times more at most
  } finally {
    resend.ms = 10000;
  }
});

test("an ask answered is not sent again", async () => {
  browser("notRunning");
  resend.ms = 30;
  try {
    const asks = [];
    const setTriggerValue = (name, value) => asks.push(value.ask);
    store({ data: drawn(1), setTriggerValue });
    store({ data: drawn(null, { "itt.progress": "NEW" }), setTriggerValue });  // the answer
    await later(100);
    assert.deepEqual(asks, [1]);
    store({ data: drawn(2), setTriggerValue });  // answered by a newer drawing that asks again
    await later(10);
    assert.deepEqual(asks, [1, 2]);
  } finally {
    resend.ms = 10000;
  }
});

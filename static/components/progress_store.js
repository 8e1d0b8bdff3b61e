// The script of a small Streamlit component (components v2), loaded by ui/learner/persist.py (the learner's progress in localStorage).
//
// Until the server has heard what this browser keeps, each of its runs draws the store with
// `save` null and a new `unheard` count; the browser asks once per (sid, count), when no run is
// going or asked for and no lesson clicked in the sidebar is still on its way. An ask can be lost
// (a lesson switch sent at once stops the run that would answer it), so a later run's count asks
// again; the server ignores an ask it has already answered. An ask sent while a lesson switch is
// on its way reruns the store's section under the old page's address (Streamlit's frontend names
// the page it shows until the new page's run starts), and the browser takes the new lesson for the
// old page and empties it for good (docs/architecture.md, "A lesson switched to at once").

export function askFor(data) {
  // The key of the ask this drawing calls for, or null (the server has heard the browser).
  if (data.save) return null;
  return data.sid + "/" + (data.unheard ?? 0);
}

const BUSY = ["running", "rerunRequested", "stopRequested"];  // the app's own word for a run going or asked for

export function whenIdle(fn, now = true) {
  // Run `fn` once no script runs and none is asked for: at once if so and `now`, else when the
  // app's state next changes to that.
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = () => !(app && BUSY.includes(app.dataset.testScriptState));
  if (!app || (now && idle())) { fn(); return; }
  const watch = new MutationObserver(() => {
    if (!idle()) return;
    watch.disconnect();
    fn();
  });
  watch.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
}

const NAV = '[data-testid="stSidebarNav"] a';
const RECHECK_MS = 200;  // how often an ask held back looks again
// An ask whose answer never came (no drawing of the store since, the app idle) is sent again after
// this long, at most `tries` times: a lost ask would otherwise wait for the learner's next input.
export const resend = { ms: 10000, tries: 3 };
export const NAV_WAIT_MS = 15000;  // a lesson clicked that never becomes the current one stops holding asks back

export function watchNavigation() {
  // Note each lesson clicked in the sidebar (once per window): its address, and when.
  if (window.__ittNavWatched) return;
  window.__ittNavWatched = true;
  document.addEventListener("click", (e) => {
    const link = e.target && e.target.closest ? e.target.closest(NAV) : null;
    if (link && link.href) window.__ittNavTo = { href: link.href, at: Date.now() };
  }, true);
}

export function clickedLink() {
  // The sidebar link a pointer click focused, if it is not the current page: a lesson clicked that
  // is on its way. It also covers a click made before this script was loaded (traced under load:
  // the test clicks as soon as the link shows). A link focused from the keyboard (:focus-visible)
  // is not a click.
  const a = document.activeElement;
  if (!a || !a.matches || !a.matches(NAV) || a.matches(":focus-visible") || a.getAttribute("aria-current") === "page") {
    window.__ittFocusedLink = null;
    return false;
  }
  const seen = window.__ittFocusedLink;
  if (!seen || seen.link !== a) window.__ittFocusedLink = { link: a, at: Date.now() };
  else if (Date.now() - seen.at > NAV_WAIT_MS) return false;  // a click that never became the page
  return true;
}

export function navigating() {
  // Whether a lesson clicked in the sidebar is still on its way: the sidebar does not show it as
  // the current page yet (Streamlit marks that link aria-current="page" when the new page's run starts).
  if (clickedLink()) return true;
  const to = window.__ittNavTo;
  if (!to) return false;
  const current = document.querySelector(NAV + '[aria-current="page"]');
  if ((current && current.href === to.href) || Date.now() - to.at > NAV_WAIT_MS) {
    window.__ittNavTo = null;
    return false;
  }
  return true;
}

export default function ({ data, setTriggerValue }) {
  const get = (k) => { try { return window.localStorage.getItem(k); } catch (e) { return null; } };
  const put = (k, v) => {
    try {
      if (!v) window.localStorage.removeItem(k);
      else if (window.localStorage.getItem(k) !== v) window.localStorage.setItem(k, v);
    } catch (e) { /* full or forbidden */ }
  };
  watchNavigation();
  const ask = askFor(data);
  window.__ittProgressDrawn = ask;  // the latest drawing: the answer to an ask is a newer one
  if (ask === null) {
    window.__ittProgressNext = null;  // an ask still waiting for the app to be idle is not needed
    // The browser has been heard: a mark the browser tests wait for before their first input,
    // so that input does not race the session's one progress rerun.
    document.documentElement.dataset.ittProgress = "ready";
    for (const [name, value] of Object.entries(data.save)) put(name, value);
    const c = data.cookie;  // the class's code for the server's first run of a new tab ("" removes it)
    if (c && document.cookie.split("; ").indexOf(c.name + "=" + c.value) < 0 && (c.value || document.cookie.indexOf(c.name + "=") >= 0)) {
      document.cookie = c.name + "=" + encodeURIComponent(c.value) + "; path=/; SameSite=Strict; max-age=" + (c.value ? c.seconds : 0);
    }
    return;
  }
  if (window.__ittProgressAsked === ask) return;
  const waiting = window.__ittProgressNext;
  window.__ittProgressNext = { ask, send: () => {
    const learner = typeof data.learner === "string" ? data.learner : (get(data.learnerEntry) || "");
    const at = (prefix) => (learner ? prefix + "." + learner : prefix);
    setTriggerValue("stored", { sid: data.sid, ask: data.unheard, learner: learner,
                                code: get(at(data.progressEntry)), text: get(at(data.textEntry)),
                                klass: get(at(data.classEntry)) });
  } };
  if (waiting) return;  // already waiting for the app to be idle: it sends the latest drawing's ask
  const send = () => {
    if (navigating()) { setTimeout(() => whenIdle(send), RECHECK_MS); return; }  // after the new lesson's run starts
    const next = window.__ittProgressNext;
    window.__ittProgressNext = null;
    if (!next || window.__ittProgressAsked === next.ask) return;
    window.__ittProgressAsked = next.ask;
    next.send();
    watch(next, resend.tries);
  };
  whenIdle(send);
}

function watch(asked, tries) {
  // Sends `asked` again if, `resend.ms` later, the app is idle and no drawing of the store has come
  // since (the section's run that would answer it was lost: seen under heavy load, on a lesson
  // opened by its address, cause not found); the server ignores an ask it has answered already.
  if (tries <= 0) return;
  setTimeout(() => {
    if (window.__ittProgressDrawn !== asked.ask || window.__ittProgressAsked !== asked.ask) return;
    whenIdle(() => {
      if (window.__ittProgressDrawn !== asked.ask || navigating()) return;
      asked.send();
      watch(asked, tries - 1);
    });
  }, resend.ms);
}

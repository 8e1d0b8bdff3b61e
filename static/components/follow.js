// The script of a small Streamlit component (components v2), loaded by ui/views/follow.py (a section follower).
export default function ({ data, parentElement, setTriggerValue }) {
  let box = parentElement.querySelector(":scope > div.itt-follow");
  if (!box) {
    box = document.createElement("div");
    box.className = "itt-follow";
    parentElement.appendChild(box);
  }
  box.__ittData = data;
  box.dataset.drawn = data.drawn;
  // The page this section belongs to. The old page stays drawn until the new one's run replaces
  // it, and a follower of the page left behind must not ask then: its section is about to go, and
  // until the new page's run starts the browser names the old page in every rerun it asks for, so
  // the new lesson would be taken for the old page and left empty (docs/architecture.md, "A lesson
  // switched to at once"). Two signs of a switch on its way: the address changed, or a sidebar
  // link a pointer clicked (focused, not from the keyboard) is not the current page yet.
  box.__ittPath = window.location.pathname;
  const switching = () => {
    const a = document.activeElement;
    return window.location.pathname !== box.__ittPath || Boolean(a && a.matches
      && a.matches('[data-testid="stSidebarNav"] a') && !a.matches(":focus-visible")
      && a.getAttribute("aria-current") !== "page");
  };
  if (box.__ittAsked === data.drawn) { box.__ittAsked = undefined; box.__ittTries = 0; }  // brought
  // The whole section counts, not only this empty element at its top (bertviz's page is tall).
  const section = box.closest("." + data.within) || box;
  // Ask only while no script runs and no request is on its way, one follower at a time: a
  // request landing during another section's run cut that run short (Streamlit folds the two),
  // and two followers asking in the same moment (both in sight after one slider move) came out
  // as a single rerun, of one of their sections (seen with bertviz and the formula: bertviz
  // stayed on the old layer). The app's own state says when a run is asked for or going
  // ("rerunRequested", "running", "stopRequested"); the window holds the last request until a
  // run has come and gone after it (or 2 s, should none come). When a run ends, every follower
  // is told again.
  const app = document.querySelector('[data-testid="stApp"]');
  const busyStates = ["running", "rerunRequested", "stopRequested"];
  const idle = () => !(app && busyStates.includes(app.dataset.testScriptState));
  const tell = () => window.dispatchEvent(new Event("itt-follow"));
  if (app && window.__ittFollowApp !== app) {
    window.__ittFollowApp = app;
    new MutationObserver(() => {
      if (!idle()) { window.__ittRunSeen = true; return; }
      if (window.__ittRunSeen) { window.__ittRunSeen = false; window.__ittAskedAt = 0; }
      tell();
    }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  }
  const pending = () => window.__ittAskedAt && Date.now() - window.__ittAskedAt < 2000;
  // The same value is asked for again after a run that did not bring it (at most three times:
  // a section that fails to draw it must not rerun for ever).
  const stale = () => {
    const d = box.__ittData;
    const now = (window.__ittFollow || {})[d.name];
    const tries = box.__ittAsked === now ? box.__ittTries : 0;
    const ok = box.isConnected && box.__ittVisible && !switching()
      && now !== undefined && now !== d.drawn && tries < 3
      && idle() && !pending();
    return ok ? now : undefined;
  };
  // A click that reruns a section also moves the page at once (a tab shows other content), which
  // can bring a follower into sight in the same instant, before the app says it is running: the
  // follower waits a moment and looks again.
  const check = () => {
    if (stale() === undefined || box.__ittWaiting) return;
    box.__ittWaiting = setTimeout(() => {
      box.__ittWaiting = null;
      const now = stale();
      if (now === undefined) return;
      box.__ittTries = box.__ittAsked === now ? box.__ittTries + 1 : 1;
      box.__ittAsked = now;
      window.__ittAskedAt = Date.now();
      window.__ittRunSeen = false;
      setTimeout(tell, 2100);
      setTriggerValue("stale", now);
    }, 250);
  };
  box.__ittCheck = check;
  if (!box.__ittSeen) {
    // Streamlit's main container scrolls, not the document: it is the observer's root (as in
    // ui/views/live_chart.py), so the margin reaches ahead of what the learner sees. The search starts
    // above the section: this element's own zero-height holder scrolls too (overflow auto).
    let root = section.parentElement;
    while (root && root !== document.body && !/(auto|scroll)/.test(getComputedStyle(root).overflowY)) {
      root = root.parentElement;
    }
    box.__ittSeen = new IntersectionObserver((seen) => {
      box.__ittVisible = seen[seen.length - 1].isIntersecting;
      box.__ittCheck();
    }, { root: root && root !== document.body ? root : null, rootMargin: "600px 0px" });
    box.__ittSeen.observe(section);
    const told = () => {
      if (!box.isConnected) { window.removeEventListener("itt-follow", told); box.__ittSeen.disconnect(); return; }
      box.__ittCheck();
    };
    window.addEventListener("itt-follow", told);
  }
  check();
}

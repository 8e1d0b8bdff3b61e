// The script of a small Streamlit component (components v2), loaded by ui/persist.py (the learner's progress in localStorage).
export default function ({ data, setTriggerValue }) {
  const get = (k) => { try { return window.localStorage.getItem(k); } catch (e) { return null; } };
  const put = (k, v) => {
    try {
      if (!v) window.localStorage.removeItem(k);
      else if (window.localStorage.getItem(k) !== v) window.localStorage.setItem(k, v);
    } catch (e) { /* full or forbidden */ }
  };
  if (data.save) {
    // The browser has been heard: a mark the browser tests wait for before their first input,
    // so that input does not race the session's one progress rerun.
    document.documentElement.dataset.ittProgress = "ready";
    for (const [name, value] of Object.entries(data.save)) put(name, value);
    const c = data.cookie;  // the class's code for the server's first run of a new tab ("" removes it)
    if (c && document.cookie.split("; ").indexOf(c.name + "=" + c.value) < 0 && (c.value || document.cookie.indexOf(c.name + "=") >= 0)) {
      document.cookie = c.name + "=" + encodeURIComponent(c.value) + "; path=/; SameSite=Strict; max-age=" + (c.value ? c.seconds : 0);
    }
  } else if (window.__ittProgressAsked !== data.sid) {
    window.__ittProgressAsked = data.sid;
    const learner = typeof data.learner === "string" ? data.learner : (get(data.learnerEntry) || "");
    const at = (prefix) => (learner ? prefix + "." + learner : prefix);
    setTriggerValue("stored", { sid: data.sid, learner: learner,
                                code: get(at(data.progressEntry)), text: get(at(data.textEntry)),
                                klass: get(at(data.classEntry)) });
  }
}

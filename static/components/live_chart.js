// The script of a small Streamlit component (components v2), loaded by ui/views/live_chart.py (a chart redrawn in place).
export default function ({ data, parentElement }) {
  let box = parentElement.querySelector(":scope > div.itt-live-chart");
  if (!box) {
    box = document.createElement("div");
    box.className = "itt-live-chart";
    box.dataset.testid = "ittLiveChart";
    box.setAttribute("role", "figure");
    box.appendChild(document.createElement("div"));
    parentElement.appendChild(box);
  }
  // What the chart shows, for a screen reader (plotly.js names nothing: its SVG is shapes and text).
  if (data.name && box.getAttribute("aria-label") !== data.name) box.setAttribute("aria-label", data.name);
  const plot = box.firstElementChild;
  // The newest figure waits on the box; it is drawn now if the box is on screen (or close to it),
  // else when the learner scrolls to it: a slider that redraws several charts down the page costs
  // the browser only the ones in sight. The box keeps the chart's height meanwhile (no jump).
  box.__ittWanted = data;
  if (!box.__ittDrawn && data.height) box.style.minHeight = data.height + "px";
  const draw = () => {
    const want = box.__ittWanted;
    if (!want || box.__ittDrawn === want.spec) return;
    box.__ittDrawn = want.spec;
    const spec = JSON.parse(want.spec);
    const load = window.__ittPlotly || (window.__ittPlotly = new Promise((ok, fail) => {
      if (window.Plotly) { ok(window.Plotly); return; }
      const s = document.createElement("script");
      s.src = want.src;
      s.onload = () => ok(window.Plotly);
      s.onerror = () => { window.__ittPlotly = null; fail(new Error("plotly.js not served")); };
      document.head.appendChild(s);
    }));
    load.then((Plotly) => {
      const config = Object.assign({ responsive: true }, want.config);
      return Plotly.react(plot, spec.data, spec.layout, config);
    }).then(() => { box.style.minHeight = ""; box.dataset.drawn = "yes"; })
      .catch(() => { plot.textContent = "(chart unavailable: plotly.js was not served)"; });
  };
  if (!box.__ittSeen) {
    // The page scrolls inside Streamlit's main container, not the document: that container is the
    // root, so the margin below reaches past its edge (with the viewport as root it would not).
    let root = box.parentElement;
    while (root && root !== document.body && !/(auto|scroll)/.test(getComputedStyle(root).overflowY)) {
      root = root.parentElement;
    }
    box.__ittSeen = new IntersectionObserver((seen) => {
      box.__ittVisible = seen[seen.length - 1].isIntersecting;
      if (box.__ittVisible) draw();
    }, { root: root && root !== document.body ? root : null, rootMargin: "300px 0px" });
    box.__ittSeen.observe(box);
  } else if (box.__ittVisible) {
    draw();
  }
}

// The entry of every browser view (Streamlit components v2, no iframe): ui/views/browser.py passes this
// file's text as the component's JavaScript. It loads the view's own module from the app's static
// files (static/views/<view>.js, served at /app/static/views/) once, and hands it each new mount.
// A view module exports `mount(root, data, component)`, called again with the same root whenever
// the server sends new data; it keeps its own state on the root between calls.
// The views' stylesheet (views.css) is one <link> in the page's head, added by the first mount:
// passed to the component it came again inside every view's element of every run (7 KB each).
function stylesheet(href, cache) {
  if (!cache[href]) {
    cache[href] = new Promise((done) => {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = href;
      link.onload = done;
      link.onerror = done; // a view drawn without its styles is better than none
      document.head.appendChild(link);
    });
  }
  return cache[href];
}

export default function (component) {
  const { data, parentElement } = component;
  const at = (file) => new URL(`${data.base}${file}?v=${data.version}`, window.location.href).href;
  const url = at(`${data.view}.js`);
  const cache = window.__ittViews || (window.__ittViews = {});
  const load = cache[url] || (cache[url] = import(url));
  Promise.all([load, stylesheet(at("views.css"), cache)]).then(([m]) => m.mount(parentElement, data, component)).catch((err) => {
    cache[url] = null;
    parentElement.textContent = data.labels && data.labels.unavailable ? data.labels.unavailable : String(err);
  });
}

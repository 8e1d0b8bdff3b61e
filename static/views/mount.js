// The entry of every browser view (Streamlit components v2, no iframe): ui/views/browser.py passes this
// file's text as the component's JavaScript. It loads the view's own module from the app's static
// files (static/views/<view>.js, served at /app/static/views/) once, and hands it each new mount.
// A view module exports `mount(root, data, component)`, called again with the same root whenever
// the server sends new data; it keeps its own state on the root between calls.
export default function (component) {
  const { data, parentElement } = component;
  const url = new URL(`${data.base}${data.view}.js?v=${data.version}`, window.location.href).href;
  const cache = window.__ittViews || (window.__ittViews = {});
  const load = cache[url] || (cache[url] = import(url));
  load.then((m) => m.mount(parentElement, data, component)).catch((err) => {
    cache[url] = null;
    parentElement.textContent = data.labels && data.labels.unavailable ? data.labels.unavailable : String(err);
  });
}

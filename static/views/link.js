// The share dialog's link, with the settings a browser view holds (the sampling lesson's
// temperature, top-k, top-p and seed) written into it here: the server built the rest of the
// link from what it knows, the browser adds what only it knows.
import { clearView, el, store } from "./common.js";

/** The server's link with the browser-held values set: {param: value} from the store's object. */
export function withSettings(url, held, names) {
  const u = new URL(url);
  for (const name of names) {
    if (held && held[name] !== undefined && held[name] !== null) u.searchParams.set(name, String(held[name]));
  }
  return u.href;
}

export function mount(root, data) {
  const link = withSettings(data.url, store().get(data.store, null), data.names);
  clearView(root);
  const box = el(root, "div", "itt-view itt-link");
  box.dataset.testid = "ittView";
  box.dataset.view = "link";
  const input = el(box, "input", "itt-number itt-link-text");
  Object.assign(input, { type: "text", readOnly: true, value: link });
  input.setAttribute("aria-label", data.labels.link);
  input.dataset.testid = "app.share.url";
  const copy = el(box, "button", "itt-button");
  copy.type = "button";
  copy.textContent = data.labels.copy;
  const said = el(box, "span", "itt-help");
  said.setAttribute("role", "status");
  copy.addEventListener("click", () => {
    input.select();
    const done = () => { said.textContent = data.labels.copied; };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(link).then(done, () => document.execCommand("copy") && done());
    else if (document.execCommand("copy")) done();
  });
}

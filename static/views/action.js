// A button that carries the browser's current choices to the server: the one moment a view's
// settings are needed there (generating with them, a share link made of them). Until it is
// pressed, moving a control costs the server nothing.
import { store } from "./common.js";

export function mount(root, data, component) {
  let button = root.querySelector(":scope > button.itt-button");
  if (!button) {
    button = document.createElement("button");
    button.type = "button";
    button.className = "itt-button";
    root.appendChild(button);
  }
  button.textContent = data.label;
  button.dataset.testid = data.testid;
  button.classList.toggle("itt-primary", Boolean(data.primary));
  button.onclick = () => {
    const values = {};
    for (const name of data.reads) values[name] = store().get(name, null);
    component.setTriggerValue("click", values);
  };
}

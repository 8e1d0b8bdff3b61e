// A button that carries the browser's current choices to the server: the one moment a view's
// settings are needed there (generating with them, a share link made of them, opening bertviz on
// the layer shown). Until it is pressed, moving a control costs the server nothing. With
// `data.pressed` (true or false) it is a toggle button (aria-pressed); `data.help` describes it.
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
  if (typeof data.pressed === "boolean") button.setAttribute("aria-pressed", String(data.pressed));
  else button.removeAttribute("aria-pressed");
  let help = root.querySelector(":scope > p.itt-help");
  if (data.help) {
    if (!help) {
      help = document.createElement("p");
      help.className = "itt-help";
      help.id = `${data.testid.replace(/[^\w-]/g, "-")}-help`;
      root.appendChild(help);
    }
    help.textContent = data.help;
    button.setAttribute("aria-describedby", help.id);
  } else {
    if (help) help.remove();
    button.removeAttribute("aria-describedby");
  }
  button.onclick = () => {
    const values = {};
    for (const name of data.reads) values[name] = store().get(name, null);
    component.setTriggerValue("click", values);
  };
}

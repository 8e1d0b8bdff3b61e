// The script of a small Streamlit component (components v2), loaded by ui/views/follow.py (the page's current choice, published).
export default function ({ data }) {
  const seen = window.__ittFollow || (window.__ittFollow = {});
  let changed = false;
  for (const [name, value] of Object.entries(data.values)) {
    if (seen[name] !== value) { seen[name] = value; changed = true; }
  }
  if (changed) window.dispatchEvent(new Event("itt-follow"));
}

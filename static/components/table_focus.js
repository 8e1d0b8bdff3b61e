// The script of a small Streamlit component (components v2), loaded by ui/views/chart_table.py (a table's focus, opened from a chart).
export default function ({ data, parentElement }) {
  const box = parentElement.closest('[data-testid="stExpanderDetails"], [data-testid="stExpander"]');
  if (!box) return;
  const fix = () => {
    for (const table of box.querySelectorAll('[data-testid="stTable"]')) {
      // The table's own boxes and those between it and the expander: whichever scrolls.
      const boxes = [...table.querySelectorAll("*")];
      for (let e = table; e && e !== box; e = e.parentElement) boxes.push(e);
      for (const e of boxes) {
        const s = getComputedStyle(e);
        if (/(auto|scroll)/.test(s.overflowX + " " + s.overflowY) && !e.hasAttribute("tabindex")) {
          e.tabIndex = 0;
          e.setAttribute("role", "region");
          e.setAttribute("aria-label", data.label);
        }
      }
    }
  };
  // The table may be drawn, and laid out wide, well after this runs on a busy machine: look again
  // whenever the expander's content changes, and every 200 ms for 20 s.
  fix();
  if (!box.__ittTableWatch) {
    box.__ittTableWatch = new MutationObserver(fix);
    box.__ittTableWatch.observe(box, { childList: true, subtree: true });
  }
  let tries = 0;
  const timer = setInterval(() => { fix(); if (++tries >= 100) clearInterval(timer); }, 200);
}

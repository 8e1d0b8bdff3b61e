// The script of a small Streamlit component (components v2), loaded by ui/shell/styles.py (small fixes to the page).
export default function ({ data }) {
  const fix = () => {
    for (const box of document.querySelectorAll(`[class*="st-key-${data.decimal}-"] input[type="text"]`)) {
      if (box.getAttribute("inputmode") !== "decimal") box.setAttribute("inputmode", "decimal");
    }
    for (const holder of document.querySelectorAll(`[class*="st-key-${data.table}-"]`)) {
      const table = holder.querySelector('[data-testid="stTable"]');
      if (!table) continue;
      const scroller = [table, ...table.querySelectorAll("div")].find(e => /(auto|scroll)/.test(getComputedStyle(e).overflowX));
      if (!scroller) continue;
      const wide = scroller.scrollWidth > scroller.clientWidth + 1 ? "yes" : "no";
      if (holder.dataset.ittWide !== wide) holder.dataset.ittWide = wide;
      if (wide === "yes" && !scroller.hasAttribute("tabindex")) {  // a keyboard can scroll it too
        scroller.tabIndex = 0;
        scroller.setAttribute("role", "region");
        scroller.setAttribute("aria-label", data.label);
      }
    }
  };
  window.__ittFixes = fix;  // the newest run's labels
  fix();
  if (!window.__ittFixesWatch) {  // the page draws more later (sections, reruns, a turned phone)
    let queued = false;
    const later = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; window.__ittFixes(); }); } };
    window.__ittFixesWatch = new MutationObserver(later);
    window.__ittFixesWatch.observe(document.body, { childList: true, subtree: true });
    addEventListener("resize", later);
  }
}

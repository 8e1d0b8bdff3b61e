"""axe-core in the real browser: the WCAG 2.1 A/AA rules on a page of the app, after scrolling to its end.

axe-core (the engine behind Lighthouse's accessibility audit) is vendored from the npm registry at
set-up by scripts/vendor_js.sh into static/vendor/axe.min.js and injected into the page by
Playwright; the app never loads it.

- `pages()`: the URL path of every page of the navigation.
- `scroll_to_end(page)`: scroll Streamlit's main container one screen at a time to its end,
  letting each section that follows a choice rerun and each chart drawn on approach draw.
- `violations(page)`: run axe on the page; a list of {rule, impact, nodes: [selector...]}.
- `visit(page, i)`: open the i-th page of the navigation from the sidebar's link, in the same session
  (the link is clicked by script, so it works while a phone's sidebar is folded away).
- `sideways(page)`: how far the document and Streamlit's main container scroll sideways (px).
- `survey(page, base_url, langs, model=None)`: every page of the navigation in each language, in one
  session per language (the sidebar's links, as a learner goes), scrolled to its end, with `model`
  (a share link's `model=`) or the default one: {"it/attention": [...]}.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from drivers.browser import APP_TIMEOUT_MS, REPO, goto, runs_of, settle

AXE = REPO / "static" / "vendor" / "axe.min.js"
WCAG21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Streamlit's scrolling container: the element the page's content scrolls in (not the document).
_SCROLLER = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  let el = main;
  while (el && el !== document.body) {
    const s = getComputedStyle(el);
    if (/(auto|scroll)/.test(s.overflowY) && el.scrollHeight > el.clientHeight) return el;
    el = el.parentElement;
  }
  return document.scrollingElement;
}"""


def pages() -> list[str]:
    """Every page of the navigation, as the path after the host ("" is the first lesson)."""
    from ui.shell import nav

    return ["" if i == 0 else x.id for i, x in enumerate(nav.LESSONS)] + [nav.COMPARE.id, nav.FINAL.id, nav.GLOSSARY.id]


def scroll_to_end(page, timeout: int = APP_TIMEOUT_MS) -> None:
    """Scroll the main container to its end one screen at a time, settling after each step (a
    section computed when reached, ui/views/follow.py, asks for its run once in sight: that run is waited
    for), then wait until every chart drawn on approach (and not hidden) has drawn."""
    page.evaluate(f"() => {{ ({_SCROLLER})().scrollTop = 0; }}")
    for _ in range(200):  # a bound, not a wait: the longest page is some 60 screens
        at_end = page.evaluate(f"""() => {{
          const el = ({_SCROLLER})();
          const end = el.scrollTop + el.clientHeight >= el.scrollHeight - 2;
          if (!end) el.scrollTop += Math.max(200, el.clientHeight - 100);
          return end;
        }}""")
        settle(page, timeout, sections=True)  # a section computed when reached has had its run
        # At the end only if it still is once the page has settled: a section computed on approach
        # or a chart drawn then can make the page longer.
        if at_end and page.evaluate(f"""() => {{
              const el = ({_SCROLLER})();
              return el.scrollTop + el.clientHeight >= el.scrollHeight - 2;
            }}"""):
            break
    # A chart still waiting (one a section's rerun put back after the learner scrolled past it) is
    # scrolled to, as a learner going back up would. Charts in a closed expander or another tab have
    # no box and wait for the learner to open them.
    waiting = """() => [...document.querySelectorAll('[data-testid="ittLiveChart"]')]
      .filter(e => e.dataset.drawn !== 'yes' && e.checkVisibility())"""
    for _ in range(50):
        chart = page.evaluate_handle(f"() => ({waiting})()[0] || null")
        if not page.evaluate("c => c !== null", chart):
            break
        page.evaluate("c => c.scrollIntoView({block: 'center'})", chart)
        page.wait_for_function("c => !c.isConnected || c.dataset.drawn === 'yes'", arg=chart, timeout=timeout)
        settle(page, timeout)
    page.wait_for_function(f"() => ({waiting})().length === 0", timeout=timeout)


def inject(page) -> None:
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))


def violations(page) -> list[dict]:
    """axe's WCAG 2.1 A/AA violations on the page as it is now: rule id, impact, each node's selector.
    `page` may be a Playwright Frame too (an iframe's document, such as bertviz's views)."""
    inject(page)
    result = page.evaluate("""async (tags) => {
      const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
      return r.violations.map(v => ({rule: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary, html: n.html.slice(0, 200)}))}));
    }""", WCAG21_AA)
    return result


def visit(page, i: int, timeout: int = APP_TIMEOUT_MS) -> None:
    path = pages()[i]
    runs = runs_of(page)
    settle(page, timeout)
    before = runs.mark()
    page.locator('[data-testid="stSidebarNavItems"] a').nth(i).evaluate("a => a.click()")
    page.wait_for_function("p => location.pathname.endsWith('/' + p)", arg=path, timeout=timeout)
    runs.wait(lambda: runs.sent > before, timeout, "the browser asking for the page")
    settle(page, timeout)


def sideways(page) -> dict[str, int]:
    """Pixels the page scrolls sideways: the document, and Streamlit's main container."""
    return page.evaluate("""() => {
      const d = document.documentElement, m = document.querySelector('[data-testid="stMain"]');
      return {document: d.scrollWidth - d.clientWidth, main: m ? m.scrollWidth - m.clientWidth : 0};
    }""")


def survey(page, base_url: str, langs=("it", "en"), timeout: int = APP_TIMEOUT_MS,
           model: str | None = None) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for lang in langs:
        query = {"lang": lang} | ({"model": model} if model else {})
        goto(page, f"{base_url}/?{urlencode(query)}", timeout=timeout)
        for i, path in enumerate(pages()):
            if i:
                visit(page, i, timeout)
            scroll_to_end(page, timeout)
            found[f"{lang}/{path or nav_first()}"] = violations(page)
    return found


def nav_first() -> str:
    from ui.shell import nav

    return nav.LESSONS[0].id


def vendored() -> bool:
    return Path(AXE).is_file() and AXE.stat().st_size > 0

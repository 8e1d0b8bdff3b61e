"""The text boxes of every plotly chart on a page, measured in the real browser.

- `clashes(page)`: for each chart drawn on the page (st.plotly_chart's and the live charts'), the
  pairs of its text boxes that overlap (legend items, titles, axis titles, tick labels, subplot
  titles, annotations, bar labels) and the text boxes that reach outside the chart's box. A list of
  readable lines, empty when every chart is clean.

A text box is the bounding box of an `svg text` element that is shown (not empty, not hidden, not
transparent). Two boxes overlap when they share more than `SLACK` px both ways: glyph boxes include
the font's line spacing, so touching boxes are not a clash. Hover labels and the mode bar are left
out (they appear on demand, over the chart, by design). Text inside the plotting area that plotly
draws per data point (heatmap cells) is checked against the chart's box only: a dense heatmap's
cell labels are not the layout's business.
"""

from __future__ import annotations

SLACK = 2  # px

_MEASURE = """(slack) => {
  const charts = [...document.querySelectorAll('.js-plotly-plot')].filter(c => c.checkVisibility());
  const out = [];
  charts.forEach((chart, n) => {
    const box = chart.getBoundingClientRect();
    if (box.width < 2 || box.height < 2) return;
    const name = (chart.closest('[data-testid="ittLiveChart"], [data-testid="stPlotlyChart"]') || chart)
      .closest('[class*="st-key-"]')?.className.match(/st-key-([^ ]+)/)?.[1] || `chart ${n}`;
    const texts = [];
    for (const el of chart.querySelectorAll('svg text')) {
      if (el.closest('.hoverlayer, .modebar, .infolayer .rangeslider-container')) continue;
      const s = (el.textContent || '').trim();
      if (!s) continue;
      const cs = getComputedStyle(el);
      if (cs.display === 'none' || cs.visibility === 'hidden' || parseFloat(cs.opacity) === 0) continue;
      if (parseFloat(el.getAttribute('opacity') || '1') === 0) continue;
      if (el.closest('[style*="opacity: 0"]')) continue;
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      const cell = !!el.closest('.hm, .textpoint, .heatmaplayer');
      texts.push({s, cell, l: r.left, r: r.right, t: r.top, b: r.bottom});
    }
    for (const a of texts) {
      if (a.l < box.left - slack || a.r > box.right + slack || a.t < box.top - slack || a.b > box.bottom + slack) {
        out.push(`${name}: «${a.s}» outside the chart (${Math.round(a.l - box.left)}..${Math.round(a.r - box.left)} of ${Math.round(box.width)} px wide, ${Math.round(a.t - box.top)}..${Math.round(a.b - box.top)} of ${Math.round(box.height)} high)`);
      }
    }
    const shown = texts.filter(a => !a.cell);
    for (let i = 0; i < shown.length; i++) {
      for (let j = i + 1; j < shown.length; j++) {
        const a = shown[i], b = shown[j];
        const w = Math.min(a.r, b.r) - Math.max(a.l, b.l), h = Math.min(a.b, b.b) - Math.max(a.t, b.t);
        if (w > slack && h > slack) out.push(`${name}: «${a.s}» overlaps «${b.s}» (${Math.round(w)} x ${Math.round(h)} px)`);
      }
    }
  });
  return out;
}"""


def clashes(page) -> list[str]:
    """Every clash on the page as it is drawn now (see the module's docstring)."""
    return page.evaluate(_MEASURE, SLACK)


def chart_count(page) -> int:
    return page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].filter(c => c.checkVisibility()).length")

"""The text boxes of every plotly chart on a page, measured in the real browser.

- `clashes(page)`: for each chart drawn on the page (st.plotly_chart's and the live charts'), the
  pairs of its text boxes that overlap (legend items, titles, axis titles, tick labels, subplot
  titles, annotations, bar labels) and the text boxes that reach outside the chart's box. A list of
  readable lines, empty when every chart is clean.

A text box is the box of an `svg text` element that is shown (not empty, not hidden, not
transparent), turned as the text is drawn, as tall as its letters (plotly's line box, some 1.25 em,
trimmed to 0.8 em a line). Two boxes (turned as the text is drawn) overlap when they overlap by more than `SLACK` px: glyph boxes include
the font's line spacing, so touching boxes are not a clash. Hover labels and the mode bar are left
out (they appear on demand, over the chart, by design). Text inside the plotting area that plotly
draws per data point (heatmap cells) is checked against the chart's box only: a dense heatmap's
cell labels are not the layout's business.
"""

from __future__ import annotations

SLACK = 3  # px

_MEASURE = """(slack) => {
  // How far two convex quads overlap: the smallest overlap of their shadows on the four edge
  // normals (separating axes); 0 or less when they are apart.
  const depth = (p, q) => {
    let least = Infinity;
    for (const poly of [p, q]) {
      for (let k = 0; k < 2; k++) {
        const ex = poly[k + 1].x - poly[k].x, ey = poly[k + 1].y - poly[k].y, n = Math.hypot(ex, ey) || 1;
        const ax = -ey / n, ay = ex / n;
        const pa = p.map(v => v.x * ax + v.y * ay), qa = q.map(v => v.x * ax + v.y * ay);
        least = Math.min(least, Math.min(Math.max(...pa), Math.max(...qa)) - Math.max(Math.min(...pa), Math.min(...qa)));
      }
    }
    return least;
  };
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
      // The text's own box turned as it is drawn (a tick label at 90 degrees is a tall thin box).
      // Its height is the font's ink (0.8 em), not the line box (about 1.25 em) plotly measures.
      const bb = el.getBBox(), m = el.getScreenCTM(), em = parseFloat(cs.fontSize) || 12;
      const lines = Math.max(1, el.querySelectorAll('tspan.line').length);
      const trim = Math.max(0, (bb.height - lines * em * 1.25) / 2) + lines * em * 0.225;
      const y0 = bb.y + Math.min(trim, bb.height / 4), y1 = bb.y + bb.height - Math.min(trim, bb.height / 4);
      const quad = [[bb.x, y0], [bb.x + bb.width, y0], [bb.x + bb.width, y1], [bb.x, y1]]
        .map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
      const cell = !!el.closest('.hm, .textpoint, .heatmaplayer');
      texts.push({s, cell, quad, l: r.left, r: r.right, t: r.top, b: r.bottom});
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
        const d = depth(a.quad, b.quad);
        if (d > slack) out.push(`${name}: «${a.s}» overlaps «${b.s}» (by ${Math.round(d)} px)`);
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

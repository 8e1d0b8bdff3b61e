"""The KV-cache lesson in the real browser: the calculator, the variants at its context, and the
training, serving and experts' sections that price its choice are answered in the browser
(static/views/kvcache.js). Moving the context, typing a number, picking a model or a format sends
the server nothing; the numbers and the charts follow at once, the sections far below when reached. A reload
keeps the settings, the share link carries them, and every view fits a phone's width after the
window narrows.

The expected figures come from lib.model.arithmetic on the live model's own config.json, written the way
the page writes sizes (decimal units, three significant digits at most).
"""

from __future__ import annotations

import json
import re

import pytest

from lib.course import i18n
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.arithmetic import kv_cache_bytes
from lib.model.models import converted_dir
from drivers.browser import APP_TIMEOUT_MS, goto, runs_of, settle, share_link

pytestmark = pytest.mark.e2e

CALC = '[data-testid="ittView"][data-view="kvcache"]'
VARIANTS = '[data-testid="ittView"][data-view="kvcache.variants"]'
TRAIN = '[data-testid="ittView"][data-view="kvcache.train"]'
SERVE = '[data-testid="ittView"][data-view="kvcache.serve"]'
# Every element of the lesson's views that reaches past the window's width (or starts left of it).
TOO_WIDE = """() => { const W = document.documentElement.clientWidth; const out = [];
  for (const v of document.querySelectorAll('[data-testid="ittView"][data-view^="kvcache"]'))
    for (const e of [v, ...v.querySelectorAll('*')]) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && (r.right > W + 0.5 || r.left < -0.5))
        out.push(`${v.dataset.view} ${e.tagName}.${String(e.getAttribute('class') || '')} ${Math.round(r.left)}-${Math.round(r.right)}`);
    }
  return out; }"""


def _size_en(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            x = b / scale
            return f"{round(x, 2 if x < 10 else 1 if x < 100 else 0):g} {unit}"
    return f"{round(b)} B"


def _open(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    goto(page, f"{app_url}/kvcache?lang=en")
    expect(page.locator("h1").first).to_have_text(en["lesson.kvcache.title"], timeout=APP_TIMEOUT_MS)
    for view in (CALC, VARIANTS, SERVE):
        expect(page.locator(view)).to_have_attribute("data-drawn", re.compile("."), timeout=APP_TIMEOUT_MS)
    settle(page)
    return en


def test_the_calculator_answers_in_the_browser_and_the_sections_below_follow(page, app_url):
    from playwright.sync_api import expect

    config = json.loads((converted_dir() / "config.json").read_text())
    page.set_viewport_size({"width": 1400, "height": 1000})
    en = _open(page, app_url)
    calc, variants, serve, train = (page.locator(v) for v in (CALC, VARIANTS, SERVE, TRAIN))
    per_user = calc.locator('[data-testid="kvcache.per_user"]')
    expect(per_user).to_have_text(_size_en(kv_cache_bytes(config, 8192)))
    sent = runs_of(page).sent

    # The context with the keyboard: 8K -> 16K -> 1M; the box, the numbers, the chart and the sections follow.
    context = calc.get_by_role("slider", name=en["kvcache.context_pick"])
    context.focus()
    context.press("ArrowRight")
    expect(context).to_have_attribute("aria-valuetext", "16K")
    expect(calc.get_by_role("spinbutton", name=en["kvcache.context"])).to_have_value("16384")
    expect(per_user).to_have_text(_size_en(kv_cache_bytes(config, 16_384)))
    context.press("End")
    expect(per_user).to_have_text(_size_en(kv_cache_bytes(config, 1_048_576)))
    expect(calc).to_have_attribute("data-drawn", re.compile(r'"tokens":1048576'))
    assert "1,048,576" in calc.evaluate("el => el.querySelector('.js-plotly-plot')._fullLayout.title.text")
    # The sections below follow when the learner reaches them (those far off the screen wait till then).
    flops = en["kvcache.serve.flops"]
    serve.scroll_into_view_if_needed()
    expect(serve.locator('[data-testid="kvcache.serve.flops"]')).to_contain_text(
        flops[:flops.index("{tokens}")] + "1,048,576")
    variants.scroll_into_view_if_needed()
    expect(variants).to_have_attribute("data-drawn", re.compile(r'"tokens":1048576'))
    calc.scroll_into_view_if_needed()

    # A typed absurd context is clamped with a notice, never a traceback.
    box = calc.get_by_role("spinbutton", name=en["kvcache.context"])
    box.fill("-7")
    expect(calc.locator(".itt-note").first).to_contain_text(en["kvcache.clamped"].split("{given}")[1].split("{used}")[0].strip())
    expect(per_user).to_have_text(_size_en(kv_cache_bytes(config, 1)))
    box.fill("8192")

    # Another model and format: the 8B in fp8; training names it, serving prices it.
    calc.get_by_label(en["kvcache.preset"], exact=True).select_option("Llama-3 8B")
    calc.locator('[data-testid="kvcache.cache_dtype"]').get_by_label("fp8", exact=True).check()
    expect(per_user).to_have_text(_size_en(kv_cache_bytes(REFERENCE_MODELS["Llama-3 8B"], 8192, dtype_bytes=1)))
    train.scroll_into_view_if_needed()
    expect(train).to_have_attribute("data-state", re.compile(r'"model":"Llama-3 8B"'))
    expect(train.locator(".itt-prose")).to_contain_text("Llama-3 8B")
    calc.scroll_into_view_if_needed()
    # The learner's own numbers: more KV heads than query heads is said, and the query heads used.
    calc.get_by_label(en["kvcache.preset"], exact=True).select_option("custom")
    kv = calc.get_by_role("spinbutton", name=en["kvcache.field.num_key_value_heads"])
    kv.fill("64")
    expect(calc.locator(".itt-note").first).to_contain_text(
        i18n.fill(en["kvcache.custom.kv_over"], kv="64", heads="32"))
    assert runs_of(page).sent == sent, "a view-only move sent something to the server"

    # The chart's table alternative: one user and all users.
    calc.locator("details.itt-table > summary").click()
    expect(calc.locator("details.itt-table tbody tr")).to_have_count(2)
    # The share dialog's link carries what only the browser knows.
    calc.get_by_label(en["kvcache.preset"], exact=True).select_option("live")
    link = share_link(page, en["share.button"], r"tokens=8192(&|$)")
    assert "cache=fp8" in link and "context=1048576" in link

    # A reload finds the settings where the learner left them.
    page.reload()
    expect(page.locator(CALC)).to_have_attribute("data-drawn", re.compile(r'"preset":"live","tokens":8192,.*"cache":"fp8"'),
                                                 timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_the_views_follow_the_windows_width(page, app_url):
    """Drawn at 1400 px, then the window narrows to a phone's 390: no chart, table or control of the
    lesson's views reaches past it (the charts are redrawn at the new width, the tables wrap)."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    _open(page, app_url)
    for details in page.locator(f"{CALC} details, {VARIANTS} details, {SERVE} details").all():
        details.evaluate("el => { el.open = true; }")
    assert page.evaluate(TOO_WIDE) == []
    wide = page.locator(f"{VARIANTS} .js-plotly-plot").evaluate("el => el.getBoundingClientRect().width")
    assert wide > 800
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.wait_for_function(f"() => ({TOO_WIDE})().length === 0", timeout=10_000)
    except Exception:
        pass
    assert page.evaluate(TOO_WIDE) == []
    assert page.locator(f"{VARIANTS} .js-plotly-plot").evaluate("el => el.getBoundingClientRect().width") <= 390

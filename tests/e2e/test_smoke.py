"""The real app opens in a real browser, with no internet, and shows no exception."""

from __future__ import annotations

import textwrap

import pytest

from lib.course import i18n
from lib.lessons import bertviz_view
from drivers.browser import APP_TIMEOUT_MS, goto, link_static, serve
from tests.ci import skip_or_fail

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("lang", ["en", "it"])
def test_app_opens_without_errors(page, app_url, lang):
    from playwright.sync_api import expect

    goto(page, f"{app_url}/?lang={lang}")
    # The first run in a session may load the model: allow it the app timeout.
    expect(page).to_have_title(i18n.ui(lang)["app.title"], timeout=APP_TIMEOUT_MS)
    heading = page.locator("h1").first
    expect(heading).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert heading.inner_text().strip()
    assert page.locator('[data-testid="stException"]').count() == 0


BERTVIZ_APP = '''
import numpy as np
import streamlit as st

from lib.lessons.bertviz_view import head_view_html

TOKENS = ["Il", " gatto", " </script>", " 🙂", " dorme"]
rng = np.random.default_rng(0)
attn = rng.random((3, 4, len(TOKENS), len(TOKENS))).astype(np.float32)
attn /= attn.sum(-1, keepdims=True)
view = head_view_html(attn, TOKENS, layers=[0, 2])
st.title("bertviz offline")
st.write("vendored" if view.offline else "cdn")
st.iframe(view.html, height=420)
'''


def test_bertviz_renders_from_vendored_js(page, tmp_path):
    """The offline path end to end: require.js, d3 and jQuery come from /app/static."""
    if not bertviz_view.vendored():
        reason = "static/vendor is empty: run scripts/vendor_js.sh (needs npm)"
        skip_or_fail(reason)
    app = tmp_path / "bertviz_app.py"
    app.write_text(textwrap.dedent(BERTVIZ_APP))
    link_static(tmp_path)  # static files are served from next to the script
    loaded: list[str] = []
    page.on("requestfinished", lambda r: loaded.append(r.url))
    with serve(app) as url:
        goto(page, url, "vendored")
        frame = page.frame_locator('iframe[title="st.iframe"]')
        # bertviz draws every token twice (left and right column) as SVG text.
        frame.locator("svg text", has_text="gatto").first.wait_for(timeout=30_000)
        texts = frame.locator("svg text").all_text_contents()  # SVG has no innerText
        assert texts.count(" </script>") == 2 and texts.count(" 🙂") == 2
        assert frame.locator("#layer option").all_inner_texts() == ["0", "2"]
        assert page.locator('[data-testid="stException"]').count() == 0
    vendor = [u.split("/app/static/vendor/")[1] for u in loaded if "/app/static/vendor/" in u]
    assert sorted(vendor) == ["d3.min.js", "jquery.min.js", "require.js"]
    assert all(u.startswith(url) for u in loaded if "/app/static/vendor/" in u)

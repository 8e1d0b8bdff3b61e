"""The tokenization lesson in the real browser: play the merge animation and watch the token
chips change by themselves, pause it, then jump the replay of the model's merges to its end.
"""

from __future__ import annotations

import pytest

from lib import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto

pytestmark = pytest.mark.e2e


def test_play_animates_the_merges_and_the_replay_reaches_the_tokenizer(page, app_url):
    from playwright.sync_api import expect
    from tokenizers import Tokenizer

    from lib.models import converted_dir

    en = i18n.ui("en")
    # From the home page, as a learner: a fresh server's first request must run app.py (a deep
    # link as the very first request runs the page file alone, in Streamlit's pages-folder mode).
    goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"])
    click(page, page.locator('[data-testid="stSidebarNav"] a', has_text=en["lesson.tokenization.title"]).first)
    expect(page.get_by_text(en["tokenization.build.header"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    build = page.locator(".tok-chips").first
    expect(build).to_have_attribute("data-step", "0", timeout=APP_TIMEOUT_MS)
    start_html = build.inner_html()
    start_chips = build.locator(".tok-chip").count()
    assert build.locator(".tok-chip[data-new='1']").count() == 0

    # One click on Play: the steps then advance on their own (the fragment's timer), no more clicks.
    play = page.locator(".st-key-tokenization-build-play button").first
    click(page, play)
    expect(play).to_have_text(en["tokenization.player.pause"], timeout=APP_TIMEOUT_MS)
    # The steps advance by themselves: wait for step 3 or later (the timer keeps going meanwhile).
    page.wait_for_function("() => Number(document.querySelector('.tok-chips')?.dataset.step) >= 3",
                           timeout=APP_TIMEOUT_MS)
    # One snapshot of the chips (the animation keeps moving between separate reads).
    step, html, outlined, chips = page.locator(".tok-chips").first.evaluate(
        "e => [Number(e.dataset.step), e.innerHTML, e.querySelectorAll(\".tok-chip[data-new='1']\").length,"
        " e.querySelectorAll('.tok-chip').length]")
    assert step >= 3 and html != start_html
    assert outlined >= 1  # the latest merge is outlined
    assert chips < start_chips  # merges make fewer, longer tokens
    click(page, play)
    expect(play).to_have_text(en["tokenization.player.play"], timeout=APP_TIMEOUT_MS)

    # The replay of the real model's merges: jump to the last step, and the chips are exactly the
    # tokens the tokenizer gives for the sidebar text.
    # The session's text is the default example; wait until the sidebar shows it (reading the box
    # mid-redraw once gave an empty string on a loaded machine).
    learner = en["text.example"]
    expect(page.locator('[data-testid="stSidebar"] textarea').first).to_have_value(learner, timeout=APP_TIMEOUT_MS)
    expected = Tokenizer.from_file(str(converted_dir() / "tokenizer.json")).encode(learner, add_special_tokens=False).ids
    replay = page.locator(".tok-chips").nth(1)
    expect(replay.locator(".tok-chip")).to_have_count(len(learner.encode()), timeout=APP_TIMEOUT_MS)
    click(page, page.locator(".st-key-tokenization-real-last button").first)
    expect(page.locator(".tok-chips").nth(1).locator(".tok-chip")).to_have_count(len(expected), timeout=APP_TIMEOUT_MS)
    titles = page.locator(".tok-chips").nth(1).locator(".tok-chip").evaluate_all("els => els.map(e => e.title)")
    assert [int(t.split()[1]) for t in titles] == expected
    assert page.locator('[data-testid="stException"]').count() == 0

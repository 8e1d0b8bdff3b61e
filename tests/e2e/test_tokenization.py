"""The tokenization lesson in the real browser, with no internet.

The merge animations (static/views/tokenization.js) answer in the browser: the step slider with
the arrow keys, the step buttons, Play (the steps advance by themselves), the target size, the
readable/raw and ids switches and the paragraph slider send the server nothing (no frame on the
websocket). The replay's last step is exactly the tokenizer's tokens; the pairs chart has its table;
a reload finds the steps and settings where the learner left them; a share link carries them.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, runs_of, settle, share_link, views_fit

pytestmark = pytest.mark.e2e

BUILD = '[data-testid="ittView"][data-view="tokenization.build"]'
REAL = '[data-testid="ittView"][data-view="tokenization.real"]'
PAIR = '[data-testid="ittView"][data-view="tokenization.pair"]'



def test_the_animations_answer_in_the_browser_and_the_replay_reaches_the_tokenizer(page, app_url):
    from playwright.sync_api import expect
    from tokenizers import Tokenizer

    from lib.model.models import converted_dir

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    # From the home page, as a learner: a fresh server's first request must run app.py (a deep
    # link as the very first request runs the page file alone, in Streamlit's pages-folder mode).
    goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"])
    click(page, page.locator('[data-testid="stSidebarNav"] a', has_text=en["lesson.tokenization.title"]).first)
    build = page.locator(BUILD)
    expect(build).to_have_attribute("data-drawn", "0", timeout=APP_TIMEOUT_MS)
    settle(page)
    sent = runs_of(page).sent
    chips = build.locator(".tok-chips")
    start_chips = chips.locator(".tok-chip").count()
    assert chips.locator(".tok-chip[data-new='1']").count() == 0

    # The step slider with the keyboard: one merge, its chips outlined, its card and charts.
    step = build.get_by_role("slider", name=en["tokenization.player.step"])
    step.focus()
    step.press("ArrowRight")
    expect(build).to_have_attribute("data-drawn", "1")
    assert chips.locator(".tok-chip[data-new='1']").count() >= 1
    expect(build.locator('[data-testid="tokenization.build.card"]')).to_contain_text("1")
    # Play: the steps advance by themselves, then Pause stops them.
    play = build.get_by_role("button", name=en["tokenization.player.play"])
    play.click()
    page.wait_for_function(f"() => Number(document.querySelector('{BUILD}').dataset.step) >= 3", timeout=APP_TIMEOUT_MS)
    build.get_by_role("button", name=en["tokenization.player.pause"]).click()
    assert chips.locator(".tok-chip").count() < start_chips  # merges make fewer, longer tokens
    # The target size: 300 leaves 44 merges; the step slider follows.
    target = build.get_by_role("spinbutton", name=en["tokenization.build.target"])
    target.fill("300")
    expect(step).to_have_attribute("max", "44")
    build.get_by_role("button", name=en["tokenization.player.last"]).click()
    expect(build).to_have_attribute("data-drawn", "44")
    # The pairs chart is named and has its table: the first pair is the next merge.
    expect(build.get_by_role("figure", name=en["tokenization.build.pairs_title"])).to_have_count(1)
    build.locator("details.itt-table > summary").first.click()
    expect(build.locator("details.itt-table").first.locator("tbody tr").first).to_be_visible()

    # The replay of the real model's merges: the last step is exactly the tokenizer's tokens.
    learner = en["text.example"]
    expected = Tokenizer.from_file(str(converted_dir() / "tokenizer.json")).encode(learner, add_special_tokens=False).ids
    real = page.locator(REAL)
    real.scroll_into_view_if_needed()
    replay = real.locator(".tok-chips")
    expect(replay.locator(".tok-chip")).to_have_count(len(learner.encode()))
    real.get_by_role("button", name=en["tokenization.player.last"]).click()
    expect(replay.locator(".tok-chip")).to_have_count(len(expected))
    titles = replay.locator(".tok-chip").evaluate_all("els => els.map(e => e.title)")
    assert [int(t.split()[1]) for t in titles] == expected
    # Raw vocabulary strings and no ids: the leading space is Ġ, the ids go.
    real.get_by_role("radio", name=en["tokenization.real.view.raw"]).check()
    expect(replay).to_contain_text("Ġ")
    real.get_by_role("checkbox", name=en["tokenization.real.show_ids"]).uncheck()
    expect(replay.locator(".tok-id")).to_have_count(0)
    # The paragraph slider: another pair of paragraphs.
    pair = page.locator(PAIR)
    para = pair.get_by_role("slider", name=en["tokenization.lang.pick"])
    para.focus()
    para.press("ArrowRight")
    expect(pair).to_have_attribute("data-step", "2")
    assert runs_of(page).sent == sent, "a view-only move sent something to the server"

    # The share dialog's link carries what only the browser knows.
    link = share_link(page, en["share.button"], r"target=300(&|$)")
    assert "view=raw" in link and "ids=false" in link

    # A reload finds the steps and the settings where the learner left them.
    page.reload()
    expect(page.locator(BUILD)).to_have_attribute("data-drawn", "44", timeout=APP_TIMEOUT_MS)
    expect(page.locator(REAL)).to_have_attribute("data-state", '{"view":"raw","ids":false}', timeout=APP_TIMEOUT_MS)
    expect(page.locator(REAL).locator(".tok-chip")).to_have_count(len(expected))
    # A phone's width: the views follow the window (charts redrawn narrower, tables scrolling in their box).
    page.set_viewport_size({"width": 390, "height": 900})
    views_fit(page)
    assert page.locator('[data-testid="stException"]').count() == 0

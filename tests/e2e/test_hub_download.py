"""A hub model downloaded in the real browser: the loading bar shows the file, its bytes of the
total, the speed and the time left while the weights arrive from a local stand-in of the hub
(drivers/hub_standin.py, throttled), then the lessons run on the new model. Takes the picture of
the bar for docs/models.md (written there with UPDATE_SCREENSHOT=1, see save_screenshot).
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, REPO, SERVER_WARM_TIMEOUT_MS, goto, save_screenshot, serve, type_text
from drivers.hub_standin import OWNER, HubStandIn, Repo

pytestmark = pytest.mark.e2e

PICTURE = "hub-download-progress.png"  # in docs/ (see save_screenshot)


def test_download_progress_shows_in_the_page(page, hub_server, tmp_path, monkeypatch):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    name = f"{OWNER}/tiny-llama-classroom"
    # About nine seconds of weights at 250 kB/s: time for several reports and a picture.
    slow = HubStandIn([Repo(name, hub_server.repos[f"{OWNER}/slow-llama"].folder, throttle=250_000)])
    monkeypatch.setenv("HF_ENDPOINT", slow.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:
        with serve(REPO / "app.py") as url:
            goto(page, f"{url}/?lang=en", en["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)
            sidebar = page.locator('[data-testid="stSidebar"]')
            sidebar.locator("summary", has_text=en["sidebar.advanced"]).first.click()  # the model picker and the hub box
            box = sidebar.get_by_label(en["sidebar.model_id"], exact=True)
            type_text(page, box, name)
            sidebar.get_by_role("button", name=en["sidebar.load"], exact=True).click()  # the run lasts the download
            bar = page.locator('[data-testid="stProgress"]', has_text="model.safetensors").first
            expect(bar).to_contain_text(en["load.download"].split("{eta}")[1].strip(), timeout=APP_TIMEOUT_MS)
            text = bar.inner_text()
            assert "MB/s" in text or "kB/s" in text, text
            assert "(file 4 of 4)" in text, text
            save_screenshot(page, PICTURE, tmp_path)
            # Then the download ends and the lesson runs on the new model.
            expect(sidebar.get_by_text(i18n.fill(en["sidebar.model"], name=name)).first).to_be_visible(
                timeout=APP_TIMEOUT_MS)
            expect(page.locator('[data-testid="stProgress"]', has_text="model.safetensors")).to_have_count(0)
            assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        slow.stop()
    assert slow.requested(name)  # the weights came from the stand-in

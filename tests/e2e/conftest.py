"""Browser tests: the real app in Debian's Chromium, driven by Playwright, with no internet.

The helpers every e2e test sends its inputs through (`goto`, `click`, `slide`, `settle`, `track`,
`serve`...) are in drivers/browser.py, shared with the browser benchmarks of scripts/.

Fixtures
- `app_url` (session): starts `streamlit run app.py` from the repo root on a free
  port (so the repo's .streamlit/config.toml applies), waits for /_stcore/health,
  yields "http://127.0.0.1:<port>", stops the server at the end. E2E_APP=path
  serves another script instead (to try the harness on a small app).
  It warms the server: it opens the app once and waits for the first lesson before any test
  runs, so no test pays for the model load.
- `browser` (session): Chromium from /usr/bin/chromium, headless. Missing: skip,
  or fail when CI=true (browser tests must run on CI).
- `page`: a fresh context and page. Every request to a host other than
  127.0.0.1/localhost is aborted and recorded; a test that attempted any fails,
  listing them (the classroom has no internet: a CDN left anywhere shows here).
- `italian_walk`: what one walk through every page in Italian, each scrolled to its end at
  three sizes, found (tests/e2e/walk.py); run once per session for the tests that only read it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.browser import (CHROMIUM, CHROMIUM_ARGS, REPO, SERVER_WARM_TIMEOUT_MS, goto, offline_page, serve,
                             track)
from tests.ci import skip_or_fail


@pytest.fixture(scope="session")
def app_url(browser) -> Iterator[str]:
    """The app's server for the whole session, warmed before any test uses it.

    Warm: a first browser opens the app and waits for the first lesson, so the model load and
    the default text's capture are paid here, not inside the first test's timeouts.
    """
    app = Path(os.environ.get("E2E_APP", REPO / "app.py"))
    if not app.exists():
        pytest.fail(f"{app} is missing", pytrace=False)
    with serve(app) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
        try:
            pg = context.new_page()
            track(pg)
            warm_text = None
            if "E2E_APP" not in os.environ:
                from lib.course import i18n

                warm_text = i18n.ui("en")["lesson.numbers.title"]
            goto(pg, f"{url}/?lang=en", warm_text, timeout=SERVER_WARM_TIMEOUT_MS)
        finally:
            context.close()
        yield url


# --- browser ---------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        reason = (f"{CHROMIUM} not found: run `make test` (installs Debian's chromium as root) "
                  "or `apt-get install chromium fonts-noto-color-emoji`")
        skip_or_fail(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, request):
    """A page whose requests outside this machine are aborted and fail the test."""
    with offline_page(browser, request, viewport={"width": 1280, "height": 900}) as pg:
        yield pg


@pytest.fixture(scope="session")
def _italian_walk(browser, app_url):
    from tests.e2e import walk

    return walk.italian(browser, app_url)


@pytest.fixture
def italian_walk(_italian_walk, request):
    """What one walk through every page in Italian found (tests/e2e/walk.py), for the tests that
    only read those pages: the first test asking pays for the walk, the others read it. Any request
    the walk's page tried outside this machine fails each test reading it."""
    request.node.external_requests = _italian_walk.external
    return _italian_walk


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    # Checked right after the test body, so the test itself is reported FAILED
    # (a fixture teardown could only report an ERROR).
    result = yield
    external = getattr(item, "external_requests", None)
    if external:
        listing = "\n  ".join(dict.fromkeys(external))
        pytest.fail(f"the page tried to reach outside this machine ({len(external)} "
                    f"request(s), all blocked):\n  {listing}", pytrace=False)
    return result

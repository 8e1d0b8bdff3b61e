"""AppTest helpers shared by every page test: start the app in a language, on a page, with a text.

Usage: `at = start("it", "pages/01_numbers.py", text="Ciao")`, then assert on `at`.
The fixture `navigation_v2` (in tests/conftest.py, autouse) keeps AppTest running app.py.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

TIMEOUT = 240


def start(lang: str, page: str | None = None, text: str | None = None) -> AppTest:
    """Run app.py in `lang`, optionally set the learner's text, optionally switch to `page`."""
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()
    if text is not None:
        at.text_area(key="app.text").set_value(text)
        at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    assert not at.exception, at.exception
    return at


def page_text(at: AppTest) -> str:
    """All the prose, headings and messages of the current page, as one string."""
    parts = [m.value for m in at.markdown] + [h.value for h in at.title] + [h.value for h in at.header]
    parts += [h.value for h in at.subheader]
    parts += [x.value for x in at.info] + [x.value for x in at.warning] + [x.value for x in at.error]
    parts += [x.value for x in at.success] + [x.value for x in at.caption]
    return "\n".join(str(p) for p in parts)

"""Instructions a phone can follow: a sentence that asks for the mouse (hover, a click, the
pointer) also says what to do with a finger, in both languages. Figures' own hover labels
(`*.hover*` ids: plotly's tooltip templates) are what a tap shows, not instructions.

And what those sentences promise is there: the token chips with numbers take focus on a tap
(ui.shell.styles then shows their numbers), and a quiz answer that is a number asks for the number keyboard.
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n

MOUSE = {"it": re.compile(r"\b(mouse|puntatore|clicca|cliccare|passa(?:ci)? sopra)\b", re.I),
         "en": re.compile(r"\b(mouse|pointer|hover|click)\b", re.I)}
TOUCH = {"it": re.compile(r"\b(tocca|toccare|telefono|tablet)\b", re.I),
         "en": re.compile(r"\b(tap|phone|tablet)\b", re.I)}


def _sentences(lang: str) -> dict[str, str]:
    texts = {f"ui#{k}": v for k, v in i18n.ui(lang).items() if ".hover" not in k and "_hover" not in k}
    for lid in i18n.lesson_ids(lang):
        texts |= {f"lessons/{lid}#{sid}": v for sid, v in i18n.lesson(lang, lid).items()}
    out = {}
    for where, text in texts.items():
        for i, sentence in enumerate(re.split(r"(?<=[.!?])\s+", text)):
            out[f"{where}.{i}"] = sentence
    return out


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_mouse_instruction_also_says_what_to_do_on_a_phone(lang):
    asks = {w: s for w, s in _sentences(lang).items() if MOUSE[lang].search(s)}
    assert asks  # the lessons do ask for a hover or a click somewhere
    missing = [f"{w}: {s}" for w, s in asks.items() if not TOUCH[lang].search(s)]
    assert not missing, "\n".join(missing)


def test_token_chips_with_numbers_take_focus_on_a_tap():
    from ui.lessons.sampling.sections import _chip
    from ui.shell import styles
    from ui.views import browser

    numbers = _chip("gatto", "p = 12%", "#FFFFFF")
    assert "tabindex='-1'" in numbers and "class='itt-tip'" in numbers and "title='p = 12%'" in numbers
    assert "tabindex" not in _chip("gatto", "", "#EEEEEE")  # no numbers, nothing to tap for
    # The tokenization views' chips (static/views/tokenization.js): a title, focusable by a tap.
    chips = (browser.FOLDER / "tokenization.js").read_text(encoding="utf-8")
    assert 'span.className = c.dropped ? "tok-chip tok-dropped" : "tok-chip"' in chips
    assert "span.tabIndex = -1" in chips and "span.title = " in chips
    # the focused chip shows its title (the numbers) under itself
    assert ".itt-tip:focus::after" in styles.CSS and "content: attr(title)" in styles.CSS

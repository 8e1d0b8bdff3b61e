"""A session keeps no capture between runs: pages hold `ui.shell.core.CaptureRef`, a key.

Streamlit keeps each session's fragments between reruns, and with them the page globals they close
over. If those globals held the Capture, every connected learner would pin their own capture
outside the byte budget of ui.shell.cache (measured before this: +200 MB of server RSS per learner with
a 512-token text). After a page run, and once the budgeted cache has let the capture go, no
Capture of this text may remain reachable.
"""

from __future__ import annotations

import gc

import pytest

from lib.model.capture import Capture
from tests.apptest import start

TEXT = "A grey heron waits by the canal; only this test writes about the heron."
PAGES = ["pages/01_numbers.py", "pages/02_tokenization.py", "pages/03_embeddings.py",
         "pages/04_position.py", "pages/05_attention.py", "pages/06_block.py",
         "pages/07_sampling.py", "pages/08_kvcache.py"]


def _pinned() -> list[Capture]:
    gc.collect()
    return [o for o in gc.get_objects() if type(o) is Capture and o.text == TEXT]


@pytest.mark.parametrize("page", PAGES)
def test_a_session_pins_no_capture(page):
    from ui.shell import cache

    at = start("en", page, text=TEXT)
    assert not at.exception, at.exception
    cache.CACHE.discard(lambda key: TEXT in key)
    assert _pinned() == [], f"{page}: the session still holds its capture"
    # and the page still reads it: the capture comes back from the cache on the next run
    at.run()
    assert not at.exception, at.exception


def test_the_ref_reads_through_and_is_read_only():
    from ui.shell.cache import CACHE
    from ui.shell.core import CaptureRef
    from lib.model.models import DEFAULT_MODEL

    ref = CaptureRef(DEFAULT_MODEL, TEXT, 16)
    cap = ref.resolve()
    assert ref.tokens == cap.tokens and ref.n_tokens == cap.n_tokens == 16
    assert (ref.key(3, 1) == cap.key(3, 1)).all()  # a Capture method named like a key
    with pytest.raises(AttributeError):
        ref.text = "another"
    CACHE.discard(lambda key: TEXT in key)

"""Nothing lost under load: many learners on one server at the same moment, on the real server.

Each learner here is a `drivers.stclient.Learner` (Streamlit's own websocket protocol, no drawing),
so a handful of them cost the machine little beyond the server's own work. Every test starts its
learners together (asyncio.gather) so their runs overlap on the shared model, then checks each
learner's own page: no exception box, their own tokens and no one else's, their own answers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from lib.course import i18n
from lib.model.capture import DEFAULT_MAX_TOKENS
from drivers.stclient import Learner, heatmap_tokens

pytestmark = pytest.mark.e2e

LESSON = "attention"
WORDS = ["cat", "dog", "fox", "owl", "bee", "cow", "pig", "rat"]


def _run(scenario) -> None:
    """Run an async scenario on its own thread (Playwright's sync API owns this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, scenario()).result()


def _sees_only_own(me: Learner, word: str, words: list[str]) -> None:
    labels = heatmap_tokens(me)
    assert labels, "no attention heatmap on the learner's page"
    assert f" {word}" in labels, f"{word!r} not among the learner's tokens: {sorted(labels)[:40]}"
    strangers = [w for w in words if w != word and f" {w}" in labels]
    assert not strangers, f"the learner with {word!r} sees other learners' tokens {strangers}"


def _verdicts(me: Learner, lang: str = "en") -> list[str]:
    """The quiz verdicts on the page ('Right!...' or 'Not quite: the answer is...')."""
    labels = i18n.ui(lang)
    starts = (labels["quiz.right"], labels["quiz.wrong"].split("{")[0])
    return [p.body for _k, (kind, p) in sorted(me.elements.items())
            if kind == "alert" and p.body.startswith(starts)]


async def _open(url: str, n: int) -> list[Learner]:
    learners = [Learner(url, LESSON, "lang=en") for _ in range(n)]
    for me in learners:
        await me.__aenter__()
    await asyncio.gather(*(me.open() for me in learners))
    return learners


async def _close(learners: list[Learner]) -> None:
    for me in learners:
        await me.close()


def test_long_texts_sent_at_once(app_url):
    """Four learners paste 50,000 characters each at the same moment: each gets their own capture,
    cut at the capture's token limit with a notice, and no one sees an exception box."""
    words = WORDS[:4]
    texts = [(f"The {w} sat by the window and watched the rain. " * 1100)[:50_000] for w in words]
    assert all(len(t) == 50_000 for t in texts)

    async def scenario():
        learners = await _open(app_url, len(words))
        try:
            await asyncio.gather(*(me.set_text(t) for me, t in zip(learners, texts)))
            for me, word in zip(learners, words):
                assert me.exceptions == []
                _sees_only_own(me, word, words)
                # the cut is said on the page, with the limit
                assert any(f"{DEFAULT_MAX_TOKENS}" in t for t in me.texts()), me.texts()[:5]
                assert me.widget("app.text").kind == "text_area"
        finally:
            await _close(learners)

    _run(scenario)


def test_hub_request_while_others_capture(app_url):
    """One learner asks for a hub model (no network here: refused with a message) while three
    others send new texts: the three get their captures, the fourth a clear message and the
    built-in model still in place; nobody gets an exception box."""
    words = WORDS[4:7]

    async def scenario():
        learners = await _open(app_url, len(words) + 1)
        asker, others = learners[0], learners[1:]
        try:
            async def ask_hub():
                await asker.set_value("app.model_request", "openai-community/gpt2")
                await asker.click("app.load")

            await asyncio.gather(ask_hub(), *(me.set_text(f"Look, a {w} in the snow by the door.")
                                              for me, w in zip(others, words)))
            for me, word in zip(others, words):
                assert me.exceptions == []
                _sees_only_own(me, word, words)
            assert asker.exceptions == []
            errors = [p.body for _k, (kind, p) in asker.elements.items() if kind == "alert" and p.format == 1]
            assert errors, "the learner who asked for a hub model got no message"
            # the page still works for them on the built-in model
            await asker.trigger("attention.view", "layer", {"layer": 2, "head": 0})  # a layer not sent yet
            assert asker.exceptions == [] and heatmap_tokens(asker)
        finally:
            await _close(learners)

    _run(scenario)


def test_tab_closed_mid_run(app_url):
    """A learner sends a new text and closes the tab before the run ends; the others carry on,
    and a learner who opens the lesson afterwards finds a working page."""
    words = WORDS[:3]

    async def scenario():
        learners = await _open(app_url, len(words) + 1)
        leaver, stayers = learners[0], learners[1:]
        try:
            async def leave():  # the tab is gone while its run goes on
                await leaver.set_and_leave("app.text", "A text whose run is abandoned halfway: " + "words " * 300)

            await asyncio.gather(leave(), *(me.set_text(f"Quiet {w} sleeping under the old bridge.")
                                            for me, w in zip(stayers, words[1:] + ["pig"])))
            for me, word in zip(stayers, words[1:] + ["pig"]):
                assert me.exceptions == []
                _sees_only_own(me, word, words + ["pig"])
            async with Learner(app_url, LESSON, "lang=en") as late:
                await late.open()
                await late.trigger("attention.view", "layer", {"layer": 1, "head": 0})
                assert late.exceptions == []
        finally:
            await _close(stayers)

    _run(scenario)


def test_quiz_forms_answered_at_once(app_url):
    """Eight learners answer the same question at the same moment on the real server (an AppTest
    run in threads once raised a duplicate FormSubmitter key): each gets one verdict, their own."""

    async def scenario():
        learners = await _open(app_url, 8)
        try:
            key = next(k for k in learners[0].keys(f"quiz.{LESSON}.")
                       if k.endswith(".answer") and learners[0].widget(k).kind == "radio")
            form = key[: -len(".answer")] + ".form"
            n_options = len(learners[0].widget(key).proto.options)
            choices = [i % n_options for i in range(len(learners))]
            for me, choice in zip(learners, choices):
                await me.set_value(key, choice)
            await asyncio.gather(*(me.submit(form) for me in learners))
            verdicts = [_verdicts(me) for me in learners]
            for me, v in zip(learners, verdicts):
                assert me.exceptions == []
                assert len(v) == 1, v
            # the same choice gets the same verdict; right and wrong choices get different ones
            by_choice: dict[int, set[str]] = {}
            for choice, v in zip(choices, verdicts):
                by_choice.setdefault(choice, set()).add(v[0])
            assert all(len(s) == 1 for s in by_choice.values()), by_choice
            # and it is theirs: green exactly for the learners who chose the bank's answer
            from lib.course.quiz import load_bank

            q = next(q for q in load_bank("en", LESSON) if key == f"quiz.{LESSON}.{q.id}.answer")
            right = i18n.ui("en")["quiz.right"]
            for choice, v in zip(choices, verdicts):
                assert v[0].startswith(right) == (choice == q.answer), (choice, q.answer, v)
        finally:
            await _close(learners)

    _run(scenario)


def test_a_download_fetched_late_is_still_there_while_other_learners_work(app_url):
    """A file built when clicked must outlive other learners' runs until its learner's browser has
    fetched it. Streamlit alone keeps it for two runs of any session (each run's end prunes files no
    session refers to); here two other learners move on four times between the click and the fetch,
    as a busy class does, and the file comes all the same (ui/shell/downloads.py)."""
    async def scenario():
        me, *others = await _open(app_url, 3)
        try:
            await me.set_text("The cat sat by the window.")
            url = await me.download_url("app.export.csv")
            for value in ("The owl sat on the roof.", "The fox ran away.", "The bee hummed.", "The cow slept."):
                await asyncio.gather(*(other.set_text(value) for other in others))
            body = await me.fetch(url)
            assert body.decode("utf-8").splitlines()[0].count(",") >= 2  # a CSV header
            assert "cat" in body.decode("utf-8")
            # The learner's own next run lets it go, as any file of their page.
            await me.set_text("The dog sat by the door.")
            for value in ("The pig rolled.", "The rat hid."):
                await asyncio.gather(*(other.set_text(value) for other in others))
            with pytest.raises(Exception, match="404"):
                await me.fetch(url)
        finally:
            await _close([me, *others])

    _run(scenario)

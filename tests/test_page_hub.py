"""AppTest: hub models as a learner meets them, through the sidebar's box, against the local
stand-in of the hub (drivers/hub_standin.py). Each family (and each Gemma 3 layer pattern) loads from
the sidebar, and every page runs in both languages with no exception; a refusal or a broken
download leaves the previous model in place with its message; the download's progress reaches the
page's bar with bytes, speed and time left, in both languages.
"""

import re

import pytest

from lib.course import i18n
from tests.apptest import start
from drivers.hub_standin import FAMILIES, OWNER, HubStandIn, Repo

PAGES = ["pages/01_numbers.py", "pages/02_tokenization.py", "pages/03_embeddings.py", "pages/04_position.py",
         "pages/05_attention.py", "pages/06_block.py", "pages/07_sampling.py", "pages/08_kvcache.py",
         "pages/10_compare.py", "pages/99_final_quiz.py"]


def _is_label(text: str, label: str, name: str) -> bool:
    """Whether `text` is `label` filled, with `name` in it and every other placeholder filled somehow."""
    pattern = re.escape(label).replace(re.escape("{name}"), re.escape(name))
    pattern = re.sub(r"\\\{[a-z_]+\\\}", ".+", pattern)
    return re.fullmatch(pattern, text, re.S) is not None


def _load(at, name: str):
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("family", FAMILIES)
def test_every_page_runs_on_a_hub_model_of_each_family(hub, family):
    name = f"{OWNER}/{family}"
    at = _load(start("it"), name)
    assert len(at.error) == 0, [e.value for e in at.error]
    assert at.session_state["app.model"] == name
    for page in PAGES:
        at.switch_page(page)
        for lang in i18n.LANGS:
            at.session_state["app.lang"] = lang
            at.run()
            assert not at.exception, (page, lang, at.exception)
            assert at.title, (page, lang)
            assert at.session_state["app.model"] == name, (page, lang, [e.value for e in at.error])


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("repo,code", [("too-big", "too_large"), ("bin-only", "no_safetensors"),
                                       ("remote-code", "remote_code"), ("no-such-model", "not_found")])
def test_a_refused_hub_model_keeps_the_current_one(hub, lang, repo, code):
    at = _load(start(lang), f"{OWNER}/{repo}")
    labels = i18n.ui(lang)
    assert len(at.error) == 1
    assert _is_label(at.error[0].value, labels[f"model.error.{code}"], f"{OWNER}/{repo}")
    assert at.session_state["app.model"].startswith("embedded:")
    assert hub.requested(f"{OWNER}/{repo}") == []  # no weight byte was asked for
    if code == "too_large":  # counts as the language writes them, not raw integers
        assert {"en": "8.03 B", "it": "8,03 mld"}[lang] in at.error[0].value and "1500000000" not in at.error[0].value


def test_the_hub_going_away_mid_download_keeps_the_previous_model(hub, monkeypatch):
    """A hub model in use, then another whose download breaks: a message, and the first one stays."""
    from lib.model import hub as hub_lib

    at = _load(start("en"), f"{OWNER}/tiny-llama")
    assert at.session_state["app.model"] == f"{OWNER}/tiny-llama"
    dying = HubStandIn([Repo(f"{OWNER}/dying", hub.repos[f"{OWNER}/tiny-qwen2"].folder, die_after=20_000)])
    monkeypatch.setenv("HF_ENDPOINT", dying.url)
    hub_lib.forget_unreachable()
    try:
        _load(at, f"{OWNER}/dying")
    finally:
        dying.stop()
    assert [e.value for e in at.error] == [i18n.fill(i18n.ui("en")["model.error.interrupted"], name=f"{OWNER}/dying")]
    assert at.session_state["app.model"] == f"{OWNER}/tiny-llama"
    assert at.title  # the lesson still runs, on the previous model


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_download_progress_is_drawn_in_the_page(hub, lang, monkeypatch):
    """The texts the page's bar shows while the throttled weights download (read from the function
    that writes them: the bar itself is emptied when the model is ready)."""
    from ui.shell import core

    shown = []
    real = core.download_text
    monkeypatch.setattr(core, "download_text", lambda status: shown.append(real(status)) or shown[-1])
    name = f"{OWNER}/slow-llama-{lang}"  # the server keeps a loaded model: one repository per test
    at = _load(start(lang), name)
    assert at.session_state["app.model"] == name
    weights = [s for s in shown if "model.safetensors" in s]
    assert len(weights) >= 4
    labels = i18n.ui(lang)
    # The file, bytes of a total, a speed and a time left, in the language's own words and numbers.
    before_file = labels["load.download"].split("{file}")[0]
    assert all(s.startswith(before_file) for s in weights)
    assert all("MB" in s and "/s" in s for s in weights)
    left = labels["load.download"].split("{eta}")[1 if lang == "en" else 0].split("·")[-1].strip()
    assert sum(left in s for s in weights) >= 3, (left, weights)
    total = i18n.ui(lang)["load.download"].split("{total}")[0].split("{done}")[1]  # " of " / " su "
    sizes = {s.split("): ", 1)[1].split(total)[1].split(" ·")[0] for s in weights}
    mb = f"{len(hub.repos[name].files['model.safetensors']) / 1e6:.1f}"
    assert sizes == {(mb if lang == "en" else mb.replace(".", ",")) + " MB"}  # the file's size, the language's decimal mark
    assert not [p for p in at.get("progress") if p.proto.text.startswith(before_file)]  # gone once the model is ready

"""Failures the ui survives are logged, one WARNING line each with its cause (lib/serving/log.py); the
failures it expects (a model that did not load and says so) are not."""

import logging

import pytest

from lib.model.models import ModelLoadError
from ui.shell import core, downloads


def _messages(caplog, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING]


def test_a_download_kept_for_its_learner_that_fails_still_sends_the_file(monkeypatch, caplog):
    import streamlit.runtime.scriptrunner as scriptrunner

    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda: type("Ctx", (), {"session_id": "s1"})())

    def broken(*_):
        raise AttributeError("'MemoryMediaFileStorage' has no attribute '_lock' (test)")

    monkeypatch.setattr(downloads, "_keep", broken)
    run = downloads.built_when_clicked(lambda: "a,b\n", "text/csv", "capture.csv")
    with caplog.at_level("WARNING", logger="ui.shell.downloads"):
        assert run() == b"a,b\n"
    assert _messages(caplog, "ui.shell.downloads") == [
        "keeping the download for its learner failed: AttributeError: 'MemoryMediaFileStorage' has no "
        "attribute '_lock' (test)"]


@pytest.mark.parametrize("error, logged", [
    (ModelLoadError("offline", "no network"), []),
    (AttributeError("'Config' has no attribute 'head_dim' (test)"),
     ["reading the model's features failed: AttributeError: 'Config' has no attribute 'head_dim' (test)"]),
])
def test_features_fall_back_and_only_the_unforeseen_is_logged(monkeypatch, caplog, error, logged):
    def model():
        raise error

    monkeypatch.setattr(core, "model", model)
    with caplog.at_level("WARNING", logger="ui.shell.core"):
        assert core.features() is None and core.features() is None
    assert _messages(caplog, "ui.shell.core") == logged


def test_a_model_failing_in_an_unforeseen_way_is_logged_and_the_current_one_stays(monkeypatch, caplog):
    from tests.apptest import start

    loader = core._load_with_progress

    def load(name):
        if name == "standin/breaks":
            raise RuntimeError("weights of an unforeseen shape (test)")
        return loader(name)

    monkeypatch.setattr(core, "_load_with_progress", load)
    at = start("en")
    before = at.session_state["app.model"]
    with caplog.at_level("WARNING", logger="ui.shell.core"):
        at.text_input(key="app.model_request").set_value("standin/breaks")
        at.button(key="app.load").click()
        at.run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["“standin/breaks” could not be loaded. The current model stays loaded."]
    assert at.session_state["app.model"] == before
    assert _messages(caplog, "ui.shell.core") == [
        "loading the model standin/breaks failed: RuntimeError: weights of an unforeseen shape (test)"]

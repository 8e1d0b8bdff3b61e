"""lib/serving/log.py: one handler on the app's packages, one line per failure with its cause."""

import io
import logging

from lib.serving import log


def test_configure_gives_lib_and_ui_one_handler_however_often_it_runs(monkeypatch):
    for name in log.PACKAGES:
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])
    stream = io.StringIO()
    log.configure(stream=stream)
    log.configure(stream=stream)  # app.py runs once per rerun
    assert [len(logging.getLogger(name).handlers) for name in log.PACKAGES] == [1, 1]
    logging.getLogger("ui.shell.core").warning("the lens failed: %s", "OSError: no")
    logging.getLogger("lib.classroom.classroom").info("a class started")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(" WARNING ui.shell.core: the lens failed: OSError: no")
    assert lines[1].endswith(" INFO lib.classroom.classroom: a class started")


def test_a_cause_is_one_line_with_its_type():
    assert log.cause(ValueError("bad\nurl  here")) == "ValueError: bad url here"
    assert log.cause(KeyError()) == "KeyError"


def test_a_failure_is_one_warning_line_and_once_means_once_per_cause(caplog):
    logger = logging.getLogger("ui.test_log")
    with caplog.at_level("WARNING", logger="ui.test_log"):
        log.failure(logger, "keeping the download", OSError("disk full"))
        for _ in range(3):
            log.failure(logger, "reading the features", AttributeError("no head_dim"), once=True)
        log.failure(logger, "reading the features", AttributeError("no rope"), once=True)
    assert [r.getMessage() for r in caplog.records] == [
        "keeping the download failed: OSError: disk full",
        "reading the features failed: AttributeError: no head_dim",
        "reading the features failed: AttributeError: no rope",
    ]
    assert {r.levelname for r in caplog.records} == {"WARNING"}

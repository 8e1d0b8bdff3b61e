"""Share links and kept progress in the app (AppTest): every shared key is a widget of its kind,
a link opens the same view, a forged link gives a notice and never a traceback, a bad progress
file is refused with a notice."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from lib.course import i18n
from lib.learner import share_link as sl
from tests.apptest import TIMEOUT, chart, label_prefix, page_text, start, chart_configs, view_data
from ui.learner.share import IN_BROWSER, SHARED
from ui.shell import nav

PATHS = {x.id: x.path for x in nav.LESSONS}


def open_link(lesson: str, query: dict[str, str]) -> AppTest:
    """A fresh session opening `query` on `lesson` (the first run lands on the default page)."""
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["lang"] = query.get("lang", "en")
    at.run()
    at.switch_page(PATHS[lesson])
    at.query_params.update(query)
    at.run()
    return at


HELD_BY = {("attention", "block"): "attention.flash_view", ("attention", "dh"): "attention.scaling_view"}  # a value held by another view than the lesson's first


def test_every_shared_key_is_a_widget_value_of_its_kind():
    at = start("en")
    for lesson in nav.LESSONS:
        at.switch_page(lesson.path)
        at.run()
        assert not at.exception, (lesson.id, at.exception)
        held = IN_BROWSER.get(lesson.id, (None, ()))[1]
        for name, p in SHARED[lesson.id].items():
            if name in held:  # a browser view holds it; the server sends the view its value
                data = view_data(at, HELD_BY.get((lesson.id, name), f"{lesson.id}.view"))
                values = data.get("settings") or data.get("chosen") if data else None
                assert values is not None and name in values, (lesson.id, name)
                assert sl.parse_value(sl.format_value(values[name], p.kind), p.kind) == values[name]
                continue
            assert p.key in at.session_state, (lesson.id, name)
            value = at.session_state[p.key]
            shown = sl.format_value(value, p.kind)
            assert shown is not None, (lesson.id, name, value)
            assert sl.parse_value(shown, p.kind) == value
            assert not p.choices or value in p.choices


def test_a_link_opens_the_same_attention_view():
    at = start("en", PATHS["attention"], text="The quick brown fox jumps over the lazy dog.")
    at.session_state["attention.layer"], at.session_state["attention.head"] = 3, 7  # as the view's trigger sets them
    at.run()
    assert not at.exception
    query, too_long = sl.build("en", None, at.session_state["app.text"],
                               {k: at.session_state[k] for k in ("attention.layer", "attention.head")},
                               SHARED["attention"])
    assert not too_long
    other = open_link("attention", query)
    assert not other.exception, other.exception
    assert other.session_state["app.text"] == "The quick brown fox jumps over the lazy dog."
    assert (other.session_state["attention.layer"], other.session_state["attention.head"]) == (3, 7)
    mine, theirs = view_data(at, "attention.view"), view_data(other, "attention.view")
    assert (theirs["chosen"]["layer"], theirs["chosen"]["head"]) == (3, 7) and theirs["chosen"]["token"]
    assert theirs["weights"] == mine["weights"] and theirs["heads"] == mine["heads"]
    assert set(other.query_params) == {"lang"}  # the link's parameters leave the address bar


def test_an_attention_link_hands_its_tile_size_and_d_head_to_the_views():
    """Flash attention's tile size and the scaling demo's d_head are the browser's (static/views/attention_steps.js): a link's
    reaches the view once, with a fresh token; one that does not fit this text is left out."""
    query = {"lang": "en", "layer": "3", "head": "2", "block": "4", "dh": "16",
             "text": "The quick brown fox jumps over the lazy dog."}
    at = open_link("attention", query)
    assert not at.exception, at.exception
    flash = view_data(at, "attention.flash_view")
    assert flash["asked_block"] == 4 and flash["chosen"]["block"] == 4 and flash["chosen"]["token"]
    scaling = view_data(at, "attention.scaling_view")  # the scaling demo's d_head, the same way
    assert scaling["asked_dh"] == 16 and scaling["chosen"] == {"dh": 16, "token": flash["chosen"]["token"]}
    assert flash["layer"] == 3 and flash["chosen"]["head"] == 2
    at = open_link("attention", dict(query, block="3"))  # not one of the tile sizes offered
    flash = view_data(at, "attention.flash_view")
    assert flash["asked_block"] is None and flash["chosen"]["block"] == flash["default"]


@pytest.mark.parametrize("lang", ["it", "en"])
def test_a_forged_link_gives_a_notice_not_a_traceback(lang):
    query = {"lang": lang, "layer": "9999", "head": "-4", "dh": "7", "block": "abc", "zoom": "3",
             "text": "%%not-a-text", "model": "../../etc/passwd"}
    at = open_link("attention", query)
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert label_prefix(i18n.ui(lang)["share.ignored"]) in warnings
    for name in ("block", "zoom", "text", "model"):
        assert f"`{name}`" in warnings
    # Well-formed but impossible values reach the widgets, which bring them back in range.
    assert 0 <= at.session_state["attention.layer"] < 30 and 0 <= at.session_state["attention.head"] < 9
    assert at.session_state["app.text"] == i18n.ui(lang)["text.example"]


def test_a_sampling_link_hands_its_settings_to_the_browser_view():
    query = {"lang": "en", "temperature": "0.7", "top_k": "5", "top_p": "0.5", "seed": "42"}
    at = open_link("sampling", query)
    assert not at.exception, at.exception
    settings = view_data(at, "sampling.view")["settings"]
    assert {k: settings[k] for k in ("temperature", "top_k", "top_p", "seed")} == {
        "temperature": 0.7, "top_k": 5, "top_p": 0.5, "seed": 42}
    assert settings["from_link"]  # the view takes them over what it kept in the browser, once
    at.run()
    assert view_data(at, "sampling.view")["settings"]["from_link"] == settings["from_link"]


def test_forged_values_on_every_lesson_never_raise():
    for lesson, spec in SHARED.items():
        query = {"lang": "en"}
        for name, p in spec.items():
            query[name] = {"int": "999999", "float": "1e9", "bool": "0", "str": "zz", "strs": "zz"}[p.kind]
        at = open_link(lesson, query)
        assert not at.exception, (lesson, at.exception)


def _upload_script(data: bytes):
    """A session where a progress file `data` was just chosen (AppTest cannot upload a file)."""
    def script(data: bytes):
        import streamlit as st

        from ui.learner import persist

        class Upload:
            name = "progress.json"

            def getvalue(self):
                return data

        st.session_state["app.progress_upload"] = Upload()
        persist._on_upload()  # what Streamlit calls when a file is chosen
        persist.notices()
        st.write(persist.current())

    at = AppTest.from_function(script, kwargs={"data": data}, default_timeout=TIMEOUT)
    at.query_params["lang"] = "en"
    return at.run()


@pytest.mark.parametrize("data", [b"", b"not json", b'{"kind": "inside-transformer-progress", "v": 99}',
                                  b"\xff\xfe\x00garbage"])
def test_a_bad_progress_file_is_refused_with_a_notice(data):
    at = _upload_script(data)
    assert not at.exception, at.exception
    assert label_prefix(i18n.ui("en")["progress.bad_file"]) in " ".join(e.value for e in at.error)
    assert "quiz.results" not in at.session_state


def test_a_progress_file_loads_back_with_its_verdicts():
    from lib.course.quiz import load_bank
    from lib.learner import progress_code as pc

    q = next(x for x in load_bank("en", "numbers") if x.id == "live_d_head")
    p = pc.empty()
    p["results"] = {"numbers": {"live_d_head": True}}
    p["responses"] = {"numbers:live_d_head": str(int(q.answer))}
    at = _upload_script(pc.to_file(p))
    assert not at.exception, at.exception
    assert at.session_state["quiz.results"] == {"numbers": {"live_d_head": True}}
    assert at.session_state["quiz.numbers.live_d_head.grade"].correct
    assert at.session_state["quiz.numbers.live_d_head.answer"] == "64"
    assert label_prefix(i18n.ui("en")["progress.loaded"]) in " ".join(e.value for e in at.success)


def test_every_figure_saves_in_the_chosen_format():
    at = start("en")
    charts = chart_configs(at)  # st.plotly_chart and ui.views.live_chart alike
    assert len(charts) >= 2
    for config in charts.values():
        options = config["toImageButtonOptions"]
        assert options["format"] == "png" and options["filename"]
    at.session_state["app.image_format"] = "svg"
    at.run()
    assert not at.exception, at.exception
    assert {c["toImageButtonOptions"]["format"] for c in chart_configs(at).values()} == {"svg"}


def test_the_final_quiz_offers_its_report():
    at = start("en", "pages/99_final_quiz.py")
    keys = [getattr(b.proto, "id", "") for b in at.get("download_button")]
    assert any(k.endswith("app.final_report") for k in keys), keys


def test_the_text_box_is_drawn_with_the_learners_text_as_its_default():
    """A browser that mounts the text box from a run it did not finish (a lesson switched to at
    once after opening) shows the box's default and sends it back with its next message; that
    default is the learner's text, never empty (it was: the text vanished after a quick switch)."""
    at = start("it", "pages/04_position.py")
    box = at.text_area(key="app.text")
    assert box.proto.default == i18n.ui("it")["text.example"]
    box.set_value("Il gatto dorme").run()
    assert not at.exception, at.exception
    assert at.text_area(key="app.text").proto.default == "Il gatto dorme"
    assert at.text_area(key="app.text").value == "Il gatto dorme"


def test_a_nickname_that_cannot_be_one_is_refused_with_a_message():
    def script():
        import streamlit as st

        from ui.learner import persist

        st.session_state["app.learner_input"] = "<b>anna</b>"
        persist._on_nickname()  # what the form's button calls
        persist.notices()

    at = AppTest.from_function(script, default_timeout=TIMEOUT)
    at.query_params["lang"] = "it"
    at.run()
    assert not at.exception, at.exception
    assert label_prefix(i18n.ui("it")["learner.bad_name"]) in " ".join(e.value for e in at.error)
    assert "app.learner" not in at.session_state  # still the learner with no name


def test_a_new_nickname_starts_from_nothing_and_asks_the_browser_again():
    def script():
        import streamlit as st

        from ui.learner import persist

        st.session_state["quiz.results"] = {"numbers": {"live_d_head": True}}
        st.session_state["quiz.numbers.live_d_head.answer"] = "64"
        st.session_state["app.text"] = "Il mio testo"
        st.session_state["app.persist.sid"] = "s1"
        st.session_state["app.persist.restored"] = True
        st.session_state["app.learner_input"] = "  Anna "
        persist._on_nickname()
        st.write(persist.current())

    at = AppTest.from_function(script, default_timeout=TIMEOUT)
    at.query_params["lang"] = "it"
    at.run()
    assert not at.exception, at.exception
    ss = at.session_state
    assert ss["app.learner"] == "anna"
    assert "quiz.results" not in ss and ss["quiz.numbers.live_d_head.answer"] == ""
    assert ss["app.text"] == i18n.ui("it")["text.example"]
    assert ss["app.persist.sid"] != "s1" and ss["app.persist.restored"] is False


def test_a_link_sets_the_first_lessons_slider_without_streamlits_duplicate_default_warning(monkeypatch):
    """A widget whose value a link puts in session state takes its default from session state too:
    Streamlit warns in the server log when a widget gets both."""
    from streamlit.elements.lib import policies

    logged: list[str] = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda msg, *a, **k: logged.append(str(msg) % a if a else str(msg)))
    at = open_link("numbers", {"lang": "en", "layer": "3"})
    assert not at.exception, at.exception
    assert at.session_state["numbers.layer"] == 3
    assert not [m for m in logged if "default value" in m], logged

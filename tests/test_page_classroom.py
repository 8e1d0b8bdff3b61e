"""A live class in the app (AppTest): the teacher's page and the learner's join flow, both languages,
every bad input, against a real class store on a SQLite file in a temporary folder."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from lib.classroom.classroom import MAX_PSEUDONYM, ClassStore
from lib.course import i18n
from lib.course.quiz import load_bank
from tests.apptest import TIMEOUT, page_text


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The app's class store on a fresh SQLite file (the app's cached one cleared before and after)."""
    from ui.classroom import access

    url = f"sqlite:///{tmp_path / 'class.db'}"
    monkeypatch.setenv("ITT_DATABASE_URL", url)
    access.store.clear()
    access.class_state.clear()
    yield ClassStore(url)
    access.store.clear()
    access.class_state.clear()


def _app(lang: str, **params) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _submit(at: AppTest, form: str, label: str) -> AppTest:
    at.button(key=f"FormSubmitter:{form}-{label}").click().run()
    assert not at.exception, at.exception
    return at


def _join(at: AppTest, lang: str, pseudonym: str | None) -> AppTest:
    if pseudonym is not None:
        at.text_input(key="class.pseudonym").set_value(pseudonym)
    return _submit(at, "class.join_form", i18n.ui(lang)["class.join.button"])


def _texts(at: AppTest) -> list[str]:
    return [x.value for x in at.text]


def _grid(at: AppTest, lang: str) -> list[str]:
    """The learners' names in the dashboard's "Learners × lessons" grid: an st.dataframe (drawn as
    text), never an st.table (which renders Markdown in every cell). None without a grid."""
    first = i18n.ui(lang)["class.dash.col.learner"]
    assert all(first not in t.value.reset_index().columns for t in at.table), "the grid is an st.table"
    grids = [d.value for d in at.dataframe if first in d.value.columns]
    return grids[0][first].tolist() if grids else None


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_teacher_starts_a_class_and_gets_code_links_qr_and_dashboard(store, lang):
    labels = i18n.ui(lang)
    at = _app(lang)
    at.switch_page("pages/98_teachers.py").run()
    at.text_input(key="class.start_name").set_value("3A <b>fisica</b>")
    _submit(at, "class.start_form", labels["class.start.button"])
    me = at.session_state["class.teacher"]
    info = store.class_info(me["code"])
    assert info is not None and info.name == "3A <b>fisica</b>" and store.verify_teacher(me["code"], me["secret"])
    codes = [c.value for c in at.code]
    assert codes[0].endswith(f"/?lang={lang}&class={me['code']}")
    assert codes[1].endswith(f"/teachers?lang={lang}&class={me['code']}&key={me['secret']}")
    assert "3A <b>fisica</b>" in _texts(at)  # the class name as text, never markup
    assert len(at.get("image")) == 1  # the QR code
    assert labels["class.dash.none"] in [x.value for x in at.info]
    assert labels["class.unreachable"] not in page_text(at)
    # The guide stays below: the lesson links are the next code block.
    assert f"lang={lang}" in codes[2] and len(codes[2].splitlines()) == 8


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_learner_joins_by_link_answers_and_the_dashboard_counts_it(store, lang):
    labels = i18n.ui(lang)
    created = store.create_class("4B")
    at = _app(lang, **{"class": created.code.lower()})
    assert "class" not in at.query_params  # the code leaves the address
    proposed = at.text_input(key="class.pseudonym").value
    assert proposed and store.class_info(created.code) is not None
    assert labels["class.join.privacy"] in page_text(at)
    _join(at, lang, None)  # the proposed pseudonym, as it is
    assert at.session_state["class.member"]["pseudonym"] == proposed
    assert proposed in _texts(at) and labels["class.side.leave"] in [b.label for b in at.button]
    q = next(q for q in load_bank(lang, "numbers") if q.kind == "choice")
    at.radio(key=f"quiz.numbers.{q.id}.answer").set_value(int(q.answer))
    at.button(key=f"FormSubmitter:quiz.numbers.{q.id}.form-{labels['quiz.check']}").click().run()
    at.radio(key=f"quiz.numbers.{q.id}.answer").set_value((int(q.answer) + 1) % len(q.options))
    at.button(key=f"FormSubmitter:quiz.numbers.{q.id}.form-{labels['quiz.check']}").click().run()
    assert not at.exception, at.exception
    board = store.dashboard(created.code, created.secret)
    assert [r.pseudonym for r in board.learners] == [proposed]
    assert board.learners[0].visited == {"numbers"} and board.learners[0].current_lesson == "numbers"
    (stats,) = [s for s in board.questions if s.question_id == q.id]
    assert stats.answered == 1 and stats.right == 1  # the first answer only
    assert [a.answer for a in stats.answers] == [str(int(q.answer))]
    at.run()
    at.button(key="class.leave").click().run()
    assert "class.member" not in at.session_state
    assert store.dashboard(created.code, created.secret).learners == ()


def test_answers_given_before_joining_reach_the_class_on_joining(store):
    labels = i18n.ui("it")
    created = store.create_class()
    at = _app("it")
    q = next(q for q in load_bank("it", "numbers") if q.kind == "choice")
    wrong = (int(q.answer) + 1) % len(q.options)
    at.radio(key=f"quiz.numbers.{q.id}.answer").set_value(wrong)
    at.button(key=f"FormSubmitter:quiz.numbers.{q.id}.form-{labels['quiz.check']}").click().run()
    at.run()  # the answer reran its own sections only; the sidebar's class box is drawn by a full run
    at.text_input(key="class.code_input").set_value(created.code)
    _submit(at, "class.code_form", labels["class.side.go"])
    _join(at, "it", "Ada")
    (stats,) = store.dashboard(created.code, created.secret).questions
    assert (stats.question_id, stats.answered, stats.right, stats.answers[0].answer) == (q.id, 1, 0, str(wrong))


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("typed, kept", [
    ("", "proposed"),  # an empty box: the proposal it shows as its placeholder
    ("   \u202e\u0007 ", None),
    ("x" * 10_000, "long"),
    ("x" * MAX_PSEUDONYM, "x" * MAX_PSEUDONYM),
    ("Ada\u0000\u202eLove\u0007", "AdaLove"),
    ("<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>"),
])
def test_every_pseudonym_is_cleaned_or_refused_with_a_message(store, lang, typed, kept):
    labels = i18n.ui(lang)
    created = store.create_class()
    at = _app(lang, **{"class": created.code})
    if kept == "proposed":
        kept = at.text_input(key="class.pseudonym").placeholder
        assert kept == at.text_input(key="class.pseudonym").value
    _join(at, lang, typed)
    if kept is None:
        assert labels["class.err.bad"] in [e.value for e in at.error]
        assert "class.member" not in at.session_state
        return
    if kept == "long":  # refused with a message, not cut in silence
        assert i18n.fill(labels["class.err.long"], n=str(MAX_PSEUDONYM)) in [e.value for e in at.error]
        assert "class.member" not in at.session_state
        assert store.dashboard(created.code, created.secret).learners == ()
        return
    assert at.session_state["class.member"]["pseudonym"] == kept
    assert kept in _texts(at)  # st.text: shown as the characters typed
    assert all(kept not in m.value for m in at.markdown)  # never as Markdown or HTML
    assert [r.pseudonym for r in store.dashboard(created.code, created.secret).learners] == [kept]


def test_a_pseudonym_taken_in_the_class_asks_for_another(store):
    created = store.create_class()
    store.join(created.code, "Ada")
    at = _app("en", **{"class": created.code})
    _join(at, "en", " ada ")
    assert i18n.ui("en")["class.err.taken"] in [e.value for e in at.error]
    assert "class.member" not in at.session_state


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_wrong_expired_and_closed_classes_say_why(store, lang, tmp_path):
    labels = i18n.ui(lang)
    at = _app(lang, **{"class": "ZZZZZZ"})
    assert labels["class.err.unknown"] in [e.value for e in at.error]
    old = ClassStore(f"sqlite:///{tmp_path / 'class.db'}", clock=lambda: time.time() - 40 * 86400)
    expired = old.create_class(days=30)
    at = _app(lang, **{"class": expired.code})
    assert labels["class.err.unknown"] in [e.value for e in at.error]
    closed = store.create_class()
    at = _app(lang, **{"class": closed.code})
    store.set_joining(closed.code, closed.secret, False)
    _join(at, lang, "Ada")
    assert labels["class.err.closed"] in [e.value for e in at.error]
    assert "class.member" not in at.session_state


def test_wrong_codes_are_limited_per_session(store):
    labels = i18n.ui("en")
    created = store.create_class()
    at = _app("en")
    for i in range(10):
        at.text_input(key="class.code_input").set_value(f"WRONG{i}")
        _submit(at, "class.code_form", labels["class.side.go"])
        assert labels["class.err.unknown"] in [e.value for e in at.error]
    at.text_input(key="class.code_input").set_value(created.code)  # even the right one waits now
    _submit(at, "class.code_form", labels["class.side.go"])
    assert labels["class.err.limit"] in [e.value for e in at.error]
    assert "class.pending" not in at.session_state


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_teacher_link_with_a_wrong_or_truncated_secret_shows_nothing_of_the_class(store, lang):
    labels = i18n.ui(lang)
    created = store.create_class("5C")
    store.join(created.code, "Ada")
    for key in ("wrong", created.secret[:-1], created.secret[:8], ""):
        at = _app(lang, **{"class": created.code, "key": key})
        at.switch_page("pages/98_teachers.py").run()
        assert not at.exception, at.exception
        assert labels["class.bad_key"] in [e.value for e in at.error]
        assert "Ada" not in page_text(at) + "".join(str(d.value.to_dict()) for d in [*at.dataframe, *at.table])
        assert "class.teacher" not in at.session_state
    at = _app(lang, **{"class": created.code, "key": created.secret})
    at.switch_page("pages/98_teachers.py").run()
    assert "class" not in at.query_params and "key" not in at.query_params  # the secret leaves the address
    assert "Ada" in _grid(at, lang)


def test_the_teacher_paces_the_class_anonymizes_and_deletes_it(store):
    from ui.classroom import access
    from ui.classroom.access import ORDER

    labels = i18n.ui("it")
    created = store.create_class()
    learner = _app("it", **{"class": created.code})
    _join(learner, "it", "<b>Bea</b>")
    teacher = _app("it", **{"class": created.code, "key": created.secret})
    teacher.switch_page("pages/98_teachers.py").run()
    assert _grid(teacher, "it") == ["<b>Bea</b>"]
    teacher.toggle(key="class.anonymize").set_value(True).run()
    assert _grid(teacher, "it") == [i18n.fill(labels["class.dash.learner_n"], n="1")]
    assert "Bea" not in page_text(teacher) + "".join(str(d.value.to_dict()) for d in [*teacher.dataframe, *teacher.table])
    teacher.selectbox(key="class.lead_choice").select_index(ORDER.index("attention")).run()
    teacher.button(key="class.lead").click().run()
    teacher.selectbox(key="class.upto_choice").select_index(ORDER.index("embeddings")).run()
    teacher.button(key="class.upto").click().run()
    assert store.pacing(created.code).lead_lesson == "attention" and store.pacing(created.code).open_upto == "embeddings"
    access.class_state.clear()  # the learner's few seconds of cache, over
    learner.run()
    title = i18n.ui("it")["lesson.attention.title"]
    assert i18n.fill(labels["class.banner.lead"], title=title) in [x.value for x in learner.info]
    learner.switch_page("pages/05_attention.py").run()
    assert i18n.fill(labels["class.locked"], title=i18n.ui("it")["lesson.embeddings.title"]) in [
        w.value for w in learner.warning]
    teacher.button(key="class.unlead").click().run()
    teacher.button(key="class.open_all").click().run()
    assert store.pacing(created.code).lead_lesson is None and store.pacing(created.code).open_upto is None
    teacher.toggle(key="class.joining").set_value(False).run()
    assert not store.class_info(created.code).joining_open
    teacher.button(key="class.delete").click().run()
    assert store.class_info(created.code) is not None  # not before the confirmation
    teacher.button(key="class.delete_yes").click().run()
    assert not teacher.exception, teacher.exception
    assert store.class_info(created.code) is None
    assert labels["class.deleted"] in [s.value for s in teacher.success]


def test_an_unreachable_database_is_said_and_nothing_raises(tmp_path, monkeypatch):
    from ui.classroom import access

    monkeypatch.setenv("ITT_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1")
    access.store.clear()
    access.class_state.clear()
    try:
        at = _app("en")
        at.switch_page("pages/98_teachers.py").run()
        assert not at.exception, at.exception
        assert i18n.ui("en")["class.unreachable"] in [e.value for e in at.error]
        at = _app("en", **{"class": "ABCDEF"})
        assert i18n.ui("en")["class.err.store"] in [e.value for e in at.error]
    finally:
        access.store.clear()
        access.class_state.clear()


def test_answers_given_while_the_database_is_down_are_said_kept_and_sent_later(store, monkeypatch):
    """The database stops answering mid-lesson: the verdict still comes, the sidebar says at once
    that the class does not receive the answers, and they reach the class once it answers again."""
    from lib.classroom import classroom as C

    labels = i18n.ui("en")
    created = store.create_class()
    at = _join(_app("en", **{"class": created.code}), "en", "Ada")
    first, second = [q for q in load_bank("en", "numbers") if q.kind == "choice"][:2]

    def answer(q):
        at.radio(key=f"quiz.numbers.{q.id}.answer").set_value(int(q.answer))
        at.button(key=f"FormSubmitter:quiz.numbers.{q.id}.form-{labels['quiz.check']}").click().run()
        assert not at.exception, at.exception

    def down(*_a, **_k):
        raise C.StoreUnavailable("the database does not answer")

    with monkeypatch.context() as m:
        m.setattr(C.ClassStore, "record_answers", down)
        answer(first)
        assert labels["class.side.offline"] in [w.value for w in at.sidebar.warning]
        assert labels["quiz.right"] in page_text(at)  # the lesson goes on
    assert store.dashboard(created.code, created.secret).questions == ()
    at.run()
    answer(second)  # back: both answers go, the notice goes
    assert labels["class.side.offline"] not in [w.value for w in at.sidebar.warning]
    counted = {s.question_id: s.answered for s in store.dashboard(created.code, created.secret).questions}
    assert counted == {first.id: 1, second.id: 1}


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_teacher_removes_one_learner_after_a_confirmation(store, lang):
    """The dashboard's "remove a learner": choose, confirm; the learner leaves the board and the
    store with their answers, the other stays. Anonymized, the choice shows stand-ins only."""
    labels = i18n.ui(lang)
    created = store.create_class()
    ada, bea = store.join(created.code, "Ada"), store.join(created.code, "<b>Bea</b>")
    store.record_answer(ada.id, "numbers", "q1", "0", True)
    store.record_answer(bea.id, "numbers", "q1", "1", False)
    teacher = _app(lang, **{"class": created.code, "key": created.secret})
    teacher.switch_page("pages/98_teachers.py").run()
    assert _grid(teacher, lang) == ["<b>Bea</b>", "Ada"]  # by pseudonym ("<" before "a")
    assert teacher.selectbox(key="class.remove_choice").options == ["<b>Bea</b>", "Ada"]
    teacher.toggle(key="class.anonymize").set_value(True).run()
    hidden = teacher.selectbox(key="class.remove_choice").options
    assert hidden == [i18n.fill(labels["class.dash.learner_n"], n=str(n)) for n in (1, 2)]
    teacher.toggle(key="class.anonymize").set_value(False).run()

    teacher.selectbox(key="class.remove_choice").set_value("Ada").run()
    teacher.button(key="class.remove").click().run()
    assert labels["class.remove.confirm"] in [w.value for w in teacher.warning]
    assert "Ada" in _texts(teacher)  # the confirmation names them, as text
    teacher.button(key="class.remove_no").click().run()  # cancel: nobody goes
    assert len(store.dashboard(created.code, created.secret).learners) == 2
    teacher.selectbox(key="class.remove_choice").set_value("Ada").run()
    teacher.button(key="class.remove").click().run()
    assert len(store.dashboard(created.code, created.secret).learners) == 2  # not before the confirmation
    teacher.button(key="class.remove_yes").click().run()
    assert not teacher.exception, teacher.exception
    assert labels["class.remove.done"] in [s.value for s in teacher.success]
    teacher.run()  # the dashboard's next refresh: the notice stays to be read...
    assert labels["class.remove.done"] in [s.value for s in teacher.success]
    done, at = teacher.session_state["class.removed"]
    teacher.session_state["class.removed"] = (done, at - 60)  # ... until its time is over
    teacher.run()
    assert labels["class.remove.done"] not in [s.value for s in teacher.success]
    assert _grid(teacher, lang) == ["<b>Bea</b>"]
    board = store.dashboard(created.code, created.secret)
    assert [r.pseudonym for r in board.learners] == ["<b>Bea</b>"]
    assert [(q.question_id, q.answered, q.answers[0].answer) for q in board.questions] == [("q1", 1, "1")]
    assert store.learner(ada.id) is None and store.learner(bea.id) is not None


def _check(at: AppTest, lang: str, qid: str, value) -> None:
    """Answer question `qid` of lesson 1 with `value` and press Check."""
    widget = at.radio(key=f"quiz.numbers.{qid}.answer") if isinstance(value, int) else at.text_input(
        key=f"quiz.numbers.{qid}.answer")
    widget.set_value(value)
    at.button(key=f"FormSubmitter:quiz.numbers.{qid}.form-{i18n.ui(lang)['quiz.check']}").click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_first_answer_reaches_the_class_as_given_its_number_only_with_its_own_verdict(store, lang):
    """Wrong first (a number and words), right after, then join: the class gets the first answer's
    number and its verdict (wrong), not the last answer's, and no word typed."""
    labels = i18n.ui(lang)
    created = store.create_class()
    at = _app(lang)
    _check(at, lang, "d_model_from_heads", "4000 Mario Rossi via Roma")  # wrong
    _check(at, lang, "d_model_from_heads", "4096")  # right, not the first
    at.run()  # an answer reruns its own sections only: the whole page again, for the next question
    _check(at, lang, "d_head_70b", "128 numbers")  # right, first
    at.run()
    at.text_input(key="class.code_input").set_value(created.code)
    _submit(at, "class.code_form", labels["class.side.go"])
    _join(at, lang, "Ada")
    got = {(s.question_id, a.answer, a.correct, a.count)
           for s in store.dashboard(created.code, created.secret).questions for a in s.answers}
    assert got == {("d_model_from_heads", "4000", False, 1), ("d_head_70b", "128", True, 1)}
    exported = store.export_csv(created.code, created.secret)
    assert "Mario" not in exported and "128 numbers" not in exported


def test_answers_the_browser_brings_back_after_the_join_are_sent_then(store):
    """The browser's copy of the progress may come back after the learner joined (a reload, a slow
    browser): its first answers go to the class at the next run, with the text kept when given."""
    created = store.create_class()
    at = _join(_app("en", **{"class": created.code}), "en", "Ada")
    assert store.dashboard(created.code, created.secret).questions == ()
    # What ui/learner/persist.py's restore puts into the session: the verdicts, the boxes, the firsts as given.
    at.session_state["quiz.results"] = {"numbers": {"d_model_from_heads": False, "gqa_group": True}}
    at.session_state["quiz.firsts"] = {"numbers:d_model_from_heads": ["4000", False]}
    at.run()
    assert not at.exception, at.exception
    got = {(s.question_id, a.answer, a.correct) for s in store.dashboard(created.code, created.secret).questions
           for a in s.answers}
    assert got == {("d_model_from_heads", "4000", False), ("gqa_group", "", True)}  # the second's text unknown
    at.run()  # sent once: a later run sends nothing new, and the store would keep the first anyway
    assert sum(s.answered for s in store.dashboard(created.code, created.secret).questions) == 2


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_wrong_code_message_stays_through_a_rerun_until_closed(store, lang):
    """The restore of the browser's copy reruns the page right after it opens: the message stays."""
    labels = i18n.ui(lang)
    at = _app(lang, **{"class": "ZZZZZZ"})
    assert labels["class.err.unknown"] in [e.value for e in at.error]
    at.run()  # the rerun the browser's copy causes
    assert labels["class.err.unknown"] in [e.value for e in at.error]
    at.button(key="class.notice_close").click().run()
    assert labels["class.err.unknown"] not in [e.value for e in at.error]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_bad_teacher_link_message_stays_through_a_rerun(store, lang):
    labels = i18n.ui(lang)
    created = store.create_class()
    at = _app(lang, **{"class": created.code, "key": "wrong"})
    at.switch_page("pages/98_teachers.py").run()
    assert labels["class.bad_key"] in [e.value for e in at.error]
    at.run()
    assert labels["class.bad_key"] in [e.value for e in at.error]
    assert "class.teacher" not in at.session_state
    at.button(key="class.teacher_notice_close").click().run()
    assert labels["class.bad_key"] not in [e.value for e in at.error]


@pytest.mark.parametrize("how", ["deleted", "removed"])
def test_a_learner_is_told_at_their_next_answer_that_the_class_is_gone_or_they_were_removed(store, how):
    from ui.classroom import access

    labels = i18n.ui("en")
    created = store.create_class()
    at = _join(_app("en", **{"class": created.code}), "en", "Ada")
    if how == "deleted":
        store.delete_class(created.code, created.secret)
    else:
        store.remove_learner(created.code, created.secret, "Ada")
    access.class_state.clear()  # as after the few seconds the pacing is cached
    if how == "removed":
        _check(at, "en", "d_head_70b", "128")  # the next action: an answer
    else:
        at.run()  # the next action: any run of the page
    assert labels[f"class.gone.{how}"] in [w.value for w in at.sidebar.warning]
    assert "class.member" not in at.session_state
    assert labels["class.side.leave"] not in [b.label for b in at.button]
    at.run()
    assert labels[f"class.gone.{how}"] in [w.value for w in at.sidebar.warning]  # until they act
    if how == "removed":
        assert at.session_state["quiz.results"]["numbers"] == {"d_head_70b": True}  # kept in the browser


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_teacher_tab_on_a_class_deleted_elsewhere_says_so(store, lang):
    labels = i18n.ui(lang)
    created = store.create_class()
    at = _app(lang, **{"class": created.code, "key": created.secret})
    at.switch_page("pages/98_teachers.py").run()
    store.delete_class(created.code, created.secret)  # from another tab
    at.run()
    assert not at.exception, at.exception
    assert labels["class.teacher_gone"] in [e.value for e in at.error]
    assert labels["class.unreachable"] not in [e.value for e in at.error]
    assert "class.teacher" not in at.session_state


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_class_closed_to_joining_opens_no_join_panel(store, lang):
    labels = i18n.ui(lang)
    created = store.create_class()
    store.set_joining(created.code, created.secret, False)
    at = _app(lang, **{"class": created.code})
    assert labels["class.err.closed"] in [e.value for e in at.error]
    assert "class.pseudonym" not in [x.key for x in at.text_input]


def test_leading_to_a_lesson_the_class_cannot_open_yet_opens_it_and_says_so(store):
    from ui.classroom.access import ORDER

    labels = i18n.ui("en")
    created = store.create_class()
    store.set_open_upto(created.code, created.secret, "embeddings")
    teacher = _app("en", **{"class": created.code, "key": created.secret})
    teacher.switch_page("pages/98_teachers.py").run()
    teacher.selectbox(key="class.lead_choice").select_index(ORDER.index("attention")).run()
    teacher.button(key="class.lead").click().run()
    pace = store.pacing(created.code)
    assert (pace.lead_lesson, pace.open_upto) == ("attention", "attention")
    assert i18n.fill(labels["class.pace.lead_opened"], title=labels["lesson.attention.title"]) in [
        x.value for x in teacher.info]

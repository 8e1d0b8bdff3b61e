"""What a learner in a class reports: each first answer as given, the final quiz's score, sent at the
end of a run and kept while the database does not answer; and the browser's copy of the membership
and of the first answers (kept beside the learner's progress, and a cookie with the class's code)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

import streamlit as st

from lib.classroom import classroom as C
from lib.serving.log import failure
from ui.classroom.access import (COOKIE, FIRSTS, HEARD, HELD, MEMBER, OFFLINE, QUEUE, SENT, class_state, member, send,
                                 store)
from ui.shell.core import t

MAX_QUEUE = 500  # reports kept while the database is down (every lesson question and then some)
log = logging.getLogger(__name__)


def answer_text(response) -> str:
    """What a first answer is sent as: the option's index for a choice, the number read from the
    box for a numeric question ("4,096 tokens" -> "4096"), the same in every language; never the
    words typed around it. Example: answer_text(2) -> "2"; answer_text("4096 Mario") -> "4096"
    """
    return C.canonical_answer(response)


def queue_answer(lesson_id: str, q, response, correct: bool) -> None:
    """From the quiz's Check callback: a first answer, kept as given with its verdict (in or out of
    a class); the class gets it at the end of the run (flush)."""
    firsts = st.session_state.setdefault(FIRSTS, {})
    firsts.setdefault(f"{lesson_id}:{q.id}", [answer_text(response), bool(correct)])


def _queue_firsts() -> None:
    """Hand the queue every first answer of this session's progress that this membership has not
    sent yet: each with its own text and verdict as kept when given. A first answer whose text was
    not kept (progress from a file, or from before texts were kept) goes with the answer in its box
    when that has the first's verdict, else with no text (it counts, its text is unknown)."""
    ss = st.session_state
    if not member():
        return
    sent = ss.setdefault(SENT, set())
    results = ss.get("quiz.results", {})
    todo = [(lesson, qid, bool(correct)) for lesson, answers in results.items()
            for qid, correct in answers.items() if f"{lesson}:{qid}" not in sent]
    if not todo:
        return
    firsts = ss.get(FIRSTS, {})
    queue = ss.setdefault(QUEUE, [])
    for lesson, qid, correct in todo:
        if len(queue) >= MAX_QUEUE:
            return
        kept = firsts.get(f"{lesson}:{qid}")
        if kept is not None and bool(kept[1]) == correct:
            answer = kept[0]
        else:
            shown = ss.get(f"quiz.{lesson}.{qid}.grade")
            box = ss.get(f"quiz.{lesson}.{qid}.answer")
            answer = answer_text(box) if shown is not None and shown.correct == correct and box is not None else ""
        queue.append(("answer", lesson, qid, answer, correct))
        sent.add(f"{lesson}:{qid}")


def report_final(correct: int, total: int) -> None:
    """The final quiz's score, once it is complete (sent again only if it changes)."""
    mine = member()
    if not mine or st.session_state.get("class.final_sent") == (mine["code"], correct, total):
        return
    if send(lambda s: s.record_final(mine["id"], correct, total)):
        st.session_state["class.final_sent"] = (mine["code"], correct, total)


def drain() -> None:
    """Send what the callbacks queued, in one transaction; kept for the next try when the database
    does not answer."""
    _queue_firsts()
    mine = member()
    queue = st.session_state.get(QUEUE)
    if not mine or not queue:
        return
    batch = [(lesson, qid, answer, correct) for _, lesson, qid, answer, correct in queue]
    if send(lambda s: s.record_answers(mine["id"], batch)):
        del queue[:len(batch)]


def flush() -> None:
    """In the sidebar's progress section, which a quiz answer reruns: send what is queued and, while
    the class does not receive this learner's answers, say so there (right after the answer)."""
    was = member()
    drain()
    mine = member()
    if was and not mine:  # the class no longer knows this learner: the sidebar above says why
        st.rerun(scope="app")
    if mine and (st.session_state.get(OFFLINE) or class_state(mine["code"])[0] == "down"):
        st.warning(t("class.side.offline"))


def to_keep() -> str:
    """The membership and the first answers as given, as the browser keeps them ("" for neither).

    Example: '{"code":"K7QF3M","id":"Xy.s3","pseudonym":"Ada","firsts":{"numbers:q1":["4096",true]}}'
    """
    mine = dict(member() or {})
    firsts = st.session_state.get(FIRSTS)
    if firsts:
        mine["firsts"] = firsts
    return json.dumps(mine, separators=(",", ":")) if mine else ""


def _firsts_back(data: Mapping) -> None:
    """The first answers the browser kept, merged under this session's: the browser's are older, so
    theirs win (as lib.learner.progress_code.merge lets the older verdict win). Malformed entries are dropped."""
    kept = data.get("firsts")
    if not isinstance(kept, Mapping):
        return
    back = {}
    for key, value in list(kept.items())[:2000]:
        if (isinstance(key, str) and len(key) <= 130 and key.count(":") == 1 and isinstance(value, list)
                and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], bool)):
            back[key] = [C.canonical_answer(value[0]) if value[0] else "", value[1]]
    if back:
        st.session_state[FIRSTS] = {**st.session_state.get(FIRSTS, {}), **back}


def restore(raw: object) -> bool:
    """The membership the browser kept, back into a new session (unless this session has its own),
    and the first answers kept with it; True when the membership came back or a lesson was kept
    shut until it came (the page then runs again: the class box, the visit, the lesson or its lock)."""
    ss = st.session_state
    ss[HEARD] = True
    held = bool(ss.pop(HELD, False))
    return _restore(raw) or held


def to_cookie() -> dict:
    """The `itt_class` cookie the browser keeps: this session's class code ("" removes it), for as
    long as a class lives. Example: {"name": "itt_class", "value": "K7QF3M", "seconds": 2592000}"""
    return {"name": COOKIE, "value": (member() or {}).get("code", ""), "seconds": C.class_days() * 86_400}


def _restore(raw: object) -> bool:
    if not isinstance(raw, str) or not raw:
        return False
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(data, Mapping):
        return False
    _firsts_back(data)
    if member() or not all(isinstance(data.get(k), (str, int)) for k in ("code", "id", "pseudonym")):
        return False
    s = store()
    try:
        learner = s.learner(str(data["id"])) if s is not None else None
    except C.ClassError:  # StoreUnavailable: keep the membership, the reports wait for the database
        learner = C.Learner(str(data["id"]), C.normalise_code(str(data["code"])), str(data["pseudonym"])[:64])
    except Exception as e:  # no membership back: better than one that may be wrong
        failure(log, "restoring a class membership", e)
        return False
    if learner is None or learner.code != C.normalise_code(str(data["code"])):
        return False
    st.session_state[MEMBER] = {"code": learner.code, "id": learner.id, "pseudonym": learner.pseudonym}
    return True

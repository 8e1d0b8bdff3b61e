"""lib.learner.progress_code: progress checked, merged, and round-tripped through a code and a file."""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from lib.course.quiz import load_bank, record
from lib.learner import progress_code as pc


def _progress() -> dict:
    p = pc.empty()
    p["results"] = {"numbers": {"d_model_from_heads": True, "live_d_head": False}, "attention": {"scale": True}}
    p["responses"] = {"numbers:d_model_from_heads": 2, "numbers:live_d_head": "6,4"}
    p["final"] = {"seed": 4242, "answers": {"numbers:live_d_head": True},
                  "responses": {"numbers:live_d_head": "64"}}
    return p


@pytest.mark.parametrize("progress", [pc.empty(), _progress()])
def test_code_round_trip(progress):
    code = pc.encode(progress)
    assert code.startswith(pc.CODE_PREFIX)
    assert set(code[len(pc.CODE_PREFIX):]) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert pc.decode(code) == (progress, 0)


@pytest.mark.parametrize("progress", [pc.empty(), _progress()])
def test_file_round_trip(progress):
    data = pc.to_file(progress, "2026-12-03T10:00:00Z")
    doc = json.loads(data)
    assert doc["kind"] == pc.FILE_KIND and doc["saved_at"] == "2026-12-03T10:00:00Z"
    assert pc.from_file(data) == (progress, 0)


def test_file_accepts_a_pasted_code_and_a_bom():
    p = _progress()
    assert pc.from_file(pc.encode(p).encode() + b"\n") == (p, 0)
    assert pc.from_file(b"\xef\xbb\xbf" + pc.to_file(p)) == (p, 0)


def test_a_real_bank_fits_in_a_small_code():
    # Every question of every lesson answered: still a few hundred bytes in local storage.
    p = pc.empty()
    for lesson in ("numbers", "tokenization", "embeddings", "position", "attention", "block", "sampling", "kvcache"):
        for q in load_bank("en", lesson):
            p["results"] = record(p["results"], lesson, q.id, True)
            p["responses"][f"{lesson}:{q.id}"] = 1 if q.kind == "choice" else "123,5"
    code = pc.encode(p)
    assert pc.decode(code)[0] == p
    assert len(code) < 3000


@pytest.mark.parametrize("raw", [None, [], "text", 3, {"v": 2}, {"results": {}}, {"v": "1"}])
def test_clean_refuses_what_is_not_progress(raw):
    with pytest.raises(pc.ProgressError):
        pc.clean(raw)


def test_clean_drops_malformed_entries_and_counts_them():
    raw = {"v": 1,
           "results": {"numbers": {"ok": True, "bad id!": True, "num": 1}, "../x": {"a": True}, "block": []},
           "responses": {"numbers:ok": 1, "numbers:neg": -1, "nocolon": 1, "numbers:long": "9" * 65,
                         "numbers:flag": True},
           "final": {"seed": "seven", "answers": {"numbers:ok": True, "numbers:x": "yes"}, "responses": []}}
    p, dropped = pc.clean(raw)
    assert p["results"] == {"numbers": {"ok": True}}
    assert p["responses"] == {"numbers:ok": 1}
    assert p["final"] == {"seed": None, "answers": {"numbers:ok": True}, "responses": {}}
    assert dropped == 2 + 1 + 1 + 4 + 1 + 1 + 1


@pytest.mark.parametrize("code", ["", "hello", pc.CODE_PREFIX, pc.CODE_PREFIX + "!!!!", pc.CODE_PREFIX + "eJzLSM3JyQcABiwCFQ",
                                  pc.CODE_PREFIX + base64.urlsafe_b64encode(zlib.compress(b"[1, 2]")).decode()])
def test_decode_refuses_malformed_codes(code):
    with pytest.raises(pc.ProgressError):
        pc.decode(code)


def test_decode_refuses_a_truncated_code():
    code = pc.encode(_progress())
    with pytest.raises(pc.ProgressError):
        pc.decode(code[:-6])


def test_decode_refuses_a_compression_bomb():
    # 10 MB of spaces compress to ~10 KB: the code is small, what it expands to is not progress.
    bomb = zlib.compress(b'{"v": 1, "x": "' + b" " * 10_000_000 + b'"}', 9)
    code = pc.CODE_PREFIX + base64.urlsafe_b64encode(bomb).decode().rstrip("=")
    assert len(code) < pc.MAX_BYTES
    with pytest.raises(pc.ProgressError, match="too large"):
        pc.decode(code)


@pytest.mark.parametrize("data", [b"", b"\xff\xfe\x00", b"not json", b'{"v": 1}', b"[]",
                                  json.dumps({"kind": "something else", "v": 1}).encode(), b" " * (pc.MAX_BYTES + 1)])
def test_from_file_refuses_what_is_not_a_progress_file(data):
    with pytest.raises(pc.ProgressError):
        pc.from_file(data)


def test_merge_first_answers_count_last_responses_show():
    old, new = pc.empty(), pc.empty()
    old["results"] = {"numbers": {"a": False}}
    old["responses"] = {"numbers:a": 0}
    new["results"] = {"numbers": {"a": True, "b": True}, "block": {"c": True}}
    new["responses"] = {"numbers:a": 1}
    m = pc.merge(old, new)
    assert m["results"] == {"numbers": {"a": False, "b": True}, "block": {"c": True}}
    assert m["responses"] == {"numbers:a": 1}


def test_merge_keeps_the_final_quiz_a_fresh_session_has_not_started():
    old = _progress()
    fresh = pc.empty()
    fresh["final"]["seed"] = 7  # a new session draws a seed before it hears from the browser
    assert pc.merge(old, fresh)["final"] == old["final"]
    started = pc.empty()
    started["final"] = {"seed": 7, "answers": {"block:x": True}, "responses": {}}
    assert pc.merge(old, started)["final"] == started["final"]
    same_sitting = pc.empty()
    same_sitting["final"] = {"seed": 4242, "answers": {"block:x": False, "numbers:live_d_head": False},
                             "responses": {"block:x": 1}}
    merged = pc.merge(old, same_sitting)["final"]
    assert merged["answers"] == {"block:x": False, "numbers:live_d_head": True}
    assert merged["responses"] == {"block:x": 1, "numbers:live_d_head": "64"}


def test_merge_with_empty_is_identity():
    p = _progress()
    assert pc.merge(p, pc.empty()) == p
    assert pc.merge(pc.empty(), p) == p
    assert pc.is_empty(pc.empty()) and not pc.is_empty(p)


# --------------------------------------------------------------------------- learners and text

@pytest.mark.parametrize("raw, expected", [
    ("  Anna  Rossi ", "anna rossi"), ("MARCO", "marco"), ("Niccolò", "niccolò"), ("s.3b-02_x", "s.3b-02_x"),
    ("", ""), ("   ", ""), ("a/b", None), ("<script>", None), ("x" * 25, None), (None, None), (7, None),
])
def test_nickname(raw, expected):
    assert pc.nickname(raw) == expected


def test_each_learner_has_entries_of_their_own():
    nobody, anna, marco = pc.entries(""), pc.entries("anna"), pc.entries("marco")
    assert nobody == {"progress": pc.PROGRESS_ENTRY, "text": pc.TEXT_ENTRY}
    assert nobody["progress"] == "inside-transformer.progress"  # the entry kept before nicknames existed
    names = [*nobody.values(), *anna.values(), *marco.values(), pc.LEARNER_ENTRY]
    assert len(set(names)) == len(names)
    assert anna["progress"].endswith(".anna") and anna["text"].endswith(".anna")


def test_the_text_kept_is_the_text_typed_within_the_limit():
    examples = ("Il gatto si è seduto.", "The cat sat.")
    for text in ("La professoressa di Bologna ha spiegato…", "🙂 emoji e accenti: è à ù", "x" * pc.MAX_KEPT_TEXT):
        assert pc.text_to_keep(text, examples) == text
    for text in ("", "   \n", *examples, "x" * (pc.MAX_KEPT_TEXT + 1), None):
        assert pc.text_to_keep(text, examples) == ""


def test_a_kept_text_comes_back_only_over_an_example_or_an_empty_box():
    examples = ("Il gatto si è seduto.", "The cat sat.")
    mine = "La professoressa di Bologna ha spiegato…"
    assert pc.text_to_restore(mine, examples[0], examples) == mine
    assert pc.text_to_restore(mine, examples[1], examples) == mine  # the other language's example
    assert pc.text_to_restore(mine, "", examples) == mine
    assert pc.text_to_restore(mine, "A text from a shared link", examples) is None
    assert pc.text_to_restore(mine, mine, examples) is None
    for stored in (None, "", 42, "x" * (pc.MAX_KEPT_TEXT + 1)):
        assert pc.text_to_restore(stored, examples[0], examples) is None

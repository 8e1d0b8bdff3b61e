"""lib.learner.export: the capture's export equals the capture (oracle: a plain forward pass for the
next-token probabilities), CSV and NPZ carry the same numbers, the quiz report escapes its text."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
import torch

from lib.learner import export
from lib.model.capture import run_capture

TEXT = "Hello, world! Ciao, città."


def test_top_k_textbook():
    ids, probs = export.top_k(np.log(np.array([[0.1, 0.6, 0.3]])), 2)
    assert ids.tolist() == [[1, 2]]
    np.testing.assert_allclose(probs, [[0.6, 0.3]])
    ids, _ = export.top_k(np.zeros((1, 3)), 10)  # k beyond the vocabulary: all of it
    assert ids.shape == (1, 3)


@pytest.fixture(scope="module")
def data(tiny_llama):
    cap = run_capture(tiny_llama, TEXT)
    decode = lambda i: tiny_llama.tokenizer.decode([i])  # noqa: E731
    return cap, export.capture_data(cap, layer=1, head=3, k=5, decode=decode), tiny_llama


def test_capture_data_equals_the_model(data):
    cap, d, lm = data
    T = cap.n_tokens
    assert d.attention.shape == (T, T) and d.top_ids.shape == (T, 5) and d.resid_norms.shape == (cap.n_layers + 1, T)
    np.testing.assert_allclose(d.attention.sum(-1), 1.0, atol=1e-5)  # rows of attention sum to 1
    np.testing.assert_allclose(d.attention, cap.attention(1, 3), atol=1e-6)
    with torch.inference_mode():  # oracle: the model's own next-token distribution
        logits = lm.model(torch.tensor([cap.token_ids.tolist()])).logits[0].float().numpy()
    p = torch.softmax(torch.tensor(logits, dtype=torch.float64), -1).numpy()
    np.testing.assert_array_equal(d.top_ids[:, 0], p.argmax(-1))
    np.testing.assert_allclose(d.top_probs, np.take_along_axis(p, d.top_ids, -1), atol=1e-4)
    assert np.all(np.diff(d.top_probs, axis=-1) <= 1e-7)  # likeliest first
    np.testing.assert_allclose(d.resid_norms[0], np.linalg.norm(cap.embeddings, axis=-1), rtol=1e-5)


def test_csv_and_npz_carry_the_same_numbers(data):
    _, d, _ = data
    rows = list(csv.DictReader(io.StringIO(export.to_csv(d))))
    assert [r["token"] for r in rows] == list(d.tokens)
    attn = np.array([[float(r[f"attn_L1H3_to_{j}"]) for j in range(len(rows))] for r in rows])
    np.testing.assert_allclose(attn, d.attention, rtol=1e-5, atol=1e-7)
    assert [int(r["top1_id"]) for r in rows] == d.top_ids[:, 0].tolist()
    z = np.load(io.BytesIO(export.to_npz(d)))
    np.testing.assert_array_equal(z["attention"], d.attention)
    np.testing.assert_array_equal(z["top_ids"], d.top_ids)
    np.testing.assert_array_equal(z["resid_norms"], d.resid_norms)
    assert z["tokens"].tolist() == list(d.tokens) and int(z["layer"]) == 1 and int(z["head"]) == 3


def test_capture_data_clamps_a_stale_choice(data):
    cap, _, lm = data
    d = export.capture_data(cap, layer=99, head=-1, k=2, decode=str)
    assert (d.layer, d.head) == (cap.n_layers - 1, 0)


LABELS = {k: k.upper() for k in ("title", "name", "date", "score", "lesson", "question", "answer", "result",
                                  "expected", "right", "wrong", "unanswered")}


def test_quiz_report_escapes_and_lists_every_question():
    rows = [export.ReportRow("Attention", "Is <b>x</b> & y?", "<script>alert(1)</script>", False, "64"),
            export.ReportRow("Block", "Why?", "2", True, "2"),
            export.ReportRow("Block", "How?", "", None, "3")]
    page = export.quiz_report(LABELS, rows, "1/3", "2026-12-03", "it")
    assert "<script>" not in page and "&lt;script&gt;" in page and "Is &lt;b&gt;x&lt;/b&gt; &amp; y?" in page
    assert page.count("<tr><td>") == 3
    assert "RIGHT" in page and "WRONG" in page and "UNANSWERED" in page and "1/3" in page
    assert "http" not in page  # self-contained: nothing to fetch when printed offline


@pytest.mark.parametrize("tex, plain", [
    (r"d_{model} = 576", "d_model = 576"), (r"\cos(a, b) = 24 / 25 = 0{,}96", "cos(a, b) = 24 / 25 = 0,96"),
    (r"1000 \times 400 \cdot 10^{12}", "1000 × 400 · 10¹²"), (r"2\pi \approx 6{,}28", "2π ≈ 6,28"),
    (r"F = \tfrac{8}{3}d", "F = 8/3d"), (r"\sqrt{d_{head}}", "√(d_head)"), (r"-\infty", "-∞"),
    (r"(2n)^2 = 4n^2", "(2n)² = 4n²"), (r"L \times H_{kv} \times d_{head}", "L × H_kv × d_head"),
])
def test_plain_math_reads_as_the_formula(tex, plain):
    assert export.plain_math(tex) == plain


def test_the_report_prints_every_bank_prompt_with_no_markup_left():
    """Every prompt, option and answer of every bank, as the report prints it: no $, backslash,
    brace or backtick left (the only markup the banks use)."""
    from lib.course import i18n
    from lib.course.quiz import load_bank

    lessons = [p.stem for p in (i18n.ASSETS / "quiz" / "en").glob("*.json")]
    assert lessons
    for lang in i18n.LANGS:
        for lesson in lessons:
            for q in load_bank(lang, lesson):
                for text in (q.prompt, *q.options):
                    plain = export.plain_text(text)
                    assert not set(plain) & set("$\\{}`"), (lang, lesson, q.id, text, plain)


def test_the_report_carries_the_learners_name():
    rows = [export.ReportRow("Numeri", "Quanto vale il suo `$d_{head}$`?", "64", True, "64")]
    page = export.quiz_report(LABELS, rows, "1/1", "2026-12-03", "it", name="Giulia <Rossi>")
    assert "Giulia &lt;Rossi&gt;" in page and "Quanto vale il suo d_head?" in page
    assert 'class="line"' not in page
    assert 'class="line"' in export.quiz_report(LABELS, rows, "1/1", "2026-12-03", "it")
    assert export.file_slug(" Niccolò De Santis ") == "niccolo-de-santis" and export.file_slug("<>") == ""


def test_top_k_equals_a_full_stable_sort_ties_included():
    """top_k sorts only the tokens at or above the k-th probability; the answer is the full sort's."""
    rng = np.random.default_rng(0)
    for trial in range(100):
        x = rng.normal(size=(5, 60)).astype(np.float32)
        if trial % 2 == 0:
            x[:, 3:20] = x[:, :1]  # many equal logits around the cut
        k = int(rng.integers(1, 25))
        p = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ids, probs = export.top_k(x, k)
        assert (ids == np.argsort(-p, axis=-1, kind="stable")[:, :k]).all()
        assert np.allclose(probs, np.take_along_axis(p, ids, -1))

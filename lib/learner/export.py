"""What a learner takes away: the capture of their text as CSV or NPZ, and a printable quiz report.

`capture_data` reads one capture into a few small arrays (tokens, one head's attention, the top-k
next tokens with their probabilities, the residual stream's norm at every layer); `to_csv` and
`to_npz` write them. `quiz_report` writes the final quiz as one self-contained HTML page (no
script, no external file) that prints cleanly from the browser, or saves as PDF from its print
dialog.

Deliberately left out: the full arrays (q, k, v, the residual stream: hundreds of MB at 512
tokens) and any PDF library (the browser's print dialog makes the PDF).
"""

from __future__ import annotations

import csv
import html
import io
import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lib.model.capture import Capture

LOGIT_CHUNK = 64  # positions per unembedding call: [64, V] at a time, not [T, V]


@dataclass(frozen=True)
class CaptureData:
    """The exported part of a capture. T tokens, L layers, k alternatives per position."""

    model: str
    layer: int
    head: int
    tokens: tuple[str, ...]
    token_ids: np.ndarray  # [T] int
    attention: np.ndarray  # [T, T] this head's weights, row = query position
    top_ids: np.ndarray  # [T, k] the k likeliest next tokens after each position
    top_probs: np.ndarray  # [T, k]
    top_tokens: tuple[tuple[str, ...], ...]  # [T][k] their text
    resid_norms: np.ndarray  # [L+1, T] L2 norm of the residual stream, embeddings first


def top_k(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k largest probabilities of each row of logits [n, V], likeliest first: (ids, probs).

    Example: top_k(np.log([[0.1, 0.6, 0.3]]), 2) -> ([[1, 2]], [[0.6, 0.3]])
    """
    z = logits.astype(np.float64) - logits.max(-1, keepdims=True)  # stable softmax
    p = np.exp(z)
    p /= p.sum(-1, keepdims=True)
    k = min(k, p.shape[-1])
    # The k-th largest of each row, then only the tokens at or above it sorted (a full sort of the
    # vocabulary, 49,152 or 262,144 entries a row, was most of a download's time); ties keep the
    # lower id first, as a stable sort of the whole row would.
    kth = np.partition(p, p.shape[-1] - k, axis=-1)[:, p.shape[-1] - k]
    ids = np.empty((p.shape[0], k), dtype=np.int64)
    for r in range(p.shape[0]):
        cand = np.flatnonzero(p[r] >= kth[r])
        ids[r] = cand[np.lexsort((cand, -p[r, cand]))][:k]
    return ids, np.take_along_axis(p, ids, -1)


def capture_data(cap: Capture, layer: int, head: int, k: int, decode) -> CaptureData:
    """Read the exported arrays from `cap`; `decode(id) -> str` writes a token id as text."""
    layer = min(max(int(layer), 0), cap.n_layers - 1)
    head = min(max(int(head), 0), cap.n_heads - 1)
    ids, probs = [], []
    for start in range(0, cap.n_tokens, LOGIT_CHUNK):
        i, p = top_k(cap.logits_at(slice(start, start + LOGIT_CHUNK)), k)
        ids.append(i)
        probs.append(p)
    top_ids, top_probs = np.concatenate(ids), np.concatenate(probs)
    return CaptureData(cap.model_name, layer, head, tuple(cap.tokens), np.asarray(cap.token_ids),
                       np.asarray(cap.attention(layer, head), dtype=np.float32), top_ids,
                       top_probs.astype(np.float32), tuple(tuple(decode(int(x)) for x in row) for row in top_ids),
                       np.linalg.norm(cap.resid.astype(np.float32), axis=-1))


def to_csv(d: CaptureData) -> str:
    """One row per token: position, token, id, the residual norm after each layer, the top-k next
    tokens and probabilities, then this head's attention to every earlier position."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    n_norms, k, n = d.resid_norms.shape[0], d.top_ids.shape[1], len(d.tokens)
    w.writerow(["position", "token", "token_id"] + [f"resid_norm_{l}" for l in range(n_norms)]
               + [f"top{j + 1}_{what}" for j in range(k) for what in ("token", "id", "prob")]
               + [f"attn_L{d.layer}H{d.head}_to_{j}" for j in range(n)])
    for i in range(n):
        w.writerow([i, d.tokens[i], int(d.token_ids[i])] + [f"{x:.6g}" for x in d.resid_norms[:, i]]
                   + [v for j in range(k) for v in (d.top_tokens[i][j], int(d.top_ids[i, j]), f"{d.top_probs[i, j]:.6g}")]
                   + [f"{x:.6g}" for x in d.attention[i]])
    return out.getvalue()


def to_npz(d: CaptureData) -> bytes:
    """The same arrays, full precision, for numpy: `np.load(io.BytesIO(data))["attention"]`."""
    buf = io.BytesIO()
    np.savez_compressed(buf, model=np.array(d.model), layer=np.array(d.layer), head=np.array(d.head),
                        tokens=np.array(d.tokens, dtype=str), token_ids=d.token_ids, attention=d.attention,
                        top_ids=d.top_ids, top_probs=d.top_probs,
                        top_tokens=np.array(d.top_tokens, dtype=str).reshape(d.top_ids.shape),
                        resid_norms=d.resid_norms)
    return buf.getvalue()


# LaTeX as the quiz banks write it, for paper: commands -> the character they draw.
_TEX_SYMBOLS = {"times": "×", "cdot": "·", "approx": "≈", "theta": "θ", "pi": "π", "infty": "∞",
                "epsilon": "ε", "alpha": "α", "beta": "β", "sigma": "σ", "lVert": "‖", "rVert": "‖", "|": "‖",
                "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "to": "→", "ln": "ln", "cos": "cos",
                "sin": "sin", "log": "log", "exp": "exp", "max": "max", "min": "min", "sum": "Σ", ",": " ",
                ";": " ", "quad": " ", "\\": " ", "ldots": "…", "dots": "…", "in": "∈", "pm": "±"}
_SUPERSCRIPT = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")
_GROUP = r"\{([^{}]*)\}"


def plain_math(tex: str) -> str:
    """A LaTeX formula of the quiz banks as plain text that prints as it reads.

    Example: plain_math(r"d_{model} = 576") -> "d_model = 576"
    Example: plain_math(r"2 \times 10^{12} \approx 1{,}5") -> "2 × 10¹² ≈ 1,5"
    Example: plain_math(r"\tfrac{8}{3}d") -> "8/3d"
    """
    s = tex.replace("{,}", ",")
    for _ in range(4):  # nested groups, innermost first
        s = re.sub(r"\\(?:t|d)?frac\s*" + _GROUP + r"\s*" + _GROUP, r"\1/\2", s)
        s = re.sub(r"\\sqrt\s*" + _GROUP, lambda m: "√" + (m.group(1) if len(m.group(1)) == 1 else f"({m.group(1)})"), s)
        s = re.sub(r"\\(?:mathrm|text|mathbf|operatorname|mathit)\s*" + _GROUP, r"\1", s)
        s = re.sub(r"\^" + _GROUP, lambda m: _sup(m.group(1)), s)
        s = re.sub(r"_" + _GROUP, r"_\1", s)
    s = re.sub(r"\^([0-9n])", lambda m: _sup(m.group(1)), s)
    s = re.sub(r"\\([A-Za-z]+|\\|[|,;])", lambda m: _TEX_SYMBOLS.get(m.group(1), m.group(1)), s)
    return re.sub(r"[ ]{2,}", " ", s.replace("{", "").replace("}", "")).strip()


def _sup(text: str) -> str:
    """Superscript digits when every character has one (10^{12} -> 10¹²), else ^(...)."""
    return text.translate(_SUPERSCRIPT) if text and all(c in "0123456789+-n" for c in text) else f"^({text})"


def plain_text(markdown: str) -> str:
    """Markdown with inline LaTeX (a quiz prompt, option or explanation) as plain text for paper:
    formulas through `plain_math`, code and emphasis marks dropped.

    Example: plain_text("Quanto vale `$\\cos(a, b)$`? Il token `Ġgatto` è **raro**.")
             -> "Quanto vale cos(a, b)? Il token Ġgatto è raro."
    """
    s = re.sub(r"\$\$(.+?)\$\$", lambda m: plain_math(m.group(1)), markdown, flags=re.S)
    s = re.sub(r"(?<!\\)\$(.+?)(?<!\\)\$", lambda m: plain_math(m.group(1)), s)
    s = re.sub(r"`+([^`]*)`+", r"\1", s)
    s = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), s)
    s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", s)
    return s.replace("\\$", "$")


def file_slug(name: str, limit: int = 40) -> str:
    """A person's name as a piece of a file name: letters and digits, accents dropped, hyphens.

    Example: file_slug(" Niccolò De Santis ") -> "niccolo-de-santis"
    """
    flat = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", flat).strip("-")[:limit].strip("-")


@dataclass(frozen=True)
class ReportRow:
    """One question of the report: where it comes from, what was answered, what was right."""

    lesson: str
    prompt: str
    answer: str  # the learner's answer as text ("" if not answered)
    correct: bool | None  # None: not answered
    expected: str


_CSS = """body{font-family:system-ui,sans-serif;max-width:52em;margin:2em auto;color:#222}
h1{font-size:1.5em}table{border-collapse:collapse;width:100%}td,th{border:1px solid #bbb;padding:.3em .5em;
vertical-align:top;text-align:left}.ok{color:#1b7a2a}.no{color:#b3261e}.line{border-bottom:1px solid #555;
display:inline-block;min-width:18em}@media print{body{margin:0}}"""


def quiz_report(labels: dict[str, str], rows: Sequence[ReportRow], score: str, when: str, lang: str,
                name: str = "") -> str:
    """A printable HTML page of the final quiz. `labels`: title, name, date, score, lesson,
    question, answer, result, expected, right, wrong, unanswered (already translated). `name`:
    the learner's name, or "" for a blank line to write it on. Prompts, answers and expected
    answers are written as plain text (`plain_text`): paper cannot render Markdown or LaTeX.

    Every text is escaped: a prompt or an answer can never become markup.
    """
    e = html.escape
    rows = [ReportRow(r.lesson, plain_text(r.prompt), plain_text(r.answer), r.correct, plain_text(r.expected))
            for r in rows]
    who = f"<strong>{e(name.strip())}</strong>" if name.strip() else "<span class=\"line\"></span>"
    cells = []
    for i, r in enumerate(rows, start=1):
        verdict = (labels["unanswered"], "") if r.correct is None else \
            (labels["right"], "ok") if r.correct else (labels["wrong"], "no")
        cells.append(f"<tr><td>{i}</td><td>{e(r.lesson)}</td><td>{e(r.prompt)}</td><td>{e(r.answer)}</td>"
                     f"<td class=\"{verdict[1]}\">{e(verdict[0])}</td><td>{e(r.expected)}</td></tr>")
    head = "".join(f"<th>{e(labels[x])}</th>" for x in ("lesson", "question", "answer", "result", "expected"))
    return (f"<!doctype html>\n<html lang=\"{e(lang)}\"><head><meta charset=\"utf-8\"><title>{e(labels['title'])}"
            f"</title><style>{_CSS}</style></head><body>\n<h1>{e(labels['title'])}</h1>\n"
            f"<p>{e(labels['name'])}: {who}</p>\n<p>{e(labels['date'])}: {e(when)}</p>\n"
            f"<p><strong>{e(labels['score'])}: {e(score)}</strong></p>\n"
            f"<table><thead><tr><th>#</th>{head}</tr></thead><tbody>\n" + "\n".join(cells)
            + "\n</tbody></table>\n</body></html>\n")

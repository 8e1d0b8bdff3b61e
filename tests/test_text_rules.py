"""Rules every learner-facing text keeps, checked on every rendered page (both languages, both
built-in models) and on every quiz bank:

- the glossary's pointer for a term is the first lesson whose shown text uses the term;
- no code identifier (a Python class, a module path, a label key, a config field) reaches a learner;
- one number format per language: thousands grouped from 10,000 up (1,024 is written 1024; 32,768
  and 32.768 by language), the decimal mark by language, as lib.course.quiz.format_number writes them;
- a count of layers, heads or KV heads that a sentence gives for "this model" is the loaded model's.

The pages are read from the walks of tests/renders.py (one AppTest session per language and model,
shared with the other files that only read what a page shows). A line shown on every lesson page
(the sidebar: progress, downloads, the model's name) belongs to no lesson and is set aside.
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from lib.model.models import DEFAULT_MODEL, GEMMA_MODEL
from tests.renders import PAGES, TEXT, walk

MODELS = (DEFAULT_MODEL, GEMMA_MODEL)
BOTH = [(lang, model) for lang in i18n.LANGS for model in MODELS]
LESSON_PAGES = PAGES[:8]  # the eight lessons, in the course's order


def _lesson_ids() -> list[str]:
    from ui.shell import nav

    return [x.id for x in nav.LESSONS]


def _pages(lang: str, model: str, whole: bool = False) -> dict[str, list[str]]:
    """page -> the lines of prose it shows, without the lines every lesson page shows (the sidebar).

    A page that raised is left out (tests/test_pages.py reports it), unless `whole` asks for every
    page."""
    pages = walk(lang, model, TEXT[lang])
    if whole:
        for page, render in pages.items():
            assert not render.exception, (page, render.exception)
    common = set.intersection(*(set(pages[p].prose.splitlines()) for p in LESSON_PAGES))
    return {p: [x for x in r.prose.splitlines() if x not in common] for p, r in pages.items() if not r.exception}


def _bank_texts(lang: str) -> dict[str, list[str]]:
    """lesson -> every prompt, option and explanation of its quiz bank."""
    out = {}
    for lesson in i18n.quiz_ids(lang):
        texts = []
        for q in load_bank(lang, lesson):
            texts += [q.prompt, q.explanation or "", *(q.options or [])]
        out[lesson] = [str(x) for x in texts]
    return out


# ------------------------------------------------------------------------------ the glossary's pointer

# How each glossary term is written in the running text (regular expressions, English then Italian).
# A term is "used" by a page when one of its lines matches.
TERM_FORMS: dict[str, tuple[str, str]] = {
    "token": (r"\btokens?\b", r"\btoken\b"),
    "tokenizer": (r"\btokeni[sz]ers?\b", r"\btokenizzator[ei]\b"),
    "merge": (r"\bmerges?\b", r"\bfusion[ei]\b"),
    "embedding": (r"\bembeddings?\b", r"\bembedding\b"),
    "cosine": (r"\bcosine similarity\b", r"\bsimilarità del coseno\b"),
    "position": (r"\bRoPE\b", r"\bRoPE\b"),
    "attention": (r"\battention\b", r"\battenzione\b"),
    "head": (r"\bheads?\b", r"\btest[ae]\b"),
    "qkv": (r"\bquer(?:y|ies)\b", r"\bquery\b"),
    "softmax": (r"\bsoftmax\b", r"\bsoftmax\b"),
    "mask": (r"\bcausal mask\b", r"\bmaschera causale\b"),
    "gqa": (r"\bGQA\b", r"\bGQA\b"),
    "layer": (r"\blayers?\b", r"\bstrat[oi]\b"),
    "d_model": (r"\bd_model\b|d_\{model\}", r"\bd_model\b|d_\{model\}"),
    "parameters": (r"\bparameters?\b", r"\bparametr[oi]\b"),
    "residual": (r"\bresidual stream\b", r"\bflusso residuo\b"),
    "mlp": (r"\bMLP\b", r"\bMLP\b"),
    "norm": (r"\bnormali[sz]ations?\b|\bRMSNorm\b", r"\bnormalizzazion[ei]\b|\bRMSNorm\b"),
    "logit": (r"\blogits?\b", r"\blogit\b"),
    "output": (r"\boutput matrix\b", r"\bmatrice di uscita\b"),
    "temperature": (r"\btemperature\b", r"\btemperatura\b"),
    "topk": (r"\btop-k\b|\btop-p\b", r"\btop-k\b|\btop-p\b"),
    "cross_entropy": (r"\bcross-entropy\b|\bperplexity\b", r"\bentropia incrociata\b|\bperplessità\b"),
    "kvcache": (r"\bKV cache\b|\bkey/value cache\b", r"\bcache KV\b|\bcache di chiavi e valori\b"),
    "window": (r"\bsliding window\b", r"\bfinestra scorrevole\b"),
}
CASED = {"gqa", "mlp", "position"}  # acronyms: "mlp" or "rope" in lower case is another word


def first_lessons(lang: str, model: str) -> dict[str, str]:
    """term -> the id of the first lesson whose shown prose uses it."""
    pages, ids = _pages(lang, model, whole=True), _lesson_ids()
    out = {}
    for term, forms in TERM_FORMS.items():
        rx = re.compile(forms[lang == "it"], 0 if term in CASED else re.IGNORECASE)
        out[term] = next((ids[i] for i, p in enumerate(LESSON_PAGES) if any(rx.search(x) for x in pages[p])), None)
    return out


def test_every_glossary_term_has_its_forms():
    from lib.course.learner_glossary import entries

    for lang in i18n.LANGS:
        assert {e.id for e in entries(i18n.lesson(lang, "glossary"))} == set(TERM_FORMS)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_glossary_points_to_the_first_lesson_that_uses_each_term(lang):
    """The pointer of each term is derived here from the pages, for both models (the glossary does
    not depend on the model: where the two disagree it gives the earlier lesson)."""
    ids = _lesson_ids()
    derived = [first_lessons(lang, model) for model in MODELS]
    sections = i18n.lesson(lang, "glossary")
    wrong = {}
    for term in TERM_FORMS:
        found = [d[term] for d in derived if d[term]]
        assert found, f"no lesson uses {term!r}"
        first = min(found, key=ids.index)
        typed = re.findall(r"\{lesson_(\w+)\}", sections[term])
        if typed != [first]:
            wrong[term] = (typed, first)
    assert not wrong, f"glossary pointers (typed, derived): {wrong}"


# ------------------------------------------------------------------------------ no code identifiers

# A name of the code: a dotted module path or label key, a snake_case name, a CamelCase class, a
# file of the code. Each pattern is applied outside formulas ($...$) and web addresses; inside code
# spans too (`...` shows a token or a tokenizer's piece as code on purpose, never a module's name).
CODE = [
    re.compile(r"\b(?:lib|ui|pages|tests|scripts|torch|transformers|numpy|streamlit)\.[a-z_]+"),
    re.compile(r"\b[a-z]+_[a-z_]*[a-z]\b"),  # snake_case (label keys, config fields, functions)
    re.compile(r"\b[a-z]+(?:\.[a-z_]+){2,}\b"),  # a.b.c: a label key
    re.compile(r"\b(?:[A-Z][a-z]+){2,}(?:Model|Config|Attention|Layer|Tokenizer|Cache|Error|ForCausalLM)\b"),
    re.compile(r"\b\w+\.py\b"),
]
# Written words that look like code and are not: units and names of things outside the code.
CODE_WORDS = {"d_model", "d_head", "top_k", "top_p"}


def _outside_code(text: str, spans: bool = True) -> str:
    """`text` without formulas and web addresses, and without code spans unless `spans` is False."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)
    if spans:
        text = re.sub(r"```.*?```|`[^`\n]*`", " ", text, flags=re.S)
    return re.sub(r"https?://\S+", " ", text)


def code_names(text: str) -> set[str]:
    found = set()
    for pattern in CODE:
        found |= {m.group(0) for m in pattern.finditer(_outside_code(text, spans=False).replace("`", " "))}
    return found - CODE_WORDS


@pytest.mark.parametrize("lang, model", BOTH)
def test_no_code_identifier_on_any_page(lang, model):
    found = {p: sorted(code_names("\n".join(lines))) for p, lines in _pages(lang, model).items()}
    assert not {p: f for p, f in found.items() if f}, found


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_no_code_identifier_in_the_quiz_banks(lang):
    found = {lesson: sorted(code_names("\n".join(texts))) for lesson, texts in _bank_texts(lang).items()}
    assert not {k: v for k, v in found.items() if v}, found


# ------------------------------------------------------------------------------ one number format

# Numbers written another way than lib.course.quiz.format_number writes them in the language. A dot in
# English and a comma in Italian are always decimal marks, so "4.024" (en) and "3,949" (it) are
# decimals; what cannot be is a four-digit number grouped, a long one not grouped, and the other
# language's decimal mark.
WRONG_FORMAT = {
    "en": [
        re.compile(r"(?<![\d.,])\d,\d{3}(?![\d,])(?!\.\d)"),  # 1,024: four digits are not grouped
        re.compile(r"(?<![\d.,\w])\d{5,}(?![\d,.]|\w)"),  # 32768: five or more digits are grouped
        re.compile(r"(?<![\d.,\w])\d+,\d{1,2}(?![\d,])"),  # 0,5: the Italian decimal comma
    ],
    "it": [
        re.compile(r"(?<![\d.,])\d\.\d{3}(?![\d.])(?!,\d)"),  # 1.024, or 1.024 meant as a decimal
        re.compile(r"(?<![\d.,\w])\d{5,}(?![\d,.]|\w)"),  # 32768
        re.compile(r"(?<![\d.,\w])\d+\.\d{1,2}(?![\d.])"),  # 0.5: the English decimal point
    ],
}
# Written forms that are not quantities: versions, model names, dates, years, ids of tokens, and
# scientific notation (the page writes a tiny difference as Python does, 1.7e-07, in both languages).
NOT_QUANTITIES = re.compile(
    r"\b(?:GPT-\d(?:\.\d)?|Llama[- ]?\d(?:\.\d)?|Qwen\d?(?:\.\d)?|Gemma ?\d(?:\.\d)?|Mistral|bertviz \S+|"
    r"v\d+(?:\.\d+)+|\d{4}-\d{2}-\d{2}|(?:19|20)\d{2}|ids? \d+|\d+(?:\.\d+)?e[-+]\d+)\b")


def number_format_slips(text: str, lang: str) -> set[str]:
    text = NOT_QUANTITIES.sub(" ", _outside_code(text))
    return {m.group(0) for pattern in WRONG_FORMAT[lang] for m in pattern.finditer(text)}


@pytest.mark.parametrize("lang, model", BOTH)
def test_one_number_format_on_every_page(lang, model):
    pages = walk(lang, model, TEXT[lang])
    shown = {p: "\n".join([r.prose, *r.metrics.values()]) for p, r in pages.items() if not r.exception}
    found = {p: sorted(number_format_slips(text, lang)) for p, text in shown.items()}
    assert not {p: f for p, f in found.items() if f}, found


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_one_number_format_in_the_quiz_banks(lang):
    found = {lesson: sorted(number_format_slips("\n".join(texts), lang)) for lesson, texts in _bank_texts(lang).items()}
    assert not {k: v for k, v in found.items() if v}, found


# ------------------------------------------------------------------------------ counts from the model

THIS_MODEL = {"en": re.compile(r"\b(this model|the model loaded|the loaded model|the live model)\b", re.I),
              "it": re.compile(r"\b(questo modello|il modello caricato|modello in uso)\b", re.I)}
COUNTS = {"en": re.compile(r"\b(\d[\d,]*) (layers|heads|KV heads|query heads)\b"),
          "it": re.compile(r"\b(\d[\d.]*) (strati|teste|teste KV|teste di query)\b")}


@pytest.mark.parametrize("lang, model", BOTH)
def test_counts_said_of_this_model_are_the_models(lang, model):
    """A sentence about this model that counts its layers or heads gives the loaded model's count
    (or a count it computes from them: local and global layers, the heads of all layers)."""
    from ui.shell.cache import get_model

    info = get_model(model).info
    n_local = sum(x == "sliding_attention" for x in info.layer_types)
    allowed = {info.n_layers, info.n_heads, info.n_kv_heads, n_local, info.n_layers - n_local,
               info.n_layers * info.n_heads, info.n_heads // max(info.n_kv_heads, 1)}
    wrong = []
    for page, lines in _pages(lang, model).items():
        for line in lines:
            for sentence in re.split(r"(?<=[.;:])\s", line):
                if not THIS_MODEL[lang].search(sentence):
                    continue
                for m in COUNTS[lang].finditer(sentence):
                    if int(re.sub(r"[.,]", "", m.group(1))) not in allowed:
                        wrong.append((page, m.group(0), sentence[:160]))
    assert not wrong, wrong

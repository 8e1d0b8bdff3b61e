"""One Italian word per concept: every it/ text follows assets/glossary_it.json.

The texts are the Italian lessons, quiz banks and UI labels. A rejected variant is looked for as
a whole word, case-insensitively, outside `code`, $formulas$ and {placeholders}, which may name
things in English (`lm_head`, $d_{head}$, {n_heads}). A second check keeps Italian articles away
from filled-in numbers: "il {share}%" would render "il 1,9%" where Italian wants "l'1,9%".
"""

from __future__ import annotations

import json
import re

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank

GLOSSARY = json.loads((i18n.ASSETS / "glossary_it.json").read_text(encoding="utf-8"))["terms"]
_PROTECTED = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\{[A-Za-z_][A-Za-z0-9_]*\}", re.S)
_LETTER = r"A-Za-zÀ-ÖØ-öø-ÿ_"


def italian_texts() -> dict[str, str]:
    """Every Italian text, by where it lives: lesson sections, quiz fields, UI labels."""
    texts: dict[str, str] = {}
    for lesson_id in i18n.lesson_ids("it"):
        for section, text in i18n.lesson("it", lesson_id).items():
            texts[f"lessons/it/{lesson_id}.md#{section}"] = text
    for lesson_id in i18n.quiz_ids("it"):
        for q in load_bank("it", lesson_id):
            for i, text in enumerate((q.prompt, q.explanation, q.unit, *q.options)):
                texts[f"quiz/it/{lesson_id}.json#{q.id}.{i}"] = text
    for label, text in i18n.ui("it").items():
        texts[f"ui/it#{label}"] = text
    return texts


def prose(text: str, allow: list[str]) -> str:
    text = _PROTECTED.sub(" ", text)
    for phrase in allow:
        text = text.replace(phrase, " ")
    return text


def test_glossary_is_well_formed() -> None:
    seen: set[str] = set()
    for entry in GLOSSARY:
        assert set(entry) == {"term", "chosen", "rejected", "allow"}, entry
        assert entry["term"] not in seen and entry["chosen"].strip() and entry["rejected"]
        seen.add(entry["term"])


@pytest.mark.parametrize("entry", GLOSSARY, ids=[e["term"] for e in GLOSSARY])
def test_no_italian_text_uses_a_rejected_variant(entry: dict) -> None:
    patterns = [re.compile(rf"(?<![{_LETTER}]){re.escape(v)}(?![{_LETTER}])", re.I) for v in entry["rejected"]]
    found = [f"{where}: {m.group(0)!r}" for where, text in italian_texts().items()
             for p in patterns for m in p.finditer(prose(text, entry["allow"]))]
    assert not found, f"use «{entry['chosen']}»:\n" + "\n".join(found)


def test_the_check_catches_a_rejected_variant() -> None:
    layer = next(e for e in GLOSSARY if e["term"] == "layer")
    pattern = re.compile(rf"(?<![{_LETTER}])layer(?![{_LETTER}])", re.I)
    assert pattern.search(prose("Ogni layer ha {n_layers} teste", layer["allow"]))
    assert not pattern.search(prose("Un *multi-layer perceptron*, `layer`, {layer}, $L_{layer}$", layer["allow"]))


# Placeholders that are filled with words (a model's name, a token, an activation), not numbers.
WORD_VALUES = {"act", "norm", "pos", "attn_now", "model_name", "name", "model", "token", "word", "top", "final",
               "worst", "vector", "which", "pattern", "module", "sentence", "a", "b"}
# The feminine plural (le, delle, alle...) never changes before a number: "le 8 teste" is right.
_ARTICLE = re.compile(r"(?<![A-Za-zÀ-ÿ'])(il|lo|la|l'|i|gli|un|uno|una|un'|del|dello|della|dell'|dei|degli|al|allo|"
                      r"alla|all'|ai|agli|dal|dallo|dalla|dall'|dai|dagli|nel|nello|nella|nell'|nei|negli|"
                      r"sul|sullo|sulla|sull'|sui|sugli)\s*\**\{([a-z_]+)\}", re.I)


def test_no_italian_article_before_a_filled_in_number() -> None:
    found = [f"{where}: {m.group(0)!r}" for where, text in italian_texts().items()
             for m in _ARTICLE.finditer(text) if m.group(2) not in WORD_VALUES]
    assert not found, "rephrase so no article depends on the number (e.g. 'pari a {x}'):\n" + "\n".join(found)


def test_the_glossary_covers_the_terms_the_course_settled() -> None:
    """Terms that once had two Italian names each: the glossary must keep deciding them."""
    terms = {e["term"] for e in GLOSSARY}
    for term in ("grouped-query attention (GQA)", "normalisation layer (vs a vector's length)", "perplexity",
                 "cross-entropy", "cross-attention"):
        assert term in terms, term

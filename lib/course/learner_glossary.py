"""The learners' glossary: the course's words, each with a short definition and its lesson.

The entries are the sections of `assets/lessons/<lang>/glossary.md` (every section but `intro`),
each opening with its term in bold: `**Token**: a piece of text...`. This module orders them by
term the way a reader looks them up (letters, not accents or capitals) and finds those that match
a search. What it leaves out: the writers' glossary (`assets/glossary_it.json`, which fixes one
Italian word per concept for the texts and is enforced by tests) and any streamlit call.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_TERM = re.compile(r"^\*\*(?P<term>[^*]+)\*\*")
INTRO = "intro"


@dataclass(frozen=True)
class Entry:
    id: str  # the section's id, the same in every language
    term: str  # the bold words the section opens with
    text: str  # the whole section (Markdown, placeholders not filled)


def folded(text: str) -> str:
    """`text` for comparing and sorting: lower case, accents taken off.

    Example: folded("Perplessità") -> "perplessita"
    """
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def entries(sections: dict[str, str]) -> list[Entry]:
    """The glossary's entries from its sections, ordered by term (accents and capitals aside).

    Example: [e.term for e in entries({"intro": "...", "b": "**Zero**: x", "a": "**àncora**: y"})]
             -> ["àncora", "Zero"]
    """
    out = []
    for sid, text in sections.items():
        if sid == INTRO:
            continue
        match = _TERM.match(text.strip())
        if match is None:
            raise ValueError(f"glossary section {sid!r} must open with its term in bold")
        out.append(Entry(sid, match.group("term").strip(), text))
    return sorted(out, key=lambda e: folded(e.term))


def search(found: list[Entry], query: str) -> list[Entry]:
    """The entries whose term or definition holds every word of `query` (accents and capitals
    aside); all of them for an empty query.

    Example: [e.id for e in search(entries({"a": "**Token**: un pezzo", "b": "**Strato**: x"}), "PEZZO")]
             -> ["a"]
    """
    words = folded(query).split()
    return [e for e in found if all(w in folded(e.text) for w in words)]

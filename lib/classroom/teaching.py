"""What a teacher needs before a class: time per lesson, machines per class, links to hand out.

`lesson_minutes` estimates a lesson's time from the words its page shows with the default model
(counted from the rendered page by a test, kept in `assets/lessons/shown_words.json`), a minute per
question and a few minutes at the live controls. `sizing` turns a class size into machines, cores,
replicas and memory, derived from one named measurement (`CLASS_RUN`: the latest class run of the
load driver written up in docs/performance.md; a test checks it is still the latest there) and the
memory of a replica with both built-in models (`BOTH_MODELS_RUN`). `app_root` and `class_link` build
the links a teacher copies, from the address the teacher's own browser used.

Deliberately left out: anything Streamlit (pages/98_teachers.py draws the page) and deployment
itself (deploy/ and docs/deploy.md, where the reservations of a cluster are set).
"""

from __future__ import annotations

import json
import math
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

WORDS_PER_MINUTE = 150  # reading to learn, not skimming
MINUTES_PER_QUESTION = 1.0
MINUTES_LIVE = 5  # the sliders, the text box, the charts
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", ""})
SHOWN_WORDS = Path(__file__).resolve().parents[2] / "assets" / "lessons" / "shown_words.json"


@dataclass(frozen=True)
class Run:
    """One measurement the sizing rule is derived from, with where it is written up."""

    when: str  # the date and the UTC hours of the run, as its write-up gives them
    script: str  # the command that measured it
    doc: str  # the file that reports it
    learners: int  # learners at a reading pace (5-15 s between inputs)
    cores: int  # of the one machine
    replicas: int
    peak_gb: float  # resident memory of all replicas together, at its peak


# The latest class run (docs/performance.md, "Latest"): thirty learners at a reading pace on one 2-core
# machine with two replicas behind nginx, every action's p95 within its goal, 0 failures; peak RSS of
# the two replicas and their lens processes 3.40-3.41 GB in the three runs (the highest here).
CLASS_RUN = Run(when="2026-12-08, 00:13-00:21 UTC", script="scripts/load_driver.py --learners 30 --think 5 15 "
                "--replicas 2 --nginx", doc="docs/performance.md", learners=30, cores=2, replicas=2, peak_gb=3.41)
# One replica with both built-in models resident (docs/performance.md, "Memory").
BOTH_MODELS_RUN = Run(when="2026-12-08, 00:26 UTC", script="scripts/bench_memory.py --both", doc="docs/performance.md",
                      learners=0, cores=2, replicas=1, peak_gb=3.13)


def word_count(markdown: str) -> int:
    """Words a learner reads in a text (comments and formulas left out).

    Example: word_count("Il gatto $x^2$ dorme. <!-- section: a -->") -> 3
    """
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    return len(re.findall(r"\w+", text))


def shown_words(lang: str) -> dict[str, int]:
    """Words each page shows with the default model, by page id (lessons, "compare", "final"),
    counted from the rendered pages (tests/test_teaching_counts.py writes and checks them).

    Example: shown_words("it")["numbers"] -> about 1,700
    """
    return dict(json.loads(SHOWN_WORDS.read_text(encoding="utf-8"))[lang])


def lesson_minutes(words: int, questions: int, live: float = MINUTES_LIVE) -> int:
    """Suggested minutes for a page: reading, the quiz and the live part, up to a multiple of 5
    (`live` 0 for a page with no live controls, such as the final quiz).

    Example: lesson_minutes(1500, 10) -> 25   (10 min reading + 10 min quiz + 5 min live)
    """
    raw = words / WORDS_PER_MINUTE + questions * MINUTES_PER_QUESTION + live
    return int(5 * math.ceil(raw / 5))


@dataclass(frozen=True)
class Sizing:
    learners: int
    machines: int  # machines like the measured one
    cores: int
    replicas: int
    memory_gb: float  # SmolLM2 only: the measured class peak per machine
    memory_gb_gemma: float  # when learners may switch to Gemma 3 270M: both models in every replica


def learners_per_machine(run: Run = CLASS_RUN) -> int:
    """Learners one machine like the measured one held at a reading pace.

    Example: learners_per_machine() -> 30
    """
    return run.learners


def gb_per_replica(run: Run = CLASS_RUN) -> float:
    """A replica's share of a run's peak memory.

    Example: gb_per_replica() -> 1.705
    """
    return run.peak_gb / run.replicas


def sizing(learners: int, run: Run = CLASS_RUN, both: Run = BOTH_MODELS_RUN) -> Sizing:
    """Machines like the measured one (its cores and replicas each) for a class of `learners`.

    Example: sizing(30) -> Sizing(learners=30, machines=1, cores=2, replicas=2, memory_gb=3.4, memory_gb_gemma=6.3)
    """
    if learners < 1:
        raise ValueError("a class has at least one learner")
    machines = math.ceil(learners / run.learners)
    replicas = machines * run.replicas
    gemma = replicas * max(both.peak_gb / both.replicas, gb_per_replica(run))
    return Sizing(learners, machines, machines * run.cores, replicas, round(machines * run.peak_gb, 1), round(gemma, 1))


def app_root(url: str, page_paths: set[str]) -> str:
    """The app's root address from the address of one of its pages (as the browser shows it).

    Example: app_root("http://10.0.0.5:8501/teachers?lang=it", {"teachers"}) -> "http://10.0.0.5:8501"
    Example: app_root("https://school.example/corso/final", {"final"}) -> "https://school.example/corso"
    """
    parts = urllib.parse.urlsplit(url or "")
    path = parts.path.rstrip("/")
    head, _, last = path.rpartition("/")
    if last in page_paths:
        path = head
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def is_local(root: str) -> bool:
    """True when `root` only works on this computer (localhost), not for a class.

    Example: is_local("http://localhost:8501") -> True
    """
    return (urllib.parse.urlsplit(root).hostname or "") in LOCAL_HOSTS


def class_link(root: str, page: str, lang: str, **params: object) -> str:
    """The link to one page of the course: `page` "" for lesson 1 (the app's root).

    Example: class_link("http://10.0.0.5:8501", "final", "it", seed=42) -> "http://10.0.0.5:8501/final?lang=it&seed=42"
    """
    query = urllib.parse.urlencode({"lang": lang, **{k: str(v) for k, v in params.items()}})
    return f"{root}/{page}?{query}"

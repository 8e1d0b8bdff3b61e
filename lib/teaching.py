"""What a teacher needs before a class: time per lesson, machines per class, links to hand out.

`lesson_minutes` estimates a lesson's time from its own prose and quiz (reading at a study pace,
a minute per question, a few minutes at the live controls). `sizing` turns a class size into
cores, replicas and memory from the load driver's measurements (README, "Learners per replica,
measured" and "Memory of one replica, measured"). `app_root` and `class_link` build the links a
teacher copies, from the address the teacher's own browser used.

Deliberately left out: anything Streamlit (ui/teachers_view.py draws the page) and deployment
itself (deploy/ and the README).
"""

from __future__ import annotations

import math
import re
import urllib.parse
from dataclasses import dataclass

WORDS_PER_MINUTE = 150  # reading to learn, not skimming
MINUTES_PER_QUESTION = 1.0
MINUTES_LIVE = 5  # the sliders, the text box, the charts

# Measured by scripts/load_driver.py (README, "Learners per replica, measured", 2026-12-03): ten
# learners at a reading pace on one 2-core machine with two replicas kept slider moves and quiz
# answers under 2 s at p95; a third replica on two cores added nothing. Hence one replica per
# core and five learners per core. Memory: one replica peaked at 1.59 GB with ten learners on
# SmolLM2; with Gemma 3 270M also loaded, a replica peaked at 3.10 GB (scripts/bench_memory.py --both).
LEARNERS_PER_CORE = 5
GB_PER_REPLICA = 1.6
GB_PER_REPLICA_GEMMA = 3.1
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", ""})


def word_count(markdown: str) -> int:
    """Words a learner reads in a lesson's Markdown (comments and formulas left out).

    Example: word_count("Il gatto $x^2$ dorme. <!-- section: a -->") -> 3
    """
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    return len(re.findall(r"\w+", text))


def lesson_minutes(words: int, questions: int) -> int:
    """Suggested minutes for a lesson: reading, the quiz and the live part, up to a multiple of 5.

    Example: lesson_minutes(1500, 10) -> 25   (10 min reading + 10 min quiz + 5 min live)
    """
    raw = words / WORDS_PER_MINUTE + questions * MINUTES_PER_QUESTION + MINUTES_LIVE
    return int(5 * math.ceil(raw / 5))


@dataclass(frozen=True)
class Sizing:
    learners: int
    cores: int
    replicas: int
    memory_gb: float  # SmolLM2 only
    memory_gb_gemma: float  # when learners may switch to Gemma 3 270M


def sizing(learners: int) -> Sizing:
    """Cores, replicas (one per core) and memory for a class of `learners`, at a reading pace.

    Example: sizing(30) -> Sizing(learners=30, cores=6, replicas=6, memory_gb=9.6, memory_gb_gemma=18.6)
    """
    if learners < 1:
        raise ValueError("a class has at least one learner")
    cores = max(2, 2 * math.ceil(learners / (2 * LEARNERS_PER_CORE)))  # machines come in pairs of cores
    replicas = cores
    return Sizing(learners, cores, replicas, round(replicas * GB_PER_REPLICA, 1), round(replicas * GB_PER_REPLICA_GEMMA, 1))


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

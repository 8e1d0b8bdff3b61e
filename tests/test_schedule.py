"""The plan that shares the suite among xdist's workers (tests/schedule.py): the groups match the
files that really share a walk, and xdist's own scheduler, driven by fake workers, sends every
test once, keeps a group on one worker and starts with the longest unit."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from tests import schedule

TESTS = Path(__file__).resolve().parent


def _files(folder: Path, pattern: str) -> set[str]:
    """The test files under `folder` whose source matches `pattern`, as pytest names them."""
    return {f"tests/{p.relative_to(TESTS).as_posix()}" for p in folder.glob("test_*.py")
            if re.search(pattern, p.read_text())}


def test_every_file_reading_a_shared_walk_is_in_its_group():
    walkers = _files(TESTS / "e2e", r"\bitalian_walk\b")
    renders = _files(TESTS, r"from tests\.renders import")
    # `make image` (tests/image_build.py): the files whose fixtures take the `image` fixture (tests/conftest.py)
    builders = _files(TESTS, r"def \w+\((?:\w+, )*[i]mage[,)]")
    assert walkers and renders and len(builders) >= 2
    assert {f: schedule.GROUPS.get(f) for f in walkers} == dict.fromkeys(walkers, "italian walk")
    assert {f: schedule.GROUPS.get(f) for f in renders} == dict.fromkeys(renders, "page renders")
    assert {f: schedule.GROUPS.get(f) for f in builders} == dict.fromkeys(builders, "the image")
    # And no file is grouped that no longer reads the walk or builds the image.
    assert set(schedule.GROUPS) == walkers | renders | builders


def test_every_timed_unit_still_exists():
    groups = set(schedule.GROUPS.values())
    missing = [u for u in schedule.SECONDS if u not in groups and not (TESTS.parent / u).is_file()]
    assert not missing


def test_units_are_files_or_groups():
    assert schedule.unit_of("tests/test_bpe.py::test_x[a::b]") == "tests/test_bpe.py"
    assert schedule.unit_of("tests/test_pages.py::test_every_page_runs_in_both_languages[en-p]") == "page renders"
    assert schedule.unit_of("tests/e2e/test_chart_layout.py::test_y") == "italian walk"


def test_order_is_longest_first_with_browser_and_other_units_interleaved():
    units = {"tests/e2e/test_a.py": ["tests/e2e/test_a.py::x", "tests/e2e/test_a.py::y"],
             "tests/e2e/test_b.py": ["tests/e2e/test_b.py::z"],
             "tests/test_c.py": ["tests/test_c.py::w"]}
    assert schedule.order(units) == ["tests/e2e/test_a.py", "tests/test_c.py", "tests/e2e/test_b.py"]
    # Known units by their measured seconds: the italian walk before a short browser file.
    units = {"tests/e2e/test_z.py": ["tests/e2e/test_z.py::t"],
             "italian walk": ["tests/e2e/test_accessibility.py::t"]}
    assert schedule.order(units) == ["italian walk", "tests/e2e/test_z.py"]


class _Worker:
    """What xdist's scheduler needs of a worker: it records what it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def test_xdist_runs_every_test_once_a_group_on_one_worker_the_longest_first():
    ids = ["tests/test_bpe.py::a", "tests/test_bpe.py::b", "tests/test_pages.py::c",
           "tests/e2e/test_replicas.py::d", "tests/test_model_truth.py::e", "tests/test_model_truth.py::f",
           "tests/e2e/test_smoke.py::g", "tests/test_rope.py::h"]
    config = SimpleNamespace(getvalue=lambda name: {"tx": ["2*popen"]}[name],
                             option=SimpleNamespace(loadscopereorder=True))
    plan = schedule.make_scheduler(config, None)
    workers = [_Worker("gw0"), _Worker("gw1")]
    for w in workers:
        plan.add_node(w)
        plan.add_node_collection(w, ids)
    plan.schedule()
    # Run what each worker was sent, test by test, as the workers would report it.
    done: list[tuple[str, int]] = []
    while any(len(w.sent) > sum(1 for n, _ in done if n == w.gateway.id) for w in workers):
        for w in workers:
            finished = sum(1 for n, _ in done if n == w.gateway.id)
            if finished < len(w.sent):
                done.append((w.gateway.id, w.sent[finished]))
                plan.mark_test_complete(w, w.sent[finished])
    assert sorted(i for _, i in done) == list(range(len(ids)))  # every test, once
    on = {ids[i]: n for n, i in done}
    renders = {on[t] for t in ids if schedule.unit_of(t) == "page renders"}
    assert len(renders) == 1  # the page renders' files on one worker
    # The first two units out: the longest browser file and the longest other unit (the page
    # renders), the longer of the two first.
    first = [schedule.unit_of(ids[workers[k].sent[0]]) for k in (0, 1)]
    longest = sorted(["tests/e2e/test_replicas.py", "page renders"], key=lambda u: -schedule.SECONDS[u])
    assert first == longest
    assert all(w.shutting_down for w in workers)

"""How `make test` shares the suite among pytest-xdist's workers (docs/testing.md says why).

Three workers on two cores: most of a browser test is waiting (for the page to draw, for a server
to start), so a third worker keeps the cores busy meanwhile. `Plan` is xdist's own `loadfile`
schedule (a file's tests all run on one worker, in order, sharing its module fixtures) with two
changes:

- files that read one walk through the app share a unit (`GROUPS`), so one worker pays for the
  walk and the others never do: the Italian browser walk (`italian_walk`, tests/e2e/walk.py) and
  the AppTest renders of every page (tests/renders.py); so do the two files that build the
  container image (`make image`), so the second finds it built;
- units go out longest first (`SECONDS`, measured), browser and AppTest units interleaved
  (`order`), so no worker is left with a long unit at the end and the browser's waits overlap
  with the AppTest computing rather than with each other.

Only the order and the grouping change; every test runs exactly once, as without xdist.
`pytest -n 0` runs the suite in one process, in file order.
"""

from __future__ import annotations

from collections import OrderedDict

E2E = "tests/e2e/"

# Files that read the same session-wide walk, or build the same container image: one unit each (the
# image's files on two workers at once built it twice, side by side, both cold in a fresh clone).
GROUPS = {
    "tests/e2e/test_accessibility.py": "italian walk",
    "tests/e2e/test_chart_layout.py": "italian walk",
    "tests/e2e/test_italian_walk.py": "italian walk",
    "tests/test_model_truth.py": "page renders",
    "tests/test_pages.py": "page renders",
    "tests/test_pages_gemma.py": "page renders",
    "tests/test_page_chart_names.py": "page renders",
    "tests/test_page_sentences.py": "page renders",
    "tests/test_teaching_counts.py": "page renders",
    "tests/test_text_rules.py": "page renders",
    "tests/test_image.py": "the image",
    "tests/test_compose.py": "the image",
}

# "the image": test_image.py and test_compose.py build it once (tests/image_build.py), cold in a
# fresh clone on a new machine (about 10 min at 641c19a: the Debian base, every package, the models'
# conversion, the layers' copies): sent out first, it overlaps with the rest, not the run's tail.
# Seconds each unit of 28 s or more took in a full run on three workers (a fresh clone at 7f7ffc0;
# on 2 cores, so about twice their time alone); only the order they give matters. A unit missing
# here counts DEFAULT_SECONDS per test.
SECONDS = {
    "italian walk": 386,
    "the image": 600,  # cold; 232 s with its layers cached but the code's
    "page renders": 229,
    "tests/e2e/test_classroom_learner.py": 200,
    "tests/e2e/test_own_text.py": 146,
    "tests/e2e/test_replicas.py": 123,
    "tests/test_page_hub.py": 100,
    "tests/e2e/test_direct_link.py": 96,
    "tests/e2e/test_progress.py": 96,
    "tests/e2e/test_addresses.py": 92,
    "tests/e2e/test_phone.py": 83,
    "tests/e2e/test_classroom_hostile.py": 80,
    "tests/e2e/test_classroom.py": 78,
    "tests/test_page_classroom.py": 72,
    "tests/test_stclient.py": 67,
    "tests/e2e/test_classroom_load.py": 62,
    "tests/test_page_block.py": 61,
    "tests/test_models.py": 58,
    "tests/e2e/test_block.py": 54,
    "tests/e2e/test_attention.py": 54,
    "tests/e2e/test_fit.py": 53,
    "tests/e2e/test_embeddings.py": 53,
    "tests/e2e/test_hub_download.py": 52,
    "tests/test_page_embeddings.py": 52,
    "tests/test_page_attention.py": 51,
    "tests/e2e/test_kvcache.py": 45,
    "tests/e2e/test_shared_computer.py": 43,
    "tests/e2e/test_share.py": 43,
    "tests/test_page_sampling.py": 39,
    "tests/e2e/test_sampling.py": 36,
    "tests/e2e/test_italian.py": 34,
    "tests/test_classroom_store.py": 33,
    "tests/test_lens_worker.py": 32,
    "tests/e2e/test_lesson_flow.py": 31,
    "tests/test_page_share.py": 30,
    "tests/test_page_tokenization.py": 28,
}
DEFAULT_SECONDS = {True: 25.0, False: 1.0}  # per test, measured the same way: a browser test, another test


def unit_of(nodeid: str) -> str:
    """The unit a test runs in: its file, or the group its file shares a walk with.

    Example: unit_of("tests/test_pages.py::test_x[en]") -> "page renders"
    """
    path = nodeid.split("::", 1)[0]
    return GROUPS.get(path, path)


def is_browser(nodeids) -> bool:
    """A unit of browser tests (tests/e2e)."""
    return any(n.startswith(E2E) for n in nodeids)


def seconds(unit: str, nodeids) -> float:
    """What a unit is expected to take: SECONDS, else DEFAULT_SECONDS per test."""
    return SECONDS.get(unit, DEFAULT_SECONDS[is_browser(nodeids)] * len(nodeids))


def order(units: dict[str, list[str]]) -> list[str]:
    """Units longest first, browser and other units interleaved in proportion to their totals:
    the next unit comes from the kind that has given out the smaller share of its time so far.
    `units` maps each unit to its tests' ids.

    Example: order({"tests/e2e/test_a.py": ["tests/e2e/test_a.py::x", "tests/e2e/test_a.py::y"],
                    "tests/e2e/test_b.py": ["tests/e2e/test_b.py::z"],
                    "tests/test_c.py": ["tests/test_c.py::w"]})
             -> ["tests/e2e/test_a.py", "tests/test_c.py", "tests/e2e/test_b.py"]
    """
    kinds: dict[bool, list[str]] = {True: [], False: []}
    for unit, nodeids in units.items():
        kinds[is_browser(nodeids)].append(unit)
    total = {k: sum(seconds(u, units[u]) for u in us) or 1.0 for k, us in kinds.items()}
    for us in kinds.values():
        us.sort(key=lambda u: -seconds(u, units[u]))  # stable: equal units keep the file order
    given = {True: 0.0, False: 0.0}
    out: list[str] = []
    while kinds[True] or kinds[False]:
        # The kind behind in its share goes next; at a tie (the start), the one with the longer unit.
        kind = min((k for k in kinds if kinds[k]),
                   key=lambda k: (given[k] / total[k], -seconds(kinds[k][0], units[kinds[k][0]])))
        unit = kinds[kind].pop(0)
        given[kind] += seconds(unit, units[unit])
        out.append(unit)
    return out


def make_scheduler(config, log):
    """xdist's loadfile schedule with the units and order above (see the module's docstring)."""
    from xdist.scheduler import LoadFileScheduling

    class Plan(LoadFileScheduling):
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:  # the queue is complete by the first assignment: order it once
                self._ordered = True
                queue = self.workqueue
                self.workqueue = OrderedDict((u, queue[u]) for u in order({u: list(t) for u, t in queue.items()}))
            super()._assign_work_unit(node)

        def _reschedule(self, node) -> None:
            # A worker holds its last test until it knows the next one (pytest's teardown needs it),
            # so it gets its next unit when one test is left, not before: a long unit waiting in a
            # busy worker's queue is one an idle worker could have run.
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    return Plan(config, log)


def run_times(junit: str) -> tuple[dict[str, float], dict[str, list[str]]]:
    """Seconds per unit of a run, from its JUnit file (`--junitxml`), and each unit's test ids. A
    test's time includes the session fixtures it was the first to ask for (a server's start, a
    model's load, the walk, the image's build), as pytest counts it."""
    import xml.etree.ElementTree as ET

    seconds: dict[str, float] = {}
    tests: dict[str, list[str]] = {}
    for case in ET.parse(junit).iter("testcase"):
        nodeid = case.get("classname", "").replace(".", "/") + ".py::" + case.get("name", "")
        unit = unit_of(nodeid)
        seconds[unit] = seconds.get(unit, 0.0) + float(case.get("time") or 0)
        tests.setdefault(unit, []).append(nodeid)
    return seconds, tests


if __name__ == "__main__":
    # Where a run's time went: `PYTEST_ADDOPTS=--junitxml=/tmp/run.xml make test`, then
    # `.venv/bin/python -m tests.schedule /tmp/run.xml`: the longest units, for SECONDS above.
    import sys

    took, ids = run_times(sys.argv[1])
    total = sum(took.values())
    browser = sum(s for u, s in took.items() if is_browser(ids[u]))
    print(f"{sum(map(len, ids.values()))} tests, {total:.0f} s of test time ({total / 3:.0f} s a worker on three); "
          f"browser tests {browser:.0f} s ({100 * browser / total:.0f} %)")
    for unit, s in sorted(took.items(), key=lambda kv: -kv[1])[:25]:
        print(f"{s:6.0f}  {unit}")

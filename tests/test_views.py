"""The browser views' side in Python: the shared fixtures still say what lib computes, the packing
round-trips, and the loader finds its files. The JavaScript itself is tested by node's own runner
on the same fixtures (tests/js, run by `make test`)."""

import json

import numpy as np
import pytest

from lib.serving.payload import pack_u16, unpack_u16
from tests import views_fixtures
from ui.views import browser


@pytest.mark.parametrize("name", sorted(views_fixtures.build()))
def test_the_shared_fixtures_say_what_lib_computes_today(name):
    """If lib changes, `python -m tests.views_fixtures` writes the new values and node's tests
    then say whether the JavaScript still agrees."""
    on_disk = json.loads((views_fixtures.FOLDER / name).read_text(encoding="utf-8"))
    assert _differences(on_disk, json.loads(json.dumps(views_fixtures.build()[name]))) == []


def _differences(kept, now, at: str = "") -> list[str]:
    """Where `now` differs from `kept`: exactly for everything but floats, which may differ in their
    last bits (1e-12 relative: a numpy or BLAS with another summation order)."""
    if isinstance(kept, float) or isinstance(now, float):
        ok = isinstance(now, (int, float)) and now == pytest.approx(kept, rel=1e-12, abs=1e-15)
        return [] if ok else [f"{at}: {kept} -> {now}"]
    if isinstance(kept, dict) and isinstance(now, dict):
        if kept.keys() != now.keys():
            return [f"{at}: keys {sorted(kept)} -> {sorted(now)}"]
        return [d for k in kept for d in _differences(kept[k], now[k], f"{at}.{k}")]
    if isinstance(kept, list) and isinstance(now, list):
        if len(kept) != len(now):
            return [f"{at}: {len(kept)} items -> {len(now)}"]
        return [d for i, (a, b) in enumerate(zip(kept, now)) for d in _differences(a, b, f"{at}[{i}]")]
    return [] if kept == now else [f"{at}: {kept!r} -> {now!r}"]


def test_the_fixture_comparison_forgives_last_bits_only():
    assert _differences({"x": [1.0, 2, "a"]}, {"x": [1.0 + 1e-15, 2, "a"]}) == []
    assert _differences({"x": [1.0]}, {"x": [1.0001]}) == ["[x][0]: 1.0 -> 1.0001".replace("[x]", ".x")]
    assert _differences({"x": 2}, {"x": 3}) and _differences({"x": [1]}, {"x": [1, 2]})


def test_packing_keeps_every_value_within_half_a_step():
    x = np.random.default_rng(0).normal(0, 8, 49152)
    packed = pack_u16(x)
    back = unpack_u16(packed)
    assert np.abs(back - x).max() <= packed["scale"] / 2 + 1e-12
    assert back.min() == x.min() and len(packed["b64"]) == 4 * ((2 * x.size + 2) // 3)
    assert unpack_u16(pack_u16([3.0, 3.0])).tolist() == [3.0, 3.0]  # one value: no range to divide


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("-inf"), 0.0]])
def test_packing_refuses_what_a_view_cannot_draw(bad):
    with pytest.raises(ValueError):
        pack_u16(bad)


def test_the_loader_finds_the_files_and_versions_them_by_content():
    assert browser.available()
    names = {p.name for p in browser.FOLDER.glob("*.js")}
    assert {"mount.js", "common.js", "sampling.js", "action.js"} <= names
    assert len(browser.version()) == 12
    assert browser.data_key("m", "t", "en") == browser.data_key("m", "t", "en") != browser.data_key("m", "t", "it")


def test_float32_packing_keeps_seven_digits_and_refuses_what_is_not_finite():
    from lib.serving.payload import pack_f32, unpack_f32

    x = np.random.default_rng(1).normal(0, 20, 2080)
    packed = pack_f32(x)
    assert len(packed["b64"]) == 4 * ((4 * x.size + 2) // 3)
    np.testing.assert_allclose(unpack_f32(packed), x, rtol=6e-8)
    with pytest.raises(ValueError):
        pack_f32([0.0, float("-inf")])


def test_a_components_script_is_sent_without_its_whole_line_comments():
    from ui.views.browser import _without_comments, script

    js = '// what it does\nconst url = "http://127.0.0.1/x"; // kept: code on the line\n  // indented note\nrun(url);'
    assert _without_comments(js) == 'const url = "http://127.0.0.1/x"; // kept: code on the line\nrun(url);'
    sent = script("progress_store")
    assert "function" in sent and not any(line.lstrip().startswith("//") for line in sent.splitlines())

"""The browser views' side in Python: the shared fixtures still say what lib computes, the packing
round-trips, and the loader finds its files. The JavaScript itself is tested by node's own runner
on the same fixtures (tests/js, run by `make test`)."""

import json

import numpy as np
import pytest

from lib.serving.payload import pack_u16, unpack_u16
from tests import views_fixtures
from ui import views


@pytest.mark.parametrize("name", sorted(views_fixtures.build()))
def test_the_shared_fixtures_say_what_lib_computes_today(name):
    """If lib changes, `python -m tests.views_fixtures` writes the new values and node's tests
    then say whether the JavaScript still agrees."""
    on_disk = json.loads((views_fixtures.FOLDER / name).read_text(encoding="utf-8"))
    assert on_disk == json.loads(json.dumps(views_fixtures.build()[name]))


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
    assert views.available()
    names = {p.name for p in views.FOLDER.glob("*.js")}
    assert {"mount.js", "common.js", "sampling.js", "action.js"} <= names
    assert len(views.version()) == 12
    assert views.data_key("m", "t", "en") == views.data_key("m", "t", "en") != views.data_key("m", "t", "it")


def test_float32_packing_keeps_seven_digits_and_refuses_what_is_not_finite():
    from lib.serving.payload import pack_f32, unpack_f32

    x = np.random.default_rng(1).normal(0, 20, 2080)
    packed = pack_f32(x)
    assert len(packed["b64"]) == 4 * ((4 * x.size + 2) // 3)
    np.testing.assert_allclose(unpack_f32(packed), x, rtol=6e-8)
    with pytest.raises(ValueError):
        pack_f32([0.0, float("-inf")])

"""lib/lessons/bertviz_view.py: offline URLs, layer filtering, tokens that could break the page."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lib.lessons import bertviz_view
from lib.lessons.bertviz_view import ViewHtml, head_view_html, model_view_html
from tests.ci import skip_or_fail

CDN_HOST = "cdnjs.cloudflare.com"
TRICKY = ["<s>", "</script>", 'say "hi"', "l'ora", "<!--", "a&b", "🙂", "perché", "\u2028"]


def random_attention(n_layers: int, n_heads: int, t: int, seed: int = 0) -> np.ndarray:
    """[L, H, T, T] float32, causal like a decoder, every row summing to 1."""
    rng = np.random.default_rng(seed)
    a = rng.random((n_layers, n_heads, t, t)).astype(np.float32)
    a *= np.tril(np.ones((t, t), np.float32))
    return a / a.sum(-1, keepdims=True)


def embedded_params(html: str) -> dict:
    """The params object the bertviz script reads (`const params = {...};`)."""
    start = html.index("const params = ") + len("const params = ")
    end = html.index("; // HACK: PYTHON_PARAMS", start)
    return json.loads(html[start:end])


@pytest.fixture
def fake_vendor(tmp_path, monkeypatch) -> Path:
    for name in bertviz_view.VENDOR_FILES:
        (tmp_path / name).write_text("// fake\n")
    monkeypatch.setattr(bertviz_view, "vendor_dir", lambda: tmp_path)
    return tmp_path


@pytest.fixture
def no_vendor(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(bertviz_view, "vendor_dir", lambda: tmp_path / "missing")
    return tmp_path


def test_vendor_dir_is_repo_static_vendor():
    assert bertviz_view.vendor_dir() == Path(__file__).resolve().parent.parent / "static" / "vendor"


def test_vendored_needs_all_three_files(tmp_path, monkeypatch):
    monkeypatch.setattr(bertviz_view, "vendor_dir", lambda: tmp_path)
    assert not bertviz_view.vendored()
    for name in bertviz_view.VENDOR_FILES[:2]:
        (tmp_path / name).write_text("x")
    assert not bertviz_view.vendored()
    (tmp_path / bertviz_view.VENDOR_FILES[2]).write_text("x")
    assert bertviz_view.vendored()


@pytest.mark.parametrize("make", [head_view_html, model_view_html])
def test_vendored_page_names_no_cdn(fake_vendor, make):
    view = make(random_attention(2, 2, 4), list("abcd"))
    assert isinstance(view, ViewHtml)
    assert view.offline
    assert CDN_HOST not in view.html
    assert '<script src="/app/static/vendor/require.js"></script>' in view.html
    assert "d3: '/app/static/vendor/d3.min'" in view.html
    assert "jquery: '/app/static/vendor/jquery.min'" in view.html
    assert view.n_bytes == len(view.html.encode("utf-8"))


@pytest.mark.parametrize("make", [head_view_html, model_view_html])
def test_without_vendored_files_the_cdn_stays(no_vendor, make):
    view = make(random_attention(1, 2, 3), list("abc"))
    assert not view.offline
    assert f"https://{CDN_HOST}/ajax/libs/require.js/2.3.6/require.min.js" in view.html
    assert "/app/static/vendor" not in view.html


def test_real_vendored_files_when_present():
    if not bertviz_view.vendored():
        skip_or_fail("static/vendor not populated: run scripts/vendor_js.sh")
    view = head_view_html(random_attention(1, 1, 2), ["a", "b"])
    assert view.offline and CDN_HOST not in view.html


def test_only_selected_layers_are_embedded(fake_vendor):
    attn = random_attention(6, 3, 5)
    view = head_view_html(attn, list("abcde"), layers=[4, 1])
    params = embedded_params(view.html)
    data = params["attention"][0]
    assert params["include_layers"] == [1, 4]
    assert len(data["attn"]) == 2
    assert np.shape(data["attn"]) == (2, 3, 5, 5)
    # Rounded for size, otherwise the same numbers, layer by layer.
    np.testing.assert_allclose(data["attn"], attn[[1, 4]], atol=1e-4)


def test_fewer_layers_make_a_smaller_page(fake_vendor):
    attn = random_attention(8, 4, 40)
    tokens = [f"t{i}" for i in range(40)]
    one = head_view_html(attn, tokens, layers=[0]).n_bytes
    all_ = head_view_html(attn, tokens).n_bytes
    assert all_ > 4 * one


def test_params_are_embedded_once(fake_vendor):
    # bertviz itself pastes the JSON twice (its marker also sits in a comment).
    view = head_view_html(random_attention(1, 1, 3), ["uno", "due", "tre"])
    assert view.html.count('"root_div_id": ') == 1


def test_model_view_keeps_selected_heads(fake_vendor):
    attn = random_attention(3, 4, 3)
    view = model_view_html(attn, list("abc"), layers=[2], heads=[3, 0])
    params = embedded_params(view.html)
    assert params["include_heads"] == [0, 3]
    assert np.shape(params["attention"][0]["attn"]) == (1, 2, 3, 3)
    np.testing.assert_allclose(params["attention"][0]["attn"], attn[2][[0, 3]][None], atol=1e-4)


@pytest.mark.parametrize("vendor", ["fake_vendor", "no_vendor"])
def test_tokens_cannot_break_out_of_the_script(request, vendor):
    request.getfixturevalue(vendor)
    view = head_view_html(random_attention(2, 2, len(TRICKY)), TRICKY)
    html = view.html
    # Two closing tags only: the require.js tag and the end of bertviz's script.
    assert html.count("</script") == 2
    assert html.rstrip().endswith("</script>")
    assert "<!--" not in html
    # And the tokens arrive intact in the browser's JSON.
    data = embedded_params(html)["attention"][0]
    assert data["left_text"] == TRICKY
    assert data["right_text"] == TRICKY


@pytest.mark.filterwarnings("error::UserWarning")
def test_read_only_capture_arrays_are_fine(fake_vendor):
    # Captures are frozen: their arrays may be read-only (torch warns on those).
    attn = random_attention(3, 2, 3)
    attn.flags.writeable = False
    for layers in (None, [1]):
        assert head_view_html(attn, list("abc"), layers=layers).offline
        assert model_view_html(attn, list("abc"), layers=layers).offline


def test_prettify_turns_bpe_space_markers_into_spaces(fake_vendor):
    view = head_view_html(random_attention(1, 1, 2), ["Ġciao", "▁mondo"])
    assert embedded_params(view.html)["attention"][0]["left_text"] == [" ciao", " mondo"]


@pytest.mark.parametrize(
    "shape, tokens, layers",
    [
        ((2, 1, 3, 3), ["a", "b"], None),  # T mismatch
        ((2, 1, 3, 2), ["a", "b", "c"], None),  # not square
        ((1, 3, 3), ["a", "b", "c"], None),  # not 4-D
        ((2, 1, 2, 2), ["a", "b"], [2]),  # layer out of range
        ((2, 1, 2, 2), ["a", "b"], []),  # bertviz would read [] as "all"
    ],
)
def test_bad_input_is_refused(shape, tokens, layers):
    with pytest.raises(ValueError):
        head_view_html(np.full(shape, 0.5, np.float32), tokens, layers=layers)


def test_bad_heads_are_refused():
    with pytest.raises(ValueError):
        model_view_html(random_attention(1, 2, 2), ["a", "b"], heads=[2])


def test_one_layer_hides_bertvizs_layer_menu(fake_vendor):
    """With one layer the page's own slider chooses it: bertviz's English "Layer:" menu is hidden."""
    from lib.lessons.bertviz_view import HIDE_LAYER_MENU

    attn = random_attention(3, 2, 4)
    assert head_view_html(attn, list("abcd"), layers=[1]).html.startswith(HIDE_LAYER_MENU)
    assert HIDE_LAYER_MENU not in head_view_html(attn, list("abcd"), layers=[0, 2]).html


def test_as_document_names_the_page_and_its_language():
    from lib.lessons.bertviz_view import as_document

    page = as_document("<div id='vis'></div>", "it", "Vista per testa <1>")
    assert page.startswith('<!DOCTYPE html><html lang="it">')
    assert "<title>Vista per testa &lt;1&gt;</title>" in page  # the title is text, never markup
    assert page.endswith("<body><div id='vis'></div></body></html>")

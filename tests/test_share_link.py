"""lib.learner.share_link: links to a view round-trip, long texts stop at the limit, bad input never raises."""

from __future__ import annotations

import base64
import zlib

import pytest

from lib.learner import share_link as sl
from lib.learner.share_link import Param

SPEC = {"layer": Param("attention.layer", "int"), "temp": Param("sampling.temperature", "float"),
        "on": Param("embeddings.pca_add", "bool"), "word": Param("embeddings.query", "str"),
        "corpus": Param("tokenization.corpus", "strs"), "which": Param("position.which", "str", ("q", "k"))}
VALUES = {"attention.layer": 15, "sampling.temperature": 0.7000000000000001, "embeddings.pca_add": False,
          "embeddings.query": "città & co?=1", "tokenization.corpus": ["it", "yours"], "position.which": "k"}


@pytest.mark.parametrize("text", ["", "a", "Ciao, è già più città! 👋🏽", "línea\nnueva\ttab", "x" * 3000])
def test_text_round_trip(text):
    assert sl.decode_text(sl.encode_text(text)) == text


def test_text_compresses_and_stops_at_the_limit():
    repetitive = "the cat sat on the mat. " * 2000  # 48,000 characters compress to a short parameter
    assert sl.encode_text(repetitive) is not None and len(sl.encode_text(repetitive)) < 1000
    import random

    rng = random.Random(0)
    noise = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(20_000))
    assert sl.encode_text(noise) is None  # does not compress below the limit
    assert sl.encode_text(noise, limit=10**6) is not None
    query, too_long = sl.build("en", None, noise, VALUES, SPEC)
    assert too_long and "text" not in query and query["layer"] == "15"  # the rest is shared


@pytest.mark.parametrize("code", ["", "!!!", "eJzLSM3JyQcABiwCFQ"[:-3], base64.urlsafe_b64encode(b"plain").decode(),
                                  base64.urlsafe_b64encode(zlib.compress(b"\xff\xfe")).decode(), "A" * (sl.TEXT_LIMIT + 1)])
def test_decode_text_refuses_malformed(code):
    with pytest.raises(sl.ShareError):
        sl.decode_text(code)


def test_decode_text_refuses_a_compression_bomb():
    bomb = base64.urlsafe_b64encode(zlib.compress(b"a" * 1_000_000, 9)).decode().rstrip("=")
    assert len(bomb) <= sl.TEXT_LIMIT
    with pytest.raises(sl.ShareError):
        sl.decode_text(bomb)


def test_link_round_trip():
    query, too_long = sl.build("it", "HuggingFaceTB/SmolLM2-360M", "Il gatto è sul tappeto.", VALUES, SPEC)
    assert not too_long
    assert query["temp"] == "0.7" and query["on"] == "0" and query["corpus"] == "it,yours"
    view = sl.parse(query, SPEC)
    assert view.notices == ()
    assert (view.lang, view.model, view.text) == ("it", "HuggingFaceTB/SmolLM2-360M", "Il gatto è sul tappeto.")
    assert view.values == {**VALUES, "sampling.temperature": 0.7}


def test_build_leaves_out_values_not_of_their_kind_and_keys_outside_the_spec():
    values = {"attention.layer": "15", "sampling.temperature": float("nan"), "embeddings.pca_add": 1,
              "embeddings.query": "x" * 401, "tokenization.corpus": ["it", "a,b"], "position.which": "v",
              "attention.head": 3}
    query, _ = sl.build("en", None, None, values, SPEC)
    assert query == {"lang": "en"}


def test_parse_ignores_unknown_and_malformed_parameters_with_notices():
    query = {"layer": "1.5", "temp": "inf", "on": "yes", "word": "ok", "corpus": "it,../x", "which": "v",
             "zoom": "2", "lang": "fr", "model": "../../etc/passwd", "text": "%%%"}
    view = sl.parse(query, SPEC)
    assert view.values == {"embeddings.query": "ok"}
    assert (view.lang, view.model, view.text) == (None, None, None)
    assert sorted(view.notices) == sorted([("malformed", "layer"), ("malformed", "temp"), ("malformed", "on"),
                                           ("malformed", "corpus"), ("malformed", "which"), ("unknown", "zoom"),
                                           ("malformed", "lang"), ("model", "model"), ("text", "text")])


@pytest.mark.parametrize("model", ["gpt2", "Qwen/Qwen2.5-0.5B", "HuggingFaceTB/SmolLM2-135M-Instruct"])
def test_model_ids_pass(model):
    assert sl.parse({"model": model}, SPEC).model == model


@pytest.mark.parametrize("model", ["", "/etc/passwd", "https://x.y/z", "a/b/c", "a b", "-x", "x" * 200])
def test_model_paths_and_urls_are_refused(model):
    view = sl.parse({"model": model}, SPEC)
    assert view.model is None and view.notices == (("model", "model"),)


@pytest.mark.parametrize(("kind", "value"), [("int", 0), ("int", -3), ("int", 123456789), ("float", 0.05),
                                             ("float", 1e-7), ("bool", True), ("str", ""), ("str", "a,b c"),
                                             ("strs", []), ("strs", ["gpt2", "llama3"])])
def test_value_round_trip(kind, value):
    assert sl.parse_value(sl.format_value(value, kind), kind) == value


@pytest.mark.parametrize("model", ["embedded:SmolLM2-135M-Instruct", "embedded:gemma-3-270m"])
def test_every_built_in_model_round_trips(model):
    """A link built for a built-in model opens that model again, with no notice."""
    from lib.model.models import EMBEDDED_MODELS

    assert model in EMBEDDED_MODELS
    query, _ = sl.build("en", model, "Hi", {}, {})
    view = sl.parse(query, {})
    assert view.model == model and view.notices == ()


@pytest.mark.parametrize("model", ["embedded:not-a-built-in", "embedded:../x"])
def test_unknown_built_in_names_are_refused(model):
    assert sl.parse({"model": model}, {}).notices == (("model", "model"),)

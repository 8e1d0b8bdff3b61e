"""AppTest of the embeddings lesson, in both languages, with bad input and a GPT-2 family model.

The charts are read back from the page (plotly's JSON, arrays in base64) and checked against
cosines computed here, straight from the model's table with torch.
"""

from __future__ import annotations


import numpy as np
import pytest
import torch

from lib import embeddings as emb
from lib import i18n
from tests.apptest import page_text, start, find_chart as chart, plotly_array

PAGE = "pages/03_embeddings.py"
LONG_TEXT = "parola " * 7200  # 50,400 characters, the same text as tests/test_pages.py (a cached capture)


def _array(value) -> np.ndarray:
    return plotly_array(value, None)


def heatmap(at, key: str) -> tuple[list[str], np.ndarray]:
    trace = chart(at, key)["data"][0]
    return list(trace["x"]), _array(trace["z"]).astype(np.float64)


@pytest.fixture(scope="module")
def table(real) -> np.ndarray:
    with torch.inference_mode():
        return real.adapter.embed(real.model).weight.detach().float().numpy().copy()


def _set_words(at, value: str):
    at.text_input(key="embeddings.words").set_value(value)
    at.run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_lesson_runs_on_the_live_model(lang, real, table):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    text = page_text(at)
    assert any(x.value == labels["lesson.embeddings.title"] for x in at.title)
    assert i18n.lesson(lang, "embeddings")["intro"][:40] in text
    assert "{vocab}" not in text and "{n_layers}" not in text and "[49152, 576]" in text
    assert any(m.value == "[49152, 576]" for m in at.metric)
    # The table rows equal the first block's input (measured in the page): the lookup message.
    assert any(labels["embeddings.rows.same_rope"].split("{")[0] in s.value for s in at.success)
    # The cosine heatmap: the default words, values equal to torch's cosine of the rows.
    names, z = heatmap(at, "embeddings.cosine_chart")
    words = emb.parse_words(labels["embeddings.words.default"]).words
    assert names == list(words)
    vecs = torch.stack([torch.from_numpy(table[emb.word_pieces(real.tokenizer, w).ids, :]).mean(0) for w in words])
    oracle = torch.nn.functional.cosine_similarity(vecs[:, None], vecs[None, :], dim=-1).numpy()
    assert np.allclose(z, oracle, atol=1e-5)
    # Neighbours: the query token itself comes first, with cosine 1.
    nb = at.dataframe[1].value
    query = labels["embeddings.neighbours.default"]
    assert nb.iloc[0, 1] == "␣" + query and nb.iloc[0, 3] == "1"
    # Norms, PCA, the depth curve and the sentences are all drawn.
    for key in ("embeddings.rows_chart", "embeddings.norms_chart", "embeddings.pca_chart",
                "embeddings.depth_chart", "embeddings.sentences_chart"):
        assert chart(at, key) is not None, key
    depth = _array(chart(at, "embeddings.depth_chart")["data"][0]["y"])
    assert len(depth) == real.info.n_layers + 1 and depth[0] == pytest.approx(1.0, abs=1e-6)
    assert depth[-1] < 0.999  # the same row, different vectors after the layers
    assert any(labels["embeddings.norms.trend_up"][:20] in x.value or labels["embeddings.norms.trend_down"][:20]
               in x.value or labels["embeddings.norms.trend_flat"][:20] in x.value for x in at.info)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_bad_word_lists_get_clear_messages(lang):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    _set_words(at, " , ,")
    assert any(x.value == labels["embeddings.words.empty"] for x in at.info)
    assert chart(at, "embeddings.cosine_chart") is None and chart(at, "embeddings.pca_chart") is None
    _set_words(at, "cat")
    assert any(x.value == labels["embeddings.words.one"] for x in at.info)
    assert any(x.value == labels["embeddings.pca.need_three"] for x in at.info)
    _set_words(at, ", ".join(f"word{i}" for i in range(200)))
    cut = i18n.fill(labels["embeddings.words.cut"], n=str(emb.MAX_WORDS), total="200")
    assert any(x.value == cut for x in at.warning)
    assert len(heatmap(at, "embeddings.cosine_chart")[0]) == emb.MAX_WORDS
    _set_words(at, "precipitevolissimevolmente, 😀, cat, " + "x" * 300)
    many_tail = i18n.fill(labels["embeddings.words.many"].split("{words}")[1], n=str(emb.MANY_PIECES))
    assert any(x.value.startswith("precipitevolissimevolmente") and x.value.endswith(many_tail) for x in at.warning)
    assert any(x.value == labels["embeddings.words.bytes"] for x in at.info)
    assert any(x.value == i18n.fill(labels["embeddings.words.long"], n=str(emb.MAX_WORD_CHARS)) for x in at.warning)
    names, z = heatmap(at, "embeddings.cosine_chart")
    assert names[:3] == ["precipitevolissimevolmente", "😀", "cat"] and np.allclose(np.diag(z), 1.0)
    # An empty neighbour query: a message, no traceback.
    at.text_input(key="embeddings.query").set_value("   ")
    at.run()
    assert not at.exception
    assert any(x.value == labels["embeddings.neighbours.empty"] for x in at.info)


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("text,expect", [("", "text.empty"), ("🐱🚀🇮🇹 😀", None),
                                         (LONG_TEXT, "text.truncated")])
def test_bad_learner_text(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert chart(at, "embeddings.rows_chart") is None
    else:
        assert chart(at, "embeddings.rows_chart") is not None
    if expect == "text.truncated":
        assert any(labels["text.truncated"].split("{")[0] in x.value for x in at.warning)
        rows = chart(at, "embeddings.rows_chart")["data"][0]
        assert len(rows["y"]) == 32
    # Whatever the text, the rest of the lesson works from the table and its own sentences.
    assert chart(at, "embeddings.cosine_chart") is not None and chart(at, "embeddings.sentences_chart") is not None


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_context_and_sentences_bad_input_and_slider_reads_the_cache(lang, monkeypatch):
    import ui.cache

    calls = []
    original = ui.cache.run_capture
    monkeypatch.setattr(ui.cache, "run_capture", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    n_calls = len(calls)
    at.slider(key="embeddings.depth").set_value(0)
    at.run()
    assert not at.exception
    assert len(calls) == n_calls  # moving the depth slider re-runs no model
    cos_ab = [m for m in at.metric if m.label.startswith("cos(A, B)")]
    assert cos_ab and cos_ab[0].value == "1"  # depth 0: the same table row
    at.text_input(key="embeddings.ctx_word").set_value("zebra")
    at.run()
    word = "zebra"
    assert any(x.value.startswith(i18n.fill(labels["embeddings.context.not_found"], word=word, sentence="")[:10])
               for x in at.warning)
    assert chart(at, "embeddings.depth_chart") is None
    at.text_input(key="embeddings.ctx_b").set_value("   ")
    at.run()
    assert any(x.value == labels["embeddings.context.missing"] for x in at.info)
    at.text_area(key="embeddings.sentences").set_value("one sentence only")
    at.run()
    assert any(x.value == labels["embeddings.sentences.need_two"] for x in at.info)
    many = "\n".join([f"Sentence number {i} is here." for i in range(10)] + ["word " * 100])
    at.text_area(key="embeddings.sentences").set_value(many)
    at.run()
    assert not at.exception
    assert any(x.value == i18n.fill(labels["embeddings.sentences.too_many"], n="8", total="11") for x in at.warning)
    names, z = heatmap(at, "embeddings.sentences_chart")
    assert len(names) == 8 and np.allclose(z, z.T) and np.allclose(np.diag(z), 1.0)
    at.text_area(key="embeddings.sentences").set_value("A short one.\n" + "word " * 100)
    at.run()
    assert any(x.value == i18n.fill(labels["embeddings.sentences.cut"], n="64") for x in at.warning)


def test_lesson_runs_on_a_gpt2_family_model(tiny_gpt2, monkeypatch):
    from lib import models

    name = "tests/tiny-gpt2"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny_gpt2 if n == name else None)
    # Start on the big model with the sliders at the top of their range (30 layers, 128 dimensions):
    # the tiny model has 2 layers and 32 dimensions, so those values are now out of range.
    at = start("en", PAGE)
    at.slider(key="embeddings.dims").set_value(128)
    at.slider(key="embeddings.k").set_value(30)
    at.run()
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == name
    assert at.slider(key="embeddings.depth").value <= tiny_gpt2.info.n_layers
    assert at.slider(key="embeddings.dims").value <= tiny_gpt2.info.d_model
    labels = i18n.ui("en")
    assert any(x.value == labels["embeddings.table.which_learned"] for x in at.caption)
    # Token row + position row equals the first block's input, measured on the tiny model.
    assert any(labels["embeddings.rows.same_learned"].split("{")[0] in s.value for s in at.success)
    assert any(m.value == f"[{tiny_gpt2.info.vocab_size}, {tiny_gpt2.info.d_model}]" for m in at.metric)
    assert any(x.value == labels["embeddings.context.depth0_learned"] for x in at.caption)
    assert len(_array(chart(at, "embeddings.depth_chart")["data"][0]["y"])) == tiny_gpt2.info.n_layers + 1
    # Every word is cut into single bytes by the tiny tokenizer: the page says so.
    assert any("king" in x.value for x in at.warning)
    assert chart(at, "embeddings.sentences_chart") is not None


def test_the_depth_curve_is_drawn_on_an_axis_zoomed_to_it():
    """A same-word pair whose cosine only falls from 1 to 0.94 must look like a fall, not a flat line."""
    from ui.embeddings_view import depth_figure, depth_range

    cos = np.array([1.0, 0.99, 0.97, 0.95, 0.94])
    low, high = depth_range(cos)
    assert low < 0.94 and high > 1.0  # every point inside
    assert (1.0 - 0.94) / (high - low) > 0.8  # the fall fills most of the axis
    fig = depth_figure(cos, 2, {"x": "x", "y": "y", "hover": "%{y}"}).to_dict()
    assert list(fig["layout"]["yaxis"]["range"]) == [low, high]
    assert depth_range(np.array([1.0, 0.2]))[0] < 0.2

"""AppTest of the embeddings lesson, in both languages, with bad input and a GPT-2 family model.

The charts are read back from the page (plotly's JSON, arrays in base64) and checked against
cosines computed here, straight from the model's table with torch; the browser views' data (the
rows, the neighbours, the projections, the depths: static/views/embeddings.js) is read back as the
view receives it (tests.apptest.view_data) and checked the same way.
"""

from __future__ import annotations


import numpy as np
import pytest
import torch

from lib.course import i18n
from lib.lessons import embeddings as emb
from lib.model.capture import run_capture
from lib.serving.payload import unpack_u16
from tests.apptest import page_text, start, find_chart as chart, plotly_array, view_data

PAGE = "pages/03_embeddings.py"
VIEWS = ("embeddings.view", "embeddings.neighbours_view", "embeddings.pca_view", "embeddings.depth_view")
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
    # The rows the view is sent: the text's tokens' table rows at the slider's most dimensions.
    rows = view_data(at, "embeddings.view")
    n = len(rows["names"])
    assert rows["n_dims"] == 128 and rows["settings"]["dims"] == 32
    sent = unpack_u16(rows["rows"]).reshape(n, 128)
    ids = run_capture(real, at.session_state["app.text"]).token_ids[:n]
    assert np.abs(sent - table[ids, :128]).max() <= rows["rows"]["scale"] / 2 + 1e-9
    # Neighbours: the 30 nearest by both measures, the query token itself first, with cosine 1;
    # checked against torch's cosine over the whole table.
    nb = view_data(at, "embeddings.neighbours_view")["neighbours"]
    query = labels["embeddings.neighbours.default"]
    assert nb["cosine"]["tokens"][0] == "␣" + query and nb["cosine"]["cosine"][0] == pytest.approx(1.0, abs=1e-6)
    q = torch.from_numpy(table[emb.word_pieces(real.tokenizer, query).ids, :]).mean(0)
    full = torch.from_numpy(table)
    by_cos = torch.nn.functional.cosine_similarity(full, q[None], dim=-1)
    by_dist = torch.linalg.vector_norm(full - q[None], dim=-1)
    assert len(nb["cosine"]["ids"]) == len(nb["euclidean"]["ids"]) == 30
    assert np.allclose(nb["cosine"]["cosine"], by_cos[nb["cosine"]["ids"]].numpy(), atol=1e-5)
    assert np.allclose(nb["euclidean"]["distance"], by_dist[nb["euclidean"]["ids"]].numpy(), atol=1e-4)
    assert nb["cosine"]["cosine"][-1] >= float(torch.topk(by_cos, 30).values[-1]) - 1e-5
    assert nb["euclidean"]["distance"][-1] <= float(torch.topk(-by_dist, 30).values[-1].neg()) + 1e-4
    # The projections: with and without each word's nearest tokens, the words first.
    pca = view_data(at, "embeddings.pca_view")["projections"]
    assert pca["alone"]["names"] == list(words) and all(pca["alone"]["is_word"])
    assert len(pca["with"]["names"]) > len(words) and pca["with"]["names"][:len(words)] == list(words)
    coords = emb.pca_2d(vecs.numpy()).coords
    assert np.allclose(np.c_[pca["alone"]["x"], pca["alone"]["y"]], coords, atol=1e-4)
    # Norms and the sentences are Streamlit's charts; the depths the view's.
    for key in ("embeddings.norms_chart", "embeddings.sentences_chart"):
        assert chart(at, key) is not None, key
    depth = view_data(at, "embeddings.depth_view")
    assert len(depth["cos"]) == real.info.n_layers + 1 and depth["cos"][0] == pytest.approx(1.0, abs=1e-6)
    assert depth["cos"][-1] < 0.999  # the same row, different vectors after the layers
    assert depth["own"][0][0] == pytest.approx(1.0) and depth["settings"]["depth"] == real.info.n_layers
    low, high = depth["range"]
    assert low < min(depth["cos"]) and high > max(depth["cos"])
    assert any(labels["embeddings.norms.trend_up"][:20] in x.value or labels["embeddings.norms.trend_down"][:20]
               in x.value or labels["embeddings.norms.trend_flat"][:20] in x.value for x in at.info)
    # Every view carries its labels in this language.
    assert view_data(at, "embeddings.neighbours_view")["labels"]["k"] == labels["embeddings.neighbours.k"]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_bad_word_lists_get_clear_messages(lang):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    _set_words(at, " , ,")
    assert any(x.value == labels["embeddings.words.empty"] for x in at.info)
    assert chart(at, "embeddings.cosine_chart") is None and view_data(at, "embeddings.pca_view") is None
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
    assert view_data(at, "embeddings.neighbours_view") is None


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("text,expect", [("", "text.empty"), ("🐱🚀🇮🇹 😀", None),
                                         (LONG_TEXT, "text.truncated")])
def test_bad_learner_text(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert view_data(at, "embeddings.view") is None
    else:
        assert view_data(at, "embeddings.view") is not None
    if expect == "text.truncated":
        assert any(labels["text.truncated"].split("{")[0] in x.value for x in at.warning)
        rows = view_data(at, "embeddings.view")
        assert len(rows["names"]) == 32 and rows["rows"]["n"] == 32 * 128
    # Whatever the text, the rest of the lesson works from the table and its own sentences.
    assert chart(at, "embeddings.cosine_chart") is not None and chart(at, "embeddings.sentences_chart") is not None


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_context_and_sentences_bad_input_and_every_depth_sent_once(lang, monkeypatch):
    import ui.shell.cache

    calls = []
    original = ui.shell.cache.run_capture
    monkeypatch.setattr(ui.shell.cache, "run_capture", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    n_calls = len(calls)
    depth = view_data(at, "embeddings.depth_view")
    assert depth["cos"][0] == pytest.approx(1.0, abs=1e-6)  # depth 0: the same table row
    at.run()  # the same page again: the same data, so the view keeps the learner's depth
    assert not at.exception
    assert len(calls) == n_calls and view_data(at, "embeddings.depth_view")["key"] == depth["key"]
    at.text_input(key="embeddings.ctx_word").set_value("zebra")
    at.run()
    word = "zebra"
    assert any(x.value.startswith(i18n.fill(labels["embeddings.context.not_found"], word=word, sentence="")[:10])
               for x in at.warning)
    assert view_data(at, "embeddings.depth_view") is None
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
    from lib.model import models

    name = "tests/tiny-gpt2"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny_gpt2 if n == name else None)
    # Start on the big model with the views' settings at the top of their range (as a share link
    # leaves them: 30 layers, 128 dimensions): the tiny model has 2 layers and 32 dimensions.
    at = start("en", PAGE)
    at.session_state["embeddings.dims"], at.session_state["embeddings.depth"] = 128, 30
    at.session_state["embeddings.k"] = 30
    at.run()
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == name
    for key in VIEWS:
        given = view_data(at, key)["settings"]
        assert given["depth"] == tiny_gpt2.info.n_layers and given["dims"] == tiny_gpt2.info.d_model, key
        assert given["k"] == 30
    assert view_data(at, "embeddings.view")["n_dims"] == tiny_gpt2.info.d_model
    labels = i18n.ui("en")
    assert any(x.value == labels["embeddings.table.which_learned"] for x in at.caption)
    # Token row + position row equals the first block's input, measured on the tiny model.
    assert any(labels["embeddings.rows.same_learned"].split("{")[0] in s.value for s in at.success)
    assert any(m.value == f"[{tiny_gpt2.info.vocab_size}, {tiny_gpt2.info.d_model}]" for m in at.metric)
    assert any(x.value == labels["embeddings.context.depth0_learned"] for x in at.caption)
    assert len(view_data(at, "embeddings.depth_view")["cos"]) == tiny_gpt2.info.n_layers + 1
    # Every word is cut into single bytes by the tiny tokenizer: the page says so.
    assert any("king" in x.value for x in at.warning)
    assert chart(at, "embeddings.sentences_chart") is not None


def test_the_depth_curve_is_drawn_on_an_axis_zoomed_to_it():
    """A same-word pair whose cosine only falls from 1 to 0.94 must look like a fall, not a flat line."""
    from ui.lessons.embeddings.sections import depth_range

    cos = np.array([1.0, 0.99, 0.97, 0.95, 0.94])
    low, high = depth_range(cos)
    assert low < 0.94 and high > 1.0  # every point inside
    assert (1.0 - 0.94) / (high - low) > 0.8  # the fall fills most of the axis
    assert depth_range(np.array([1.0, 0.2]))[0] < 0.2


def test_a_share_link_hands_its_settings_to_every_view():
    """A link's dims, k, metric, projection switch and depth reach the views once (with the
    link's token), and stay theirs on the next run."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest import TIMEOUT

    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["lang"] = "it"
    at.run()
    at.switch_page(PAGE)
    at.query_params.update({"lang": "it", "dims": "8", "k": "5", "metric": "euclidean", "pca_add": "0", "depth": "2"})
    at.run()
    assert not at.exception, at.exception
    first = None
    for key in VIEWS:
        given = view_data(at, key)["settings"]
        assert {k: given[k] for k in ("dims", "k", "metric", "pca_add", "depth")} == {
            "dims": 8, "k": 5, "metric": "euclidean", "pca_add": False, "depth": 2}, key
        assert given["from_link"] and given["from_link"] == (first or given["from_link"])
        first = given["from_link"]
    at.run()
    assert view_data(at, "embeddings.view")["settings"]["from_link"] == first

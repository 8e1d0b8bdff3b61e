"""Tests for lib/lessons/embeddings.py: textbook values, invariants, and oracles (torch, HF, the model).

The real SmolLM2 table is read once per module; tiny random models cover GPT-2's positions.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.lessons import embeddings as emb
from lib.model.capture import run_capture


@pytest.fixture(scope="module")
def table(real) -> np.ndarray:
    with torch.inference_mode():
        return real.adapter.embed(real.model).weight.detach().float().numpy().copy()  # [V, D]


@pytest.fixture(scope="module")
def index(table) -> emb.EmbeddingIndex:
    return emb.build_index(table)


# ---------------------------------------------------------------------------- cosine


def test_cosine_textbook_values():
    x = np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, 0.0], [0.0, 2.0], [3.0, 4.0], [4.0, 3.0]])
    m = emb.cosine_matrix(x)
    assert m[0, 1] == pytest.approx(1 / np.sqrt(2), abs=1e-6)  # 45 degrees
    assert m[0, 2] == pytest.approx(-1.0)  # opposite
    assert m[0, 3] == pytest.approx(0.0, abs=1e-7)  # orthogonal
    assert m[4, 5] == pytest.approx(24 / 25)  # (3,4)·(4,3) / (5·5)
    assert emb.cosine(np.array([3.0, 4.0]), np.array([6.0, 8.0])) == pytest.approx(1.0)  # length does not count
    assert emb.cosine(np.zeros(2), np.ones(2)) == 0.0


def test_cosine_matrix_invariants_and_torch_oracle():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 40)).astype(np.float32)
    x[3] *= 50  # a long vector: its cosines must not change
    m = emb.cosine_matrix(x)
    assert np.array_equal(m, m.T)
    assert np.allclose(np.diag(m), 1.0)
    assert m.min() >= -1 and m.max() <= 1
    t = torch.from_numpy(x)
    oracle = torch.nn.functional.cosine_similarity(t[:, None, :], t[None, :, :], dim=-1).numpy()
    assert np.allclose(m, oracle, atol=1e-6)
    scaled = x * rng.uniform(0.1, 10, size=(12, 1)).astype(np.float32)
    assert np.allclose(emb.cosine_matrix(scaled), m, atol=1e-5)


def test_zero_row_has_zero_similarity():
    m = emb.cosine_matrix(np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert m[0, 0] == 0 and m[0, 1] == 0 and m[1, 1] == 1


# ---------------------------------------------------------------------------- neighbours


def test_nearest_small_example_both_metrics():
    idx = emb.build_index(np.array([[1.0, 0.0], [0.0, 1.0], [10.0, 1.0], [0.5, 0.0]]))
    by_cos = emb.nearest(idx, np.array([1.0, 0.0]), k=3)
    assert by_cos.ids.tolist() == [0, 3, 2]  # rows 0 and 3 point the same way: a tie, smaller id first
    assert by_cos.cosine[:2].tolist() == [1.0, 1.0]
    by_dist = emb.nearest(idx, np.array([1.0, 0.0]), k=3, metric="euclidean")
    assert by_dist.ids.tolist() == [0, 3, 1]  # the long row 2 is far, though it points the same way
    assert by_dist.distance[:2] == pytest.approx([0.0, 0.5], abs=1e-6)
    with pytest.raises(ValueError):
        emb.nearest(idx, np.ones(2), metric="manhattan")
    assert len(emb.nearest(idx, np.ones(2), k=99).ids) == 4  # k is capped at V


def test_neighbours_of_a_token_start_with_itself(real, index):
    v = index.shape[0]
    rng = np.random.default_rng(7)
    for token in [*rng.choice(v, size=40, replace=False), 0, v - 1]:
        nb = emb.nearest(index, index.table[token], k=5)
        assert nb.cosine[0] == pytest.approx(1.0, abs=1e-5)
        # Itself first; a few unused special tokens share one identical row, and then the tie goes
        # to the smaller id, which must be that very same row.
        assert nb.ids[0] == token or np.array_equal(index.table[nb.ids[0]], index.table[token])
        assert np.all(np.diff(nb.cosine) <= 1e-7)  # best first


def test_neighbours_equal_torch_topk_over_the_whole_table(real, index, table):
    """The float16 first pass never changes the answer: exact float32 top-k, by both metrics."""
    t = torch.from_numpy(table)
    king = real.tokenizer(" king", add_special_tokens=False)["input_ids"][0]
    rng = np.random.default_rng(11)
    queries = [table[king], *table[rng.choice(len(table), 4, replace=False)],
               table[[king, 5461]].mean(axis=0),  # a word made of two pieces
               rng.normal(size=table.shape[1]).astype(np.float32) * 3]  # a vector from nowhere
    for query in queries:
        q = torch.from_numpy(query)
        cos = torch.nn.functional.cosine_similarity(t, q[None, :], dim=-1)
        oracle = torch.topk(cos, 10)
        nb = emb.nearest(index, query, k=10)
        assert np.allclose(nb.cosine, oracle.values.numpy(), atol=1e-5)
        assert nb.ids.tolist() == oracle.indices.tolist() or np.allclose(cos[nb.ids].numpy(), oracle.values.numpy(),
                                                                         atol=1e-6)  # only exact ties may swap
        d = torch.linalg.vector_norm(t - q[None, :], dim=1)  # exact (cdist takes a less precise shortcut)
        oracle_d = torch.topk(-d, 10)
        nd = emb.nearest(index, query, k=10, metric="euclidean")
        assert np.allclose(nd.distance, -oracle_d.values.numpy(), atol=1e-3)
        assert nd.ids.tolist() == oracle_d.indices.tolist() or np.allclose(d[nd.ids].numpy(), -oracle_d.values.numpy(),
                                                                           atol=1e-4)


def test_index_is_normalized_once_and_read_only(index, table):
    assert index.shape == table.shape == (49152, 576)
    assert np.allclose(np.linalg.norm(index.unit, axis=1), 1.0, atol=1e-5)
    assert np.allclose(index.norms, np.linalg.norm(table, axis=1))
    with pytest.raises(ValueError):
        index.unit[0, 0] = 1.0


# ---------------------------------------------------------------------------- PCA


def test_pca_points_on_a_line_keep_all_variance():
    p = emb.pca_2d(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
    assert p.explained == pytest.approx([1.0, 0.0])
    assert p.components[0] == pytest.approx([1 / np.sqrt(2), 1 / np.sqrt(2)])
    assert p.coords[:, 0] == pytest.approx([-np.sqrt(2), 0.0, np.sqrt(2)])
    assert np.allclose(p.coords[:, 1], 0.0)


def test_pca_equals_the_covariance_eigenvectors_with_a_fixed_sign():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 8)) * np.array([5, 3, 1, 1, 0.5, 0.5, 0.1, 0.1])
    p = emb.pca_2d(x)
    vals, vecs = np.linalg.eigh(np.cov(x.T))  # ascending
    for i, j in enumerate([-1, -2]):
        v = vecs[:, j]
        v = v if v[np.argmax(np.abs(v))] > 0 else -v
        assert np.allclose(p.components[i], v, atol=1e-8)
    assert p.explained == pytest.approx(vals[[-1, -2]] / vals.sum())
    assert p.explained.sum() <= 1
    # Deterministic: the same picture again, and when the input is negated the coords flip, not the rule.
    assert np.array_equal(emb.pca_2d(x).coords, p.coords)
    assert np.allclose(emb.pca_2d(-x).components, p.components)


def test_pca_few_points():
    one = emb.pca_2d(np.ones((1, 4)))
    assert one.coords.shape == (1, 2) and np.allclose(one.coords, 0) and np.allclose(one.explained, 0)
    two = emb.pca_2d(np.array([[0.0, 0.0, 1.0], [2.0, 0.0, 1.0]]))
    assert two.explained == pytest.approx([1.0, 0.0]) and abs(two.coords[0, 0] - two.coords[1, 0]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        emb.pca_2d(np.ones((0, 3)))


# ---------------------------------------------------------------------------- lengths


def test_norm_vs_id_textbook_and_oracle():
    assert emb.norm_vs_id(np.array([1.0, 2.0, 3.0, 5.0])).spearman == pytest.approx(1.0)
    assert emb.norm_vs_id(np.array([4.0, 3.0, 2.0, 1.0])).pearson == pytest.approx(-1.0)
    rng = np.random.default_rng(1)
    y = rng.normal(size=500) + np.linspace(0, 2, 500)
    y[10] = y[11]  # a tie: Spearman gives tied values their average rank
    s = emb.norm_vs_id(y, first_id=0, n_bins=5)
    assert s.pearson == pytest.approx(np.corrcoef(np.arange(500), y)[0, 1])
    assert s.bin_means == pytest.approx(y.reshape(5, 100).mean(axis=1))
    assert 0 < s.spearman < 1
    skipped = emb.norm_vs_id(y, first_id=100, n_bins=4)
    assert skipped.ids[0] == 100 and len(skipped.norms) == 400


def test_norm_vs_id_on_the_live_table(index):
    s = emb.norm_vs_id(index.norms)
    # Measured, not assumed: the correlation is a real number in range and bins cover every row.
    assert -1 <= s.pearson <= 1 and -1 <= s.spearman <= 1
    assert s.bins[0] == 0 and s.bins[-1] == index.shape[0]
    assert np.isclose(s.bin_means.mean(), index.norms.mean(), rtol=0.05)


def test_sample_ids_is_seeded():
    a, b = emb.sample_ids(49152, 100, seed=5), emb.sample_ids(49152, 100, seed=5)
    assert np.array_equal(a, b) and len(set(a.tolist())) == 100 and np.all(np.diff(a) > 0)
    assert not np.array_equal(a, emb.sample_ids(49152, 100, seed=6))
    assert len(emb.sample_ids(10, 100)) == 10


# ---------------------------------------------------------------------------- words


def test_parse_words():
    assert emb.parse_words("king, queen,, king ;man").words == ("king", "queen", "man")
    assert emb.parse_words("cat dog").words == ("cat", "dog")
    assert emb.parse_words("New York, Rome").words == ("New York", "Rome")
    assert emb.parse_words("").words == () and emb.parse_words(" , ;\n").words == ()
    many = emb.parse_words(", ".join(f"w{i}" for i in range(200)))
    assert many.cut_words and many.n_typed == 200 and len(many.words) == emb.MAX_WORDS
    long = emb.parse_words("a" * 500)
    assert long.cut_chars and len(long.words[0]) == emb.MAX_WORD_CHARS


def test_word_pieces_on_the_real_tokenizer(real, table):
    tok = real.tokenizer
    king = emb.word_pieces(tok, "king")
    assert king.pieces == ("␣king",) and king.ids == tuple(tok(" king", add_special_tokens=False)["input_ids"])
    pesca = emb.word_pieces(tok, "pesca")
    assert pesca.n_pieces > 1 and "".join(pesca.pieces) == "␣pesca"
    assert np.allclose(emb.word_vector(table, pesca.ids), table[list(pesca.ids)].mean(axis=0))
    assert np.array_equal(emb.word_vector(table, king.ids), table[king.ids[0]])
    smile = emb.word_pieces(tok, "😀")
    assert smile.raw_bytes and not smile.unknown and smile.n_pieces >= 2
    with pytest.raises(ValueError):
        emb.word_vector(table, ())


def test_word_pieces_drop_a_lone_space_piece(byte_tokenizer):
    # The byte tokenizer has no merges: " cat" is four pieces, the space first.
    p = emb.word_pieces(byte_tokenizer, "cat")
    assert p.pieces == ("c", "a", "t")


def test_word_pieces_flag_unknown_tokens():
    class Unk:
        unk_token_id = 0
        all_special_tokens = ["<unk>"]

        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [5, 0]}

        def convert_ids_to_tokens(self, ids):
            return ["▁a" if i else "<unk>" for i in ids]

    p = emb.word_pieces(Unk(), "a∂")
    assert p.unknown and p.pieces == ("␣a", "<unk>")


# ---------------------------------------------------------------------------- the table is a lookup


def test_table_rows_are_the_first_block_input_llama(real, table):
    cap = run_capture(real, "The bank of the river", 64)
    assert emb.lookup_check(table, cap.token_ids, cap.embeddings) == 0.0
    one_hot = np.zeros((cap.n_tokens, table.shape[0]), dtype=np.float32)  # [T, V]: the product we skip
    one_hot[np.arange(cap.n_tokens), cap.token_ids] = 1.0
    assert np.allclose(one_hot @ table, table[cap.token_ids])


def test_table_rows_plus_positions_gpt2(tiny_gpt2):
    cap = run_capture(tiny_gpt2, "hello there", 64)
    with torch.inference_mode():
        wte = tiny_gpt2.adapter.embed(tiny_gpt2.model).weight.float().numpy()
        wpe = tiny_gpt2.adapter.position_embedding(tiny_gpt2.model).weight.float().numpy()
    assert emb.lookup_check(wte, cap.token_ids, cap.embeddings, wpe) < 1e-6
    assert emb.lookup_check(wte, cap.token_ids, cap.embeddings) > 1e-3  # the rows alone miss the positions


# ---------------------------------------------------------------------------- context


def test_find_word_uses_offsets(real):
    cap = run_capture(real, "We sat on the Bank of the riverbank.", 64)
    pos = emb.find_word(cap.text, cap.offsets, "bank")
    assert [cap.tokens[i] for i in pos] == ["␣Bank"]  # the whole word, not the end of "riverbank"
    assert emb.find_word(cap.text, cap.offsets, "money") == []
    assert emb.find_word(cap.text, cap.offsets, "   ") == []
    inside = emb.find_word(cap.text, cap.offsets, "iverb")  # no whole-word match: inside a word
    assert inside and all(cap.offsets[i][0] < cap.text.index("iverb") + 5 for i in inside)


def test_same_word_same_row_different_context(real):
    a = run_capture(real, "We sat on the bank of the river.", 64)
    b = run_capture(real, "I opened an account at the bank.", 64)
    va = emb.in_context(a.resid, emb.find_word(a.text, a.offsets, "bank"))
    vb = emb.in_context(b.resid, emb.find_word(b.text, b.offsets, "bank"))
    assert va.shape == (real.info.n_layers + 1, real.info.d_model)
    cos = emb.cosine_by_depth(va, vb)
    assert cos[0] == pytest.approx(1.0, abs=1e-6)  # RoPE adds nothing at the input: the same row
    assert cos[1:].max() < 0.999  # the layers mix in the context, at different positions
    with pytest.raises(ValueError):
        emb.in_context(a.resid, [])


def test_layer0_differs_with_learned_positions(tiny_gpt2):
    a = run_capture(tiny_gpt2, "ab", 16)
    b = run_capture(tiny_gpt2, "xab", 16)
    va = emb.in_context(a.resid, emb.find_word(a.text, a.offsets, "ab"))
    vb = emb.in_context(b.resid, emb.find_word(b.text, b.offsets, "ab"))
    assert emb.cosine_by_depth(va, vb)[0] < 0.9999  # same bytes, different position rows


def test_the_learned_position_table_is_gpt2s_wpe_read_only_and_none_with_rope(tiny_gpt2, tiny_llama):
    from lib.model.models import learned_position_table

    table = learned_position_table(tiny_gpt2)
    np.testing.assert_array_equal(table, tiny_gpt2.model.transformer.wpe.weight.detach().float().numpy())
    assert table.dtype == np.float32 and not table.flags.writeable  # shared by every session
    assert learned_position_table(tiny_llama) is None  # RoPE: no table


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2", "real"])
def test_final_hidden_equals_hf_last_hidden_state(fixture, request):
    loaded = request.getfixturevalue(fixture)
    text = "Il gatto dorme sul divano."
    cap = run_capture(loaded, text, 64)
    hidden = emb.final_hidden(loaded, cap.resid[-1])
    with torch.inference_mode():
        out = loaded.model(input_ids=torch.tensor([cap.token_ids.tolist()]), output_hidden_states=True)
    oracle = out.hidden_states[-1][0].float().numpy()
    assert np.allclose(hidden, oracle, atol=1e-4 * max(1.0, np.abs(oracle).max()))
    assert np.allclose(emb.sentence_vector(hidden), oracle.mean(axis=0), atol=1e-4 * max(1.0, np.abs(oracle).max()))


def test_sentence_vector_rejects_nothing():
    with pytest.raises(ValueError):
        emb.sentence_vector(np.zeros((0, 4)))
    assert emb.sentence_vector(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx([0.5, 0.5])

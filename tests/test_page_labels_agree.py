"""Figures side by side say what they are (AppTest): the attention lesson's mean-over-rows metrics
beside its one example row, the sampling lesson's top token after the learner's filters."""

from __future__ import annotations

from lib.course import i18n
from tests.apptest import start, view_data


def test_the_scaling_metrics_say_mean_and_the_chart_says_one_example_row():
    labels = i18n.ui("it")
    at = start("it", "pages/05_attention.py")
    sent = view_data(at, "attention.scaling_view")["labels"]  # drawn by the view
    assert sent["max_raw"] == labels["attention.scaling.max_raw"] and "media" in labels["attention.scaling.max_raw"]
    assert sent["row"] == labels["attention.scaling.row"] and "esempio" in labels["attention.scaling.row"]


def test_the_sampling_top_token_is_said_to_be_after_the_filters():
    labels = i18n.ui("it")
    at = start("it", "pages/07_sampling.py")
    assert view_data(at, "sampling.view")["labels"]["top"] == labels["sampling.metric.top"]  # drawn by the view
    assert "filtri" in labels["sampling.metric.top"]


def test_the_kv_cache_metrics_say_their_number_format():
    """The calculator's cache per token (bf16 by default; its view fills the format in) and the
    measured cache per token (the loaded model's float32) sit on one page: each says its format."""
    for lang in i18n.LANGS:
        at = start(lang, "pages/08_kvcache.py")
        sent = view_data(at, "kvcache.view")
        assert sent["labels"]["kvcache.per_token"] == i18n.label(lang, "kvcache.per_token")
        assert "{dtype}" in sent["labels"]["kvcache.per_token"]
        shown = [m.label for m in at.metric]
        assert i18n.label(lang, "kvcache.measure.per_token").format(dtype="float32") in shown

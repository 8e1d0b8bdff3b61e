"""The real download path against a local stand-in of the hub (drivers/hub_standin.py): every family
loads through lib.model.models.load_model, and every refusal happens where it should, with the request
log as the witness. No internet is needed; huggingface_hub and transformers are not mocked.
"""

import time

import pytest
import torch

from lib.model import hub as hub_lib
from lib.model.models import ModelLoadError, load_model
from drivers.hub_standin import FAMILIES, OWNER, HubStandIn, Repo
from tests.ci import skip_or_fail

EXPECTED_FAMILY = {"tiny-gpt2": "gpt2", "tiny-llama": "llama", "tiny-qwen2": "llama", "tiny-qwen3": "llama",
                   "tiny-mistral": "llama"}


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_loads_from_the_stand_in(hub, name, byte_tokenizer):
    stages = []
    lm = load_model(f"{OWNER}/{name}", lambda fraction, stage, *status: stages.append((fraction, stage)))
    assert lm.info.name == f"{OWNER}/{name}"
    assert lm.info.family == EXPECTED_FAMILY.get(name, "gemma3")
    assert lm.info.n_params == lm.info.n_params_formula
    # The weights are the served ones: the same seeded random model, logits equal.
    from transformers import AutoModelForCausalLM

    from drivers.hub_standin import family_configs

    torch.manual_seed(0)
    ref = AutoModelForCausalLM.from_config(family_configs()[name]).eval()
    ids = lm.tokenizer("Dentro il Transformer", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        assert torch.allclose(lm.model(ids).logits, ref(ids).logits, atol=1e-5)
    assert lm.tokenizer.decode(ids[0]) == "Dentro il Transformer"
    # Stages in order, ending ready; config before weights in the request log.
    assert [s for _, s in stages][0] == "load.connecting" and stages[-1] == (1.0, "load.ready")
    assert [f for f, _ in stages] == sorted(f for f, _ in stages)
    paths = [p for _, p in hub.requests]
    first_weight = next(i for i, p in enumerate(paths) if p.endswith(".safetensors"))
    assert any(p.endswith("/config.json") for p in paths[:first_weight])
    assert not any(p.endswith(".py") for p in paths)


def test_a_second_load_reads_the_cache(hub):
    load_model(f"{OWNER}/tiny-llama")
    hub.reset()
    load_model(f"{OWNER}/tiny-llama")
    assert hub.requested(f"{OWNER}/tiny-llama", (".safetensors", ".json")) == []  # only the listing was asked


def test_too_large_is_refused_before_any_weight_byte(hub):
    with pytest.raises(ModelLoadError) as e:
        load_model(f"{OWNER}/too-big")
    assert e.value.code == "too_large" and e.value.values["n_params"] > 7e9
    assert hub.requested(f"{OWNER}/too-big") == []
    assert hub.requested(f"{OWNER}/too-big", ("config.json",))  # the config alone was read


def test_unsupported_architecture_is_refused_before_any_weight_byte(hub):
    with pytest.raises(ModelLoadError) as e:
        load_model(f"{OWNER}/bert")
    assert e.value.code == "unsupported" and "gpt2" in e.value.values["supported"]
    assert hub.requested(f"{OWNER}/bert") == []


def test_pickled_weights_only_are_refused(hub):
    with pytest.raises(ModelLoadError) as e:
        load_model(f"{OWNER}/bin-only")
    assert e.value.code == "no_safetensors" and "pytorch_model.bin" in e.value.detail
    assert hub.requested(f"{OWNER}/bin-only") == []


def test_remote_code_is_refused_and_never_run(hub):
    with pytest.raises(ModelLoadError) as e:
        load_model(f"{OWNER}/remote-code")
    assert e.value.code == "remote_code" and "AutoModelForCausalLM" in e.value.values["auto_map"]
    assert not hub.marker.exists()
    assert hub.requested(f"{OWNER}/remote-code", (".py", ".safetensors")) == []


def test_unknown_id_is_not_found(hub):
    with pytest.raises(ModelLoadError) as e:
        load_model(f"{OWNER}/no-such-model")
    assert e.value.code == "not_found"
    with pytest.raises(ModelLoadError) as e:
        load_model("no-such-bare-name")
    assert e.value.code == "not_found"


def test_download_progress_reports_bytes_speed_and_time_left(hub):
    reports = []
    load_model(f"{OWNER}/slow-llama", lambda fraction, stage, *status: reports.append((fraction, stage, *status)))
    downloads = [(f, s[0]) for f, stage, *s in reports if stage == "load.download"]
    weights = [s for _, s in downloads if s.file == "model.safetensors"]
    size = len(hub.repos[f"{OWNER}/slow-llama"].files["model.safetensors"])
    assert len(weights) >= 4  # a ~1 s download, a report every quarter second
    assert all(s.total == size for s in weights)
    done = [s.done for s in weights]
    assert done == sorted(done) and done[-1] == size
    assert all(s.speed > 0 and s.eta is not None for s in weights[:-1])
    assert weights[-1].all_done == weights[-1].all_total == sum(
        len(hub.repos[f"{OWNER}/slow-llama"].files[f]) for f in {s.file for _, s in downloads})
    fractions = [f for f, _ in downloads]
    assert fractions == sorted(fractions) and 0.1 <= fractions[0] and fractions[-1] <= 0.85 + 1e-9
    assert weights[-1].index == weights[-1].n_files  # the weights come last


def test_server_gone_mid_download_is_interrupted(hub_server, byte_tokenizer, tmp_path, monkeypatch):
    """A hub that goes away in the middle of the weights: a clear code, not a traceback."""
    from lib.model import hub as hub_lib

    folder = hub_server.repos[f"{OWNER}/tiny-llama"].folder
    dying = HubStandIn([Repo(f"{OWNER}/dying", folder, die_after=40_000)])
    monkeypatch.setenv("HF_ENDPOINT", dying.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub_lib.forget_unreachable()
    try:
        with pytest.raises(ModelLoadError) as e:
            load_model(f"{OWNER}/dying")
        assert e.value.code == "interrupted"
        assert dying.gone
    finally:
        dying.stop()
        hub_lib.forget_unreachable()


def test_unresolvable_hub_answers_offline_at_once(monkeypatch, tmp_path):
    """A machine without internet: the hub's name does not resolve. The answer is "offline", and the
    second learner gets it from memory. Times are printed, not asserted (speed is measured, not tested)."""
    monkeypatch.setenv("HF_ENDPOINT", "http://nonexistent.invalid")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub_lib.forget_unreachable()
    try:
        times = []
        for _ in range(2):
            start = time.monotonic()
            with pytest.raises(ModelLoadError) as e:
                load_model("openai-community/gpt2")
            times.append(time.monotonic() - start)
            assert e.value.code == "offline"
        print(f"offline answer: first {times[0]:.2f} s, second {times[1]:.3f} s")
        assert not hub_lib.reachable()  # remembered
    finally:
        hub_lib.forget_unreachable()


def test_offline_mode_loads_a_model_already_in_the_cache(hub, monkeypatch):
    """Pre-downloaded for a classroom without internet: HF_HUB_OFFLINE=1 and the stand-in gone quiet."""
    load_model(f"{OWNER}/tiny-qwen2")
    hub.reset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = load_model(f"{OWNER}/tiny-qwen2")
    assert lm.info.model_type == "qwen2" and hub.requests == []
    with pytest.raises(ModelLoadError) as e:
        load_model(f"{OWNER}/tiny-llama")  # not in this cache
    assert e.value.code == "offline" and hub.requests == []


def test_unreachable_hub_falls_back_to_the_cache(hub, monkeypatch):
    load_model(f"{OWNER}/tiny-gpt2")
    monkeypatch.setenv("HF_ENDPOINT", "http://nonexistent.invalid")
    lm = load_model(f"{OWNER}/tiny-gpt2")
    assert lm.info.family == "gpt2"


def test_a_model_pre_downloaded_with_the_hf_command_loads_offline(hub, monkeypatch):
    """docs/models.md's offline classroom recipe: `hf download <id> --include ...` into the cache while
    online, then the app with HF_HUB_OFFLINE=1 loads it without a single request."""
    import os
    import shutil
    import subprocess

    hf = shutil.which("hf", path=os.path.dirname(os.path.realpath(__file__)) + "/../.venv/bin") or shutil.which("hf")
    if hf is None:
        skip_or_fail("the hf command is not installed")
    name = f"{OWNER}/tiny-mistral"
    # The same patterns as the documentation's command.
    patterns = ["*.json", "*.safetensors", "*.txt", "*.model", "*.jinja"]
    done = subprocess.run([hf, "download", name, *[x for p in patterns for x in ("--include", p)]],
                          env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert hub.requested(name)  # the weights came through the command
    hub.reset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = load_model(name)
    assert lm.info.model_type == "mistral" and hub.requests == []


def test_xet_downloads_report_through_the_same_bar():
    """On huggingface.co large files come through Xet, whose reporter drives the bar class with its
    own calls (update, update_transfer, totals, postfixes): the bytes still reach the page's report."""
    from types import SimpleNamespace

    from huggingface_hub.utils._xet_progress_reporting import XetDownloadProgressReporter

    reports = []
    tracker = hub_lib._Tracker({"model.safetensors": 3000}, reports.append, clock=iter(range(100)).__next__)
    tracker.begin("model.safetensors")
    reporter = XetDownloadProgressReporter(reconstruction_desc="model.safetensors", total=3000, log_level=20,
                                           tqdm_class=hub_lib._bar_class(tracker))
    for done in (1000, 2000, 3000):
        reporter.update_progress(SimpleNamespace(total_bytes_completed=done, total_transfer_bytes_completed=done // 2,
                                                 total_bytes_completion_rate=1e6, total_transfer_bytes_completion_rate=5e5,
                                                 total_bytes=3000))
    reporter.close()
    tracker.end("model.safetensors")
    assert [r.done for r in reports] == [1000, 2000, 3000, 3000]
    assert reports[-1].all_done == reports[-1].all_total == 3000
    assert reports[0].speed == 1000.0 and reports[0].eta == 2.0  # 1,000 bytes in one tick of the clock; 2,000 left

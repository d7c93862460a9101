"""LLMs sized from their config.json (issue #20): counts from shapes, shipped profiles, MoE / MLA / sliding window /
serving formats, config paths and Hub ids (a loopback fake Hub, never the network), family sizes refused."""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from gpu_advisor.errors import UnknownModelError, WorkloadError
from gpu_advisor.memory import estimate_memory
from gpu_advisor.memory.hfconfig import count
from gpu_advisor.memory.serving import kv_capacity
from gpu_advisor.memory.transformer import kv_bytes_per_token_layer, kv_cache_bytes
from gpu_advisor.kb.models import knowledge, resolve_transformer
from gpu_advisor.workload import Workload

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tools" / "llm_configs"
FIXTURES = ROOT / "tests" / "fixtures" / "hf_configs"
GIB = 2.0**30
MANIFEST = yaml.safe_load((CONFIGS / "models.yaml").read_text(encoding="utf-8"))["models"]


@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_recorded_config_count_matches_published_size(key: str) -> None:
    """Parameters counted from each recorded config's shapes are within 3 % of the published size, and the shipped
    profile is what the generator makes of that config."""
    m = MANIFEST[key]
    c = count(json.loads((CONFIGS / m["config"]).read_text(encoding="utf-8")))
    if m.get("no_lm_head"):      # an embedding model published without the lm_head its config names
        c.head_params = 0.0
    assert c.total / 1e9 == pytest.approx(m["stated_params_billion"], rel=0.03), key
    t = knowledge().transformers[key]
    assert t.params_billion == pytest.approx(c.total / 1e9, rel=1e-4)
    assert t.stated_params_billion == m["stated_params_billion"] and t.source.startswith("https://") and t.as_of
    if m.get("stated_active_params_billion"):   # gpt-oss states active parameters without the input embedding
        active = c.active - (c.embed_params if key.startswith("gpt-oss") else 0)
        assert active / 1e9 == pytest.approx(m["stated_active_params_billion"], rel=0.12), key


def test_generated_profiles_are_up_to_date() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_llm_profiles.py"), "--check"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr


# 60 names people write (model names, Hub ids, instruct variants, distillations) -> profile, published size (B)
POPULAR = [
    ("Qwen/Qwen3-0.6B", "qwen3-0.6b", 0.6), ("Qwen3-1.7B", "qwen3-1.7b", 1.7), ("Qwen/Qwen3-4B", "qwen3-4b", 4.0),
    ("Qwen3-8B", "qwen3-8b", 8.2), ("Qwen/Qwen3-14B", "qwen3-14b", 14.8), ("Qwen3-32B", "qwen3-32b", 32.8),
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b", 30.5), ("Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", 30.5),
    ("Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b", 235), ("Qwen/Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder-480b-a35b", 480),
    ("Qwen/Qwen2.5-0.5B", "qwen2.5-0.5b", 0.49), ("Qwen2.5-1.5B-Instruct", "qwen2.5-1.5b", 1.54),
    ("Qwen/Qwen2.5-3B", "qwen2.5-3b", 3.09), ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b", 7.61),
    ("Qwen2.5-14B", "qwen2.5-14b", 14.7), ("Qwen2.5-32B-Instruct", "qwen2.5-32b", 32.5),
    ("Qwen/Qwen2.5-72B", "qwen2.5-72b", 72.7), ("QwQ-32B", "qwen2.5-32b", 32.5), ("Qwen2-7B", "qwen2.5-7b", 7.6),
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3", 671), ("DeepSeek-V3-0324", "deepseek-v3", 671),
    ("deepseek-ai/DeepSeek-R1", "deepseek-r1", 671), ("DeepSeek-R1-0528", "deepseek-r1", 671),
    ("Qwen2.5-72B-Instruct", "qwen2.5-72b", 72.7), ("DeepSeek-R1-Distill-Qwen-7B", "qwen2.5-7b", 7.62),
    ("DeepSeek-R1-Distill-Qwen-14B", "qwen2.5-14b", 14.8), ("DeepSeek-R1-Distill-Qwen-32B", "qwen2.5-32b", 32.8),
    ("DeepSeek-R1-Distill-Llama-8B", "llama-3.1-8b", 8.03), ("DeepSeek-R1-Distill-Llama-70B", "llama-3.1-70b", 70.6),
    ("deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite", 15.7), ("moonshotai/Kimi-K2-Instruct", "kimi-k2", 1000),
    ("meta-llama/Llama-3.1-8B", "llama-3.1-8b", 8.03), ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", 8.03),
    ("Llama-3.1-70B", "llama-3.1-70b", 70.6), ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b", 70.6),
    ("Llama-3.1-405B", "llama-3.1-405b", 405), ("meta-llama/Llama-3.2-1B", "llama-3.2-1b", 1.23),
    ("Llama-3.2-3B-Instruct", "llama-3.2-3b", 3.21), ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout", 109),
    ("Llama-4-Maverick-17B-128E", "llama-4-maverick", 400), ("mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b", 46.7),
    ("Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", 46.7), ("mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b", 141),
    ("mistralai/Mistral-7B-v0.1", "mistral-7b", 7.24), ("Mistral-7B-Instruct-v0.2", "mistral-7b-v0.2", 7.24),
    ("mistralai/Mistral-7B-v0.3", "mistral-7b-v0.3", 7.25), ("openai/gpt-oss-20b", "gpt-oss-20b", 21),
    ("gpt-oss-120b", "gpt-oss-120b", 117), ("google/gemma-2-2b", "gemma-2-2b", 2.61), ("gemma-2-9b-it", "gemma-2-9b", 9.24),
    ("google/gemma-2-27b", "gemma-2-27b", 27.2), ("google/gemma-3-1b-it", "gemma-3-1b", 1.0),
    ("microsoft/Phi-3.5-mini-instruct", "phi-3.5-mini", 3.8), ("Phi-3-mini-4k-instruct", "phi-3-mini-4k", 3.82),
    ("internlm/internlm2_5-7b-chat", "internlm2.5-7b", 7.74), ("THUDM/glm-4-9b-chat", "glm-4-9b", 9.4),
    ("01-ai/Yi-1.5-34B", "yi-34b", 34.4), ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b", 1.1),
    ("bert-base-uncased", "bert-base", 0.11), ("FacebookAI/roberta-large", "roberta-large", 0.355),
]


def test_popular_list_has_sixty_names() -> None:
    assert len({n for n, _, _ in POPULAR}) == 60


@pytest.mark.parametrize("name,key,published", POPULAR)
def test_popular_names_resolve_with_their_size(name: str, key: str, published: float) -> None:
    assert resolve_transformer(name) == key
    assert knowledge().transformers[key].params_billion == pytest.approx(published, rel=0.03)


# --- acceptance figures -------------------------------------------------------------------------------------------
def _serve(model: str, **kw) -> object:
    return estimate_memory(Workload(task="inference", model=model, **kw))


def test_llama31_8b_bf16_weights_and_kv_per_token() -> None:
    est = _serve("meta-llama/Llama-3.1-8B", seq_len=8192, batch_size_per_gpu=1)
    assert est.breakdown["weights"] == pytest.approx(14.96, rel=0.02)
    assert est.profile.kv_cache_bytes_per_token == 128 * 1024           # 32 layers x 2 x 8 x 128 x 2 B
    assert est.breakdown["kv_cache"] == pytest.approx(8192 * 128 * 1024 / GIB, abs=1e-3)


def test_deepseek_v3_mla_kv_is_the_formula() -> None:
    t = knowledge().transformers["deepseek-v3"]
    assert (t.kv_lora_rank, t.qk_rope_head_dim, t.layers) == (512, 64, 61)
    assert kv_bytes_per_token_layer(t) == (512 + 64) * 2
    est = _serve("deepseek-ai/DeepSeek-V3", seq_len=32768, batch_size_per_gpu=4)
    assert est.profile.kv_cache_bytes_per_token == 61 * 576 * 2
    assert est.breakdown["kv_cache"] == pytest.approx(61 * 576 * 2 * 32768 * 4 / GIB, abs=1e-3)


def test_deepseek_v3_fp8_weights_and_what_stays_16bit() -> None:
    est = _serve("DeepSeek-V3", seq_len=4096)
    assert 625 <= est.breakdown["weights"] <= 650
    said = " ".join(a.text.en for a in est.assumptions)
    assert "fp8" in said and "embed_tokens" in said and "lm_head" in said and "multi-token-prediction" in said
    t = knowledge().transformers["deepseek-v3"]
    # 671 B main-model parameters; the MTP module (DeepSeek README: 14 B) is counted apart, not served by default
    assert t.params_billion == pytest.approx(671, rel=0.003) and t.mtp_params_billion == pytest.approx(14, rel=0.05)
    bf16 = _serve("DeepSeek-V3", seq_len=4096, quantization="none", precision="bf16")
    assert bf16.breakdown["weights"] == pytest.approx(671.0e9 * 2 / GIB, rel=0.003)


@pytest.mark.parametrize("model,experts,topk", [("Qwen/Qwen3-30B-A3B", 128, 8), ("mistralai/Mixtral-8x7B-v0.1", 8, 2)])
def test_moe_lora_estimate_counts_every_expert_and_routes_activations(model: str, experts: int, topk: int) -> None:
    w = dict(task="llm_finetune", model=model, finetune_method="lora", seq_len=2048, batch_size_per_gpu=1)
    est = estimate_memory(Workload(**w))
    t = knowledge().transformers[resolve_transformer(model)]
    assert (t.experts, t.experts_per_tok) == (experts, topk)
    b = est.breakdown
    assert {"weights", "optimizer", "activations"} <= set(b)
    trainable = est.profile.trainable_params_billion * 1e9
    # frozen base: every expert at bf16 (embeddings too) + the fp32 adapters
    assert b["weights"] == pytest.approx((t.params_billion * 1e9 * 2 + trainable * 4) / GIB, rel=0.01)
    assert b["optimizer"] == pytest.approx(trainable * 8 / GIB, rel=0.01)
    # adapters on every expert's gate/up/down: r x (h + I_e) x 3 x experts per MoE layer
    r, h, ie = 16, t.hidden, t.moe_intermediate
    assert trainable > t.moe_layers * experts * 3 * r * (h + ie)
    # activations grow with the routed experts: more of them per token, more saved values
    dense_like = t.model_copy(update={"experts_per_tok": 1})
    from gpu_advisor.memory.transformer import _per_token_layer_values
    s = {"finetune_method": "lora", "lora_rank": 16}
    assert _per_token_layer_values(t, s) > _per_token_layer_values(dense_like, s)
    assert "experts" in est.formula.en and f"top-{topk}" in est.formula.en
    flops = est.train_flops_per_sample / (6 * 2048)
    assert flops == pytest.approx(t.active_params_billion * 1e9, rel=1e-6) and flops < t.params_billion * 1e9 / 3


def test_sliding_window_bounds_kv_on_local_layers() -> None:
    t = knowledge().transformers["gpt-oss-120b"]
    assert (t.sliding_window, t.sliding_layers, t.layers) == (128, 18, 36)
    full = 36 * 32768 * kv_bytes_per_token_layer(t)
    bounded = kv_cache_bytes(t, 32768, 2.0, 32768)
    assert bounded == pytest.approx((18 * 32768 + 18 * 128) * kv_bytes_per_token_layer(t)) and bounded < 0.51 * full
    g = knowledge().transformers["gemma-2-9b"]
    assert (g.sliding_window, g.sliding_layers) == (4096, 21)
    est = _serve("gemma-2-9b", seq_len=8192)
    assert est.breakdown["kv_cache"] == pytest.approx(kv_cache_bytes(g, 8192, 2.0, 8192) / GIB, abs=1e-3)


def test_kv_fp8_halves_the_cache_and_gpt_oss_serves_mxfp4() -> None:
    a = _serve("Llama-3.1-8B", seq_len=16384, batch_size_per_gpu=2)
    b = _serve("Llama-3.1-8B", seq_len=16384, batch_size_per_gpu=2, kv_cache_dtype="fp8")
    assert b.breakdown["kv_cache"] == pytest.approx(a.breakdown["kv_cache"] / 2, abs=1e-3)
    oss = _serve("openai/gpt-oss-120b")
    t = knowledge().transformers["gpt-oss-120b"]
    # experts at 4.25 bit (MXFP4), attention / router / embeddings bf16
    expect = t.quantized_params_billion * 1e9 * (0.5 + 1 / 32) + (t.params_billion - t.quantized_params_billion) * 1e9 * 2
    assert oss.breakdown["weights"] == pytest.approx(expect / GIB, rel=1e-3) and 55 < oss.breakdown["weights"] < 66


def test_serving_formats_for_a_dense_model() -> None:
    w = {q: _serve("Qwen2.5-7B", quantization=q).breakdown["weights"] for q in ("none", "fp8", "int8", "int4", "fp4")}
    assert w["none"] > w["fp8"] > w["int4"] and w["fp8"] == pytest.approx(w["int8"], rel=0.02)
    assert w["fp4"] == pytest.approx(w["int4"], rel=0.05)


def test_kv_capacity_under_gpu_memory_utilization() -> None:
    t = knowledge().transformers["llama-3.1-8b"]
    cap = kv_capacity(t, seq_len=8192, gpu_memory_gib=80.0, weights_gib=14.96, activations_gib=1.0, utilization=0.9)
    assert cap.budget_gib == pytest.approx(0.9 * 80 - 14.96 - 1.0 - 0.5)
    assert cap.tokens == int(cap.budget_gib * GIB // (128 * 1024)) and cap.sequences == cap.tokens // 8192
    with pytest.raises(ValueError):
        kv_capacity(t, 8192, 80.0, 14.96, 1.0, utilization=1.5)


# --- configs the knowledge base does not ship -----------------------------------------------------------------------
def test_unshipped_config_sized_for_lora_and_serving(tmp_path: Path) -> None:
    cfg = FIXTURES / "mimo-7b-base.json"
    assert resolve_transformer("XiaomiMiMo/MiMo-7B-Base") is None
    lora = estimate_memory(Workload(task="llm_finetune", model=str(cfg), finetune_method="lora"))
    serve = estimate_memory(Workload(task="inference", model=str(cfg), seq_len=4096))
    c = count(json.loads(cfg.read_text()))
    assert lora.profile.params_billion == pytest.approx(c.total / 1e9, rel=1e-4)
    assert lora.breakdown["weights"] > c.total * 2 / GIB and lora.profile.trainable_params_billion > 0
    assert serve.breakdown["weights"] == pytest.approx(c.total * 2 / GIB, rel=1e-3)
    assert any("shapes read from" in a.text.en for a in lora.assumptions)
    folder = tmp_path / "mimo"
    folder.mkdir()
    shutil.copy(cfg, folder / "config.json")
    same = estimate_memory(Workload(task="inference", model=str(folder), seq_len=4096))
    assert same.breakdown == serve.breakdown


def test_vlm_config_counts_its_vision_tower() -> None:
    c = count(json.loads((FIXTURES / "qwen3-vl-8b-instruct.json").read_text()))
    assert 0.3e9 < c.vision_params < 0.7e9 and c.layers == 36 and c.hidden == 4096
    est = estimate_memory(Workload(task="llm_finetune", model=str(FIXTURES / "qwen3-vl-8b-instruct.json"),
                                   finetune_method="qlora"))
    assert est.profile.params_billion == pytest.approx(c.total / 1e9, rel=1e-4)


def test_cli_takes_a_config_path() -> None:
    out = subprocess.run([sys.executable, "-m", "gpu_advisor.cli", "estimate", "--task", "inference", "--model",
                          str(FIXTURES / "mimo-7b-base.json"), "--lang", "en", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0 and "--format" in out.stderr:
        out = subprocess.run([sys.executable, "-m", "gpu_advisor.cli", "estimate", "--task", "inference", "--model",
                              str(FIXTURES / "mimo-7b-base.json"), "--lang", "en"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "mimo-7b-base" in out.stdout


@pytest.mark.parametrize("body,field", [("{not json", "JSONDecodeError"), ('{"hidden_size": 10}', "num_hidden_layers"),
                                        ("[1, 2]", "a JSON object")])
def test_bad_config_file_is_a_clear_error(tmp_path: Path, body: str, field: str) -> None:
    p = tmp_path / "config.json"
    p.write_text(body)
    with pytest.raises(WorkloadError) as err:
        estimate_memory(Workload(task="inference", model=str(p)))
    assert err.value.field == "model" and field in err.value.message("en") and "config" in err.value.message("zh")


# --- a fake Hub on the loopback interface ---------------------------------------------------------------------------
class _FakeHub(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    seen: list[str] = []

    def _reply(self, body: bool) -> None:
        self.seen.append(f"{self.command} {self.path} {self.headers.get('authorization', '')}")
        data = self.files.get(self.path.split("?")[0])
        if data is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", '"cfg-etag-1"')
        self.send_header("X-Repo-Commit", "0" * 40)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_HEAD(self) -> None:  # noqa: N802
        self._reply(False)

    def do_GET(self) -> None:  # noqa: N802
        self._reply(True)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def fake_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("huggingface_hub")
    _FakeHub.files = {"/XiaomiMiMo/MiMo-7B-Base/resolve/main/config.json": (FIXTURES / "mimo-7b-base.json").read_bytes()}
    _FakeHub.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    from gpu_advisor.memory import modelsource
    modelsource._from_hub.cache_clear()
    yield server
    server.shutdown()
    server.server_close()
    modelsource._from_hub.cache_clear()
    import gc
    gc.collect()


def test_hub_id_through_a_fake_endpoint(fake_hub, monkeypatch: pytest.MonkeyPatch) -> None:
    est = estimate_memory(Workload(task="inference", model="XiaomiMiMo/MiMo-7B-Base", seq_len=4096))
    local = estimate_memory(Workload(task="inference", model=str(FIXTURES / "mimo-7b-base.json"), seq_len=4096))
    assert est.breakdown == local.breakdown and est.profile.display == "XiaomiMiMo/MiMo-7B-Base"
    assert any("config.json" in s for s in _FakeHub.seen) and any("hf_test_token" in s for s in _FakeHub.seen)
    lora = estimate_memory(Workload(task="llm_finetune", model="XiaomiMiMo/MiMo-7B-Base", finetune_method="lora"))
    assert lora.profile.trainable_params_billion > 0
    # cached on disk: offline, the same id still resolves without a request
    from gpu_advisor.memory import modelsource
    modelsource._from_hub.cache_clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = len(_FakeHub.seen)
    again = estimate_memory(Workload(task="inference", model="XiaomiMiMo/MiMo-7B-Base", seq_len=4096))
    assert again.breakdown == est.breakdown and len(_FakeHub.seen) == before


def test_hub_id_missing_or_offline_says_to_pass_the_config(fake_hub, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnknownModelError) as err:
        estimate_memory(Workload(task="inference", model="nobody/no-such-model"))
    assert "config.json" in err.value.message("en") and err.value.field == "model"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UnknownModelError) as err:
        estimate_memory(Workload(task="llm_finetune", model="someone/uncached-model"))
    assert "HF_HUB_OFFLINE" in err.value.message("en") and "config.json" in err.value.message("zh")


def test_without_huggingface_hub_the_error_names_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from gpu_advisor.memory import modelsource
    real = builtins.__import__

    def no_hub(name, *a, **k):
        if name.startswith("huggingface_hub"):
            raise ImportError(name)
        return real(name, *a, **k)
    modelsource._from_hub.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_hub)
    with pytest.raises(UnknownModelError) as err:
        estimate_memory(Workload(task="inference", model="someone/some-llm"))
    modelsource._from_hub.cache_clear()
    assert "huggingface_hub" in err.value.message("en") and "config.json" in err.value.message("en")


# --- a known family, an unknown size --------------------------------------------------------------------------------
@pytest.mark.parametrize("task,name,listed", [
    ("llm_finetune", "Qwen3-72B", "Qwen3 32B"), ("inference", "Qwen/Qwen3-72B", "Qwen3 8B"),
    ("llm_finetune", "Llama-3.1-13B", "Llama 3.1 8B"), ("inference", "Mixtral-8x3B", "Mixtral 8x7B"),
    ("semantic_segmentation", "ConvNeXt-XL", "ConvNeXt-L"), ("semantic_segmentation", "MiT-B6", "MiT-B5"),
    ("object_detection", "ResNet-200", "ResNet-101"), ("semantic_segmentation", "PVTv2-B5", "PVTv2-B4")])
def test_unknown_size_of_a_known_family_is_refused_with_the_sizes(task: str, name: str, listed: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        estimate_memory(Workload(task=task, model=name))
    assert listed in err.value.message("en") and listed in err.value.message("zh")
    assert "No other size stands in" in err.value.message("en")


def test_unknown_size_with_params_billion_is_generic_and_says_so() -> None:
    est = estimate_memory(Workload(task="llm_finetune", model="Qwen3-72B", params_billion=72))
    assert est.profile.key == "unknown" and any("not a sibling" in w.text.en for w in est.warnings)


def test_r1_distill_qwen_1_5b_is_not_answered_with_qwen25_1_5b() -> None:
    """Its embeddings are untied (1.78 B published): Qwen2.5-1.5B's tied 1.54 B profile would under-count it."""
    assert resolve_transformer("DeepSeek-R1-Distill-Qwen-1.5B") is None
    with pytest.raises(UnknownModelError):
        estimate_memory(Workload(task="inference", model="DeepSeek-R1-Distill-Qwen-1.5B"))


@pytest.mark.parametrize("fixture,key", [("deepseek-r1-distill-qwen-32b.json", "qwen2.5-32b"),
                                         ("llama-3.3-70b.json", "llama-3.1-70b"),
                                         ("qwen3-4b-thinking-2507.json", "qwen3-4b")])
def test_same_shape_claims_hold_for_the_recorded_configs(fixture: str, key: str) -> None:
    """A same_shape name is estimated with another model's profile: its own recorded config must have those shapes."""
    c = count(json.loads((FIXTURES / fixture).read_text()))
    t = knowledge().transformers[key]
    assert (c.layers, c.hidden, c.heads, c.kv_heads, c.head_dim, c.intermediate, c.vocab, c.tied) == (
        t.layers, t.hidden, t.heads, t.kv_heads, t.head_dim, t.intermediate, t.vocab, t.tied)
    assert c.total / 1e9 == pytest.approx(t.params_billion, rel=1e-3)


def test_vlm_image_tokens_join_the_sequence() -> None:
    f = str(FIXTURES / "qwen3-vl-8b-instruct.json")
    text = estimate_memory(Workload(task="llm_finetune", model=f, finetune_method="lora", seq_len=1024))
    image = estimate_memory(Workload(task="llm_finetune", model=f, finetune_method="lora", seq_len=1024,
                                     input_size=(448, 448)))
    # Qwen3-VL: patch 16 x spatial merge 2 = one token per 32 x 32 pixels: 14 x 14 = 196 tokens
    assert image.profile.job.seq_len == 1024 + 196 and image.breakdown["activations"] > text.breakdown["activations"]
    assert any(a.field == "image_tokens" and a.value == 196 for a in image.assumptions)


def test_encoder_config_is_sized_as_an_encoder() -> None:
    """A BERT-class embedding model's config (learned positions, token types, pooler): encoder_nlp, 512 tokens."""
    f = FIXTURES / "snowflake-arctic-embed-m.json"
    c = count(json.loads(f.read_text()))
    assert c.total / 1e9 == pytest.approx(0.110, rel=0.03)   # BERT-base shapes: 110 M (Devlin et al. 1810.04805)
    est = estimate_memory(Workload(task="nlp_finetune", model=str(f)))
    assert est.profile.family == "encoder_nlp" and est.profile.job.seq_len == 512
    bert = estimate_memory(Workload(task="nlp_finetune", model="bert-base-uncased"))
    assert est.allocated_peak_gib == pytest.approx(bert.allocated_peak_gib, rel=0.02)


def test_fields_a_config_leaves_out_take_the_config_class_defaults() -> None:
    """Gemma 3's Hub configs name only what differs from Gemma3TextConfig: dropping the fields the recorded Gemma 3 1B
    config repeats from the class defaults (head_dim 256, sliding_window_pattern 6) changes nothing."""
    full = json.loads((CONFIGS / "gemma-3-1b.json").read_text())
    sparse = {k: v for k, v in full.items() if k not in ("head_dim", "sliding_window_pattern")}
    a, b = count(full), count(sparse)
    assert (b.head_dim, b.sliding_layers, b.total) == (a.head_dim, a.sliding_layers, a.total) == (256, 22, a.total)


def test_config_paths_read_only_small_regular_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(WorkloadError) as err:          # a device never ends: refused before reading
        estimate_memory(Workload(task="inference", model="/dev/zero"))
    assert err.value.field == "model"
    big = tmp_path / "config.json"
    big.write_text('{"a": "' + "x" * (4 * 1024 * 1024) + '"}')
    with pytest.raises(WorkloadError) as err:
        estimate_memory(Workload(task="inference", model=str(big)))
    assert "KiB" in err.value.message("en")
    monkeypatch.setenv("GPU_ADVISOR_NO_CONFIG_PATHS", "1")
    with pytest.raises(WorkloadError) as err:
        estimate_memory(Workload(task="inference", model=str(FIXTURES / "mimo-7b-base.json")))
    assert "GPU_ADVISOR_NO_CONFIG_PATHS" in err.value.message("en")


def test_expert_parallelism_splits_the_routed_experts_only() -> None:
    t = knowledge().transformers["qwen3-30b-a3b"]
    base = dict(task="llm_finetune", model="Qwen/Qwen3-30B-A3B", num_gpus=8)
    ddp = estimate_memory(Workload(**base, distributed="ddp")).breakdown
    ep = estimate_memory(Workload(**base, distributed="ddp", expert_parallel=8)).breakdown
    routed = t.routed_expert_params_billion / t.params_billion
    assert ep["weights"] == pytest.approx(ddp["weights"] * ((1 - routed) + routed / 8), rel=1e-3)
    assert ep["optimizer"] == pytest.approx(ddp["optimizer"] * ((1 - routed) + routed / 8), rel=1e-3)
    z = estimate_memory(Workload(**base, distributed="zero2")).breakdown
    zep = estimate_memory(Workload(**base, distributed="zero2", expert_parallel=8)).breakdown
    assert zep["optimizer"] == z["optimizer"] and zep["weights"] < z["weights"] / 4   # ZeRO shards stay 1/n
    with pytest.raises(ValueError):
        Workload(task="llm_finetune", model="Qwen/Qwen3-30B-A3B", num_gpus=4, expert_parallel=8)
    dense = estimate_memory(Workload(task="inference", model="Llama-3.1-8B", num_gpus=2, expert_parallel=2))
    assert any(w.code == "expert_parallel_ignored" for w in dense.warnings)
    tp = estimate_memory(Workload(task="inference", model="DeepSeek-V3", num_gpus=8)).breakdown["weights"]
    ep4 = estimate_memory(Workload(task="inference", model="DeepSeek-V3", num_gpus=8, expert_parallel=4)).breakdown
    assert ep4["weights"] == pytest.approx(tp * 8 * ((1 - 0.9) / 8 + 0.9 / 4), rel=0.1) and ep4["weights"] > tp


def test_expert_parallel_over_num_gpus_names_the_field_in_both_languages() -> None:
    from gpu_advisor.validation import workload_from_dict
    with pytest.raises(WorkloadError) as err:
        workload_from_dict({"task": "llm_finetune", "model": "Qwen3-30B-A3B", "num_gpus": 4, "expert_parallel": 8})
    assert err.value.field == "expert_parallel" and "num_gpus" in err.value.message("en")
    assert "num_gpus" in err.value.message("zh") and "不能超过" in err.value.message("zh")


@pytest.mark.parametrize("patch,named", [
    ({"num_hidden_layers": 10**12}, "num_hidden_layers"), ({"intermediate_size": "big"}, "intermediate_size"),
    ({"num_key_value_heads": 0}, "num_key_value_heads"), ({"num_experts": -1}, "num_experts"),
    ({"hidden_size": True}, "hidden_size"), ({"layer_types": "all"}, "layer_types"),
    ({"vision_config": {"hidden_size": 64, "depth": 10**9}}, "vision_config.depth"),
    ({"text_config": "x"}, "a JSON object")])
def test_out_of_range_config_fields_are_refused_by_name(tmp_path: Path, patch: dict, named: str) -> None:
    cfg = {**json.loads((FIXTURES / "mimo-7b-base.json").read_text()), **patch}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(WorkloadError) as err:
        estimate_memory(Workload(task="inference", model=str(p)))
    assert named in err.value.message("en") and err.value.field == "model"


# --- current open models (Gemma 3, Qwen2.5-VL, Mistral Nemo / Small 3.1, Phi-4, Llama 3.2 Vision) ---------------------
NEW_NAMES = [
    ("Gemma 3 27B", "gemma-3-27b", 27.43), ("gemma3-27b", "gemma-3-27b", 27.43), ("Gemma-3-27B-it", "gemma-3-27b", 27.43),
    ("gemma 3 27b", "gemma-3-27b", 27.43), ("google/gemma-3-12b-it", "gemma-3-12b", 12.19), ("gemma-3-4b-pt", "gemma-3-4b", 4.30),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b", 8.29), ("Qwen2.5-VL-7B", "qwen2.5-vl-7b", 8.29),
    ("Qwen2.5-VL-3B-Instruct", "qwen2.5-vl-3b", 3.75),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b", 12.2), ("Mistral Nemo 12B", "mistral-nemo-12b", 12.2),
    ("Mistral-Small-3.1-24B-Instruct-2503", "mistral-small-3.1-24b", 24.0), ("microsoft/phi-4", "phi-4", 14.7),
    ("Phi-4-mini-instruct", "phi-4-mini", 3.8), ("meta-llama/Llama-3.2-90B-Vision-Instruct", "llama-3.2-90b-vision", 88.8),
    # h13 (models): names users ask for that were refused
    ("Llama 2 70B", "llama-2-70b", 70.0), ("Llama-2-70b-chat-hf", "llama-2-70b", 70.0), ("Qwen2-72B-Instruct", "qwen2-72b", 72.7),
    ("DeepSeek-Coder-V2-Instruct", "deepseek-coder-v2", 236.0), ("DeepSeek-Coder-V2-Lite-Instruct", "deepseek-coder-v2-lite", 15.7),
    ("Qwen3-VL-8B-Instruct", "qwen3-vl-8b", 8.77), ("Qwen/Qwen3-VL-235B-A22B-Thinking", "qwen3-vl-235b-a22b", 235.0),
    ("MiniCPM-2B-sft-bf16", "minicpm-2b", 2.7), ("Qwen2-1.5B-Instruct", "qwen2-1.5b", 1.54),
    ("GLM-4.5", "glm-4.7", 355.0), ("Qwen3-4B-Thinking-2507", "qwen3-4b", 4.02), ("Phi-4-reasoning", "phi-4", 14.7),
    ("Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b", 235.0),
]


@pytest.mark.parametrize("name,key,published", NEW_NAMES)
def test_current_open_model_names_resolve_with_their_size(name: str, key: str, published: float) -> None:
    assert resolve_transformer(name) == key
    assert knowledge().transformers[key].params_billion == pytest.approx(published, rel=0.03)


@pytest.mark.parametrize("name,listed", [("Gemma-3-9B", "Gemma 3 12B"), ("Llama-3.2-11B-Vision-Instruct", "Llama 3.2 90B Vision")])
def test_unshipped_sizes_of_the_new_families_are_refused(name: str, listed: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        estimate_memory(Workload(task="inference", model=name))
    assert listed in err.value.message("en")


def test_gemma3_five_local_layers_per_global_bound_the_kv() -> None:
    """Gemma 3 27B (gemma_pytorch get_config_for_27b_v3: attn_types 5 x LOCAL_SLIDING + GLOBAL, window 1024): 52 of
    62 layers keep at most 1024 tokens; the SigLIP tower (27 x 1152) is in the size, 256 tokens per image."""
    t = knowledge().transformers["gemma-3-27b"]
    assert (t.layers, t.sliding_window, t.sliding_layers, t.kv_heads, t.head_dim) == (62, 1024, 52, 16, 128)
    assert t.image_tokens_per_image == 256 and 0.40 < t.vision_params_billion < 0.44
    per = kv_bytes_per_token_layer(t)
    assert per == 2 * 16 * 128 * 2
    est = _serve("Gemma 3 27B", seq_len=32768)
    assert est.breakdown["kv_cache"] == pytest.approx((10 * 32768 + 52 * 1024) * per / GIB, abs=1e-3)
    image = estimate_memory(Workload(task="llm_finetune", model="gemma-3-4b-it", finetune_method="lora", seq_len=1024,
                                     input_size=(896, 896)))
    assert image.profile.job.seq_len == 1024 + 256


def test_mistral3_image_tokens_read_the_top_level_spatial_merge() -> None:
    """Mistral3Config keeps spatial_merge_size at the top level (not in vision_config): patch 14 x merge 2."""
    cfg = json.loads((CONFIGS / "mistral-small-3.1-24b.json").read_text())
    assert count(cfg).image_token_px == 28 and knowledge().transformers["mistral-small-3.1-24b"].image_token_px == 28
    del cfg["spatial_merge_size"]
    assert count(cfg).image_token_px is None


def test_mllama_cross_attention_layers_keep_no_kv_per_text_token() -> None:
    """Llama 3.2 90B Vision: num_hidden_layers 100 includes the 20 cross_attention_layers, whose K and V are the
    image's: the KV per text token is 80 layers x 2 x 8 KV heads x 128 x 2 B."""
    cfg = json.loads((CONFIGS / "llama-3.2-90b-vision.json").read_text())
    c = count(cfg)
    assert (c.layers, c.cross_attention_layers) == (100, 20)
    t = knowledge().transformers["llama-3.2-90b-vision"]
    est = _serve("Llama-3.2-90B-Vision-Instruct", seq_len=8192, batch_size_per_gpu=2)
    assert est.profile.kv_cache_bytes_per_token == 80 * 2 * 8 * 128 * 2
    assert est.breakdown["kv_cache"] == pytest.approx(80 * 2 * 8 * 128 * 2 * 8192 * 2 / GIB, abs=1e-3)
    said = [a for a in est.assumptions if a.field == "cross_attention_kv"]
    assert said and "20 of 100" in said[0].text.en and "20 层" in said[0].text.zh    # what is not counted is said
    assert kv_cache_bytes(t, 4096, 2.0, 4096) == 80 * 4096 * kv_bytes_per_token_layer(t)
    # the cross-attention layers' own weights: q_norm / k_norm (head_dim each) and two gates on top of a self layer
    plain = count({**cfg, "text_config": {k: v for k, v in cfg["text_config"].items() if k != "cross_attention_layers"}})
    assert plain.cross_attention_layers == 0 and c.total - plain.total == 20 * (2 * 128 + 2)
    # the vision model's 8 gated global layers are counted with its 32 local ones
    assert 0.8e9 < c.vision_params < 0.9e9


@pytest.mark.parametrize("question,model,key", [
    ("ollama 跑 gemma3:27b 需要多大显存", "gemma3:27b", "gemma-3-27b"), ("qwen2.5vl:7b inference", "qwen2.5vl:7b", "qwen2.5-vl-7b"),
    ("phi4:14b qlora", "phi4:14b", "phi-4"), ("deepseek-r1:671b 部署", "deepseek-r1:671b", "deepseek-r1"),
    ("ollama deepseek-r1:7b 需要多大显存", "deepseek-r1:7b", None), ("llama3.2-vision:11b 部署", "llama3.2-vision:11b", None),
    ("batch:4 微调 Qwen2.5-7B", "Qwen2.5-7B", "qwen2.5-7b")])
def test_ollama_size_tags_are_part_of_the_name(question: str, model: str, key: str | None) -> None:
    """An Ollama tag ("name:size") names the size: read whole, so "deepseek-r1:7b" (a distilled 7B) is refused, never
    sized as the 671 B DeepSeek-R1; a colon before anything but a size ("batch:4") joins nothing."""
    from gpu_advisor.ask.parser import parse_question
    parsed = parse_question(question)
    assert parsed.workload_fields["model"] == model
    assert resolve_transformer(model) == key


# code models people ask for a code assistant (models2): their own recorded profile, or the Qwen2.5 profile whose
# shapes their model card states (Qwen2.5-Coder: same parameter / non-embedding counts, layers and heads)
CODE_MODELS = [
    ("Qwen/Qwen2.5-Coder-0.5B-Instruct", "qwen2.5-0.5b", 0.49), ("Qwen2.5-Coder-1.5B", "qwen2.5-1.5b", 1.54),
    ("Qwen2.5-Coder-3B-Instruct", "qwen2.5-3b", 3.09), ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-7b", 7.61),
    ("Qwen2.5-Coder-14B-Instruct", "qwen2.5-14b", 14.7), ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5-32b", 32.5),
    ("codellama/CodeLlama-7b-hf", "codellama-7b", 6.74), ("CodeLlama-13b-Instruct-hf", "codellama-13b", 13.0),
    ("CodeLlama-34B", "codellama-34b", 33.7), ("bigcode/starcoder2-7b", "starcoder2-7b", 7.17),
]


@pytest.mark.parametrize("name,key,published", CODE_MODELS)
def test_code_models_resolve_with_their_size(name: str, key: str, published: float) -> None:
    assert resolve_transformer(name) == key
    assert knowledge().transformers[key].params_billion == pytest.approx(published, rel=0.01)


def test_code_llama_and_starcoder2_shapes_are_their_configs() -> None:
    t = knowledge().transformers
    # Code Llama: the Llama 2 layers with 16 infilling tokens more (vocab 32016) and a 16384-token window
    assert (t["codellama-7b"].vocab, t["codellama-7b"].max_seq, t["codellama-7b"].kv_heads) == (32016, 16384, 32)
    assert (t["codellama-34b"].layers, t["codellama-34b"].hidden, t["codellama-34b"].kv_heads) == (48, 8192, 8)
    # StarCoder2: a plain (non-gated) MLP with biases, sliding-window attention of 4096 on every layer
    s = t["starcoder2-7b"]
    assert (s.mlp, s.sliding_window, s.max_seq, s.kv_heads) == ("plain", 4096, 16384, 4)


# --- h14-models: architectures the count does not derive are refused; per-layer lists read as one value ---

def test_hybrid_linear_attention_config_is_refused_with_the_reason():
    """Qwen3-Next (Gated DeltaNet on 3 of 4 layers): counted as plain attention it got a KV cache on all 48 layers
    (96 KiB a token, 4x its 12 full-attention layers) and no recurrent state; refused, the reason named."""
    cfg = json.loads((FIXTURES / "qwen3-next-80b-a3b.json").read_text())
    with pytest.raises(WorkloadError) as err:
        count(cfg)
    assert "qwen3_next" in str(err.value) and "linear attention" in str(err.value)
    # the same reason from the fields, whatever the model_type says
    for extra in ({"layer_types": ["linear_attention", "full_attention"] * 2}, {"full_attention_interval": 4},
                  {"use_cla": True}):
        with pytest.raises(WorkloadError):
            count({**json.loads((CONFIGS / "qwen3-8b.json").read_text()), **extra})
    with pytest.raises(WorkloadError) as err:
        estimate_memory(Workload(task="inference", model=str(FIXTURES / "qwen3-next-80b-a3b.json")))
    assert "refused" in str(err.value) or "拒绝" in str(err.value)


def test_per_layer_moe_lists_read_as_one_value_and_a_mix_refused():
    """Hunyuan-A13B writes moe_topk / num_shared_expert / moe_intermediate_size once per layer: 64 experts of 3072,
    top-8, 1 shared MLP: 80.4 B (README 80 B), 12.7 B active (README 13 B)."""
    cfg = json.loads((CONFIGS / "hunyuan-a13b.json").read_text())
    c = count(cfg)
    assert (c.experts, c.experts_per_tok, c.moe_intermediate, c.shared_intermediate) == (64, 8, 3072, 3072)
    assert 79.5e9 < c.total < 81e9 and 12.2e9 < c.active < 13.3e9
    mixed = {**cfg, "moe_topk": [8] * 31 + [4]}
    with pytest.raises(WorkloadError) as err:
        count(mixed)
    assert "moe_topk" in str(err.value)


def test_nas_block_configs_refused():
    """Llama-3.3-Nemotron-Super-49B (DeciLM NAS: a block per layer): read as 80 uniform layers of 64 KV heads and a
    4 x hidden FFN it was counted as 88.0 B (49 B published); refused, the reason named."""
    with pytest.raises(WorkloadError) as err:
        count(json.loads((FIXTURES / "llama-3.3-nemotron-super-49b.json").read_text()))
    assert "block_configs" in str(err.value)


def test_not_derived_models_refused_by_name_with_the_reason():
    """knowledge/models/llm_profiles.yaml `not_derived` (generated from the recorded config / cited model_type): the
    name resolves to no profile, and the refusal names the architecture the memory model does not derive."""
    from gpu_advisor.kb.models import not_derived

    for name in ("Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3-Next-80B-A3B-Thinking", "MiniMax-M1-80k", "MiniMax-Text-01"):
        assert resolve_transformer(name) is None, name
        assert not_derived(name) is not None, name
    with pytest.raises(UnknownModelError) as err:
        estimate_memory(Workload(task="inference", model="Qwen3-Next-80B-A3B-Instruct"))
    assert "Gated DeltaNet" in str(err.value)
    assert not_derived("Qwen3-30B-A3B") is None

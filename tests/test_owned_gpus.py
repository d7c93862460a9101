"""Cards people own that the catalog lacks (knowledge/owned_gpus.yaml) and the verdict on them (plan/owned.py)."""

from __future__ import annotations

import re

import pytest

from gpu_advisor.errors import KnowledgeError
from gpu_advisor.kb.owned_gpus import _entry, find_owned_gpu, owned_gpus
from gpu_advisor.memory import estimate_memory
from gpu_advisor.plan.owned import fit_owned, planning_gib
from gpu_advisor.validation import workload_from_dict


def _short(display: str) -> str:
    """"NVIDIA GeForce RTX 4090 24 GB" -> "RTX 4090": the name a question uses."""
    name = re.sub(r"^NVIDIA\s+(GeForce\s+)?", "", display)
    return re.sub(r"\s+\d+\s*GB$", "", name).replace(" Generation", "")


def test_every_card_has_its_figures_and_provenance():
    cards = owned_gpus()
    assert len(cards) >= 8
    assert len({g.id for g in cards}) == len(cards)
    for g in cards:
        assert g.source and g.as_of, g.id
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", g.as_of), g.id
        assert 1 <= g.memory_gb <= 1024, g.id


@pytest.mark.parametrize("card", owned_gpus(), ids=lambda g: g.id)
def test_a_card_is_found_by_its_own_name_and_the_catalog_does_not_sell_it(card):
    from gpu_advisor.ask.numeric import _catalog_gpu

    short = _short(card.display_name)
    assert find_owned_gpu(short) == card, short
    assert not _catalog_gpu(short.upper().replace(" ", "")), f"{short}: the catalog sells it, its entry must win"


def test_catalog_names_are_never_read_as_owned_cards():
    from gpu_advisor.kb.catalog_loader import load_catalog

    for g in load_catalog().gpus.values():
        if g.named_by_alibaba:
            name = g.id.split("-")[0]
            assert find_owned_gpu(name) is None, name


def test_names_that_are_other_cards_are_not_matched():
    # the laptop 4090 has 16 GB, the 3060 Ti 8 GB, the H100 NVL 94 GB: not the entries' cards
    for text in ("RTX 4090 laptop", "RTX 3060 Ti", "H100 NVL"):
        got = find_owned_gpu(text)
        assert got is None, (text, got)


def test_a_bad_entry_is_refused_naming_the_field():
    with pytest.raises(KnowledgeError, match="memory_gb"):
        _entry(0, {"id": "X", "display_name": "X", "names": ["x"], "supports_bf16": True, "source": "s",
                   "as_of": "2026-01-01"})
    with pytest.raises(KnowledgeError, match="1-1024"):
        _entry(0, {"id": "X", "display_name": "X", "names": ["x"], "memory_gb": 0, "supports_bf16": True,
                   "source": "s", "as_of": "2026-01-01"})


def _card(mem: float, bf16: bool = True):
    return type("Card", (), {"memory_gb": mem, "supports_bf16": bf16})()


def test_the_fit_is_the_estimators_figure_for_the_step_it_names():
    asked = workload_from_dict({"task": "inference", "model": "Qwen2.5-7B", "num_gpus": 1})
    fit = fit_owned(asked, _card(48))
    assert fit.fits_as_asked
    assert fit.estimate.device_total_gib == pytest.approx(estimate_memory(fit.variant.workload).device_total_gib)
    assert planning_gib(fit.estimate) <= 48


def test_a_card_too_small_as_asked_gets_the_lighter_method_that_fits():
    asked = workload_from_dict({"task": "inference", "model": "Qwen2.5-7B", "num_gpus": 1})
    fit = fit_owned(asked, _card(9))   # INT8 (10.3 GiB) does not fit 9 GB; 4-bit does
    assert not fit.fits_as_asked
    assert fit.as_asked.device_total_gib > 9
    assert fit.alternative == "int4"
    assert planning_gib(fit.estimate) <= 9


def test_the_users_count_is_kept_and_sharding_is_over_it():
    asked = workload_from_dict({"task": "llm_finetune", "model": "Llama 3.1 70B", "finetune_method": "full",
                                "num_gpus": 8})
    fit = fit_owned(asked, _card(80))
    assert fit.gpus == 8 and fit.variant is not None
    assert fit.variant.workload.num_gpus == 8
    # [ZeRO] 70.6e9 x 16 B / 8 = 131 GiB a GPU even fully sharded: only CPU offload fits 80 GB
    assert fit.variant.workload.cpu_offload


def test_a_bigger_card_never_needs_a_later_step():
    asked = workload_from_dict({"task": "llm_finetune", "model": "Llama 3.1 8B", "num_gpus": 2})
    steps = []
    for mem in (24, 48, 80, 141):
        fit = fit_owned(asked, _card(mem))
        steps.append((fit.alternative is not None, fit.variant.step if fit.variant else 99))
    assert steps == sorted(steps, reverse=True)


# --- the time and the serving speed on the card (plan/owned_speed.py) ---------------------------------------------

def test_cards_with_a_peak_cite_where_it_comes_from():
    for g in owned_gpus():
        if g.dense_bf16_tflops is not None or g.memory_bandwidth_gb_s is not None:
            text = g.throughput_source or g.source
            assert re.search(r"[\w-]+\.(?:com|ai|org|io)/\S", text), g.id   # an address to check the figures at


def test_the_time_on_the_card_is_the_catalogs_time_model_on_its_peak():
    from gpu_advisor.costing.basis import SCALING_PCIE, UTILISATION
    from gpu_advisor.plan.owned_speed import owned_time

    card = find_owned_gpu("RTX 4090")
    asked = workload_from_dict({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "lora", "num_gpus": 1,
                                "num_samples": 20000, "epochs": 1, "seq_len": 1024})
    fit = fit_owned(asked, card)
    t = owned_time(fit, card)
    assert t.peak_tflops.low == card.dense_bf16_tflops == 165.2
    assert (t.utilisation.low, t.utilisation.high) == (UTILISATION["llm"].low, UTILISATION["llm"].high)
    # 4N FLOPs per token (LoRA) x 4/3 recompute x 2e4 x 1024 tokens, at the card's peak and the LLM band (one GPU)
    params = fit.estimate.profile.params_billion * 1e9
    flops = 4 * params * 2e4 * 1024 * 4 / 3
    assert t.total_pflop * 1e15 == pytest.approx(flops, rel=0.08)   # causal attention adds a few per cent
    assert t.wall_hours.low == pytest.approx(t.total_pflop * 1e15 / (165.2e12 * UTILISATION["llm"].high) / 3600)
    two = owned_time(fit_owned(asked.model_copy(update={"num_gpus": 2}), card), card)
    assert (two.scaling.low, two.scaling.high) == (SCALING_PCIE.low, SCALING_PCIE.high)   # PCIe: no NVLink stated


def test_a_card_without_a_peak_gets_no_time_and_says_why():
    from gpu_advisor.plan.owned_speed import owned_time

    card = find_owned_gpu("H20")
    assert card.dense_bf16_tflops is None
    fit = fit_owned(workload_from_dict({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "lora",
                                        "num_samples": 1000}), card)
    t = owned_time(fit, card)
    assert t.wall_hours is None and t.missing is not None


def test_the_serving_speed_on_the_card_is_bandwidth_bound():
    from gpu_advisor.costing.decode import DECODE_HBM
    from gpu_advisor.memory.core import GIB
    from gpu_advisor.plan.owned_speed import owned_speed

    card = find_owned_gpu("RTX 4090")
    fit = fit_owned(workload_from_dict({"task": "inference", "model": "Qwen2.5-7B", "num_gpus": 1}), card)
    got = owned_speed(fit, card)
    weights = fit.estimate.breakdown["weights"] * GIB
    # one sequence: at least the weights are read every step, at most at the fast end of the band
    assert got.step[0] >= weights / (card.memory_bandwidth_gb_s * 1e9 * DECODE_HBM.high)
    assert 1 / got.step[1] < 1 / got.step[0] < card.memory_bandwidth_gb_s * 1e9 / weights


def test_an_unstated_sequence_length_that_decides_the_fit_is_tried_shorter():
    card = find_owned_gpu("RTX 3090")
    unstated = fit_owned(workload_from_dict({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora",
                                             "num_gpus": 2}), card)
    assert unstated.shorter is not None and unstated.shorter[0] < unstated.workload.seq_len
    stated = fit_owned(workload_from_dict({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora",
                                           "num_gpus": 2, "seq_len": 2048}), card)
    assert stated.shorter is None   # the user's own length is never second-guessed


@pytest.mark.parametrize("q, owned", [
    ("我们有8张A100 80G，全参微调Llama 3.1 8B够吗？", True),
    ("服务器是8卡A800，全参微调Qwen2.5-72B够吗？", True),
    ("I have 8x A100 80GB, can I full fine-tune Qwen2.5-7B?", True),
    ("在阿里云上用8张A100 80G全参微调Llama 3.1 8B够吗？", False),    # about the cloud
    ("我们有10万条数据，想用A10微调Qwen2.5-7B，LoRA，需要几张？", False),   # the cue is about the data
    ("我有个问题：8张A100 80G能全参微调Qwen2.5-72B吗", False),   # the cue ends its own clause
])
def test_a_catalog_gpu_is_the_users_own_only_with_a_cue_just_before_it(q, owned):
    from gpu_advisor.ask.on_card import owned_catalog_gpu
    from gpu_advisor.ask.parser import parse_question

    assert (owned_catalog_gpu(parse_question(q)) is not None) is owned


def test_the_largest_micro_batch_is_the_last_that_passes_the_planning_fit():
    from gpu_advisor.plan.owned import largest_batch
    from gpu_advisor.plan.planner import _fits

    card = find_owned_gpu("RTX 4090")
    fit = fit_owned(workload_from_dict({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "lora",
                                        "seq_len": 512}), card)
    b, e = largest_batch(fit, card)
    assert b >= 1 and _fits(e, card, strict=True)
    bigger = estimate_memory(fit.variant.workload.model_copy(update={"batch_size_per_gpu": b + 1}))
    assert not _fits(bigger, card, strict=True)
    stated = fit_owned(workload_from_dict({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "lora",
                                           "seq_len": 512, "batch_size_per_gpu": 1}), card)
    assert largest_batch(stated, card) is None   # a stated batch is the user's

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
    fit = fit_owned(asked, _card(12))
    assert not fit.fits_as_asked
    assert fit.as_asked.device_total_gib > 12
    assert fit.alternative == "int4"
    assert planning_gib(fit.estimate) <= 12


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

"""None of the 13 errors of the seed answers (shared/research/seed_errors.md) may appear in an answer."""

from __future__ import annotations

import re

import pytest

from gpu_advisor.kb.catalog_loader import load_catalog
from test_scenarios import ALL, LLAMA_FULL, SERVE, SWIN_L

CATALOG = load_catalog()
PRETRAIN = {"task": "llm_pretrain", "model": "Llama 3.1 70B", "seq_len": 4096, "interruptible": True}
SPOT = {"task": "semantic_segmentation", "interruptible": True}
SCENARIOS = [*ALL, PRETRAIN, SPOT]


def texts(advise):
    for workload in SCENARIOS:
        for lang in ("zh", "en"):
            yield workload, advise(workload, lang).render(lang)


INVENTED = ["gpu.t4.xlarge", "gn8i-vf8", "gn6v-c4g1", "gn5e", "H800", "H100", "gn5i-c4g1.xlarge (P100"]


@pytest.mark.parametrize("name", INVENTED)
def test_invented_names_and_wrong_gpus_never_appear(advise, name):  # errors 1, 5, 6, 7, 8
    for _, text in texts(advise):
        assert name not in text


def test_a800_appears_only_as_the_gpu_of_ebmgn7v_and_ebmgn7vx(advise):  # errors 5, 8 (issue 19: the API names it)
    a800 = {g.display_name for g in CATALOG.gpus.values() if "A800" in g.display_name}
    assert a800 == {"NVIDIA A800 40 GB", "NVIDIA A800 80 GB"}
    for _, text in texts(advise):
        for line in text.splitlines():
            if "A800" in line:
                assert any(name in line for name in a800), line
                assert "gn7i" not in line and "A10/" not in line and "A800/" not in line, line


def test_catalog_facts_behind_errors_1_3_6():
    t4 = CATALOG.instance("ecs.gn6i-c4g1.xlarge")
    assert (t4.vcpu, t4.memory_gib, t4.gpu_id) == (4, 15, "T4")  # error 1
    assert CATALOG.instance("ecs.g7.large") is None or CATALOG.instance("ecs.g7.large").gpu_count is None
    assert CATALOG.gpus[CATALOG.instance("ecs.gn6v-c8g1.2xlarge").gpu_id].memory_gb == 16  # error 3
    assert CATALOG.gpus[CATALOG.instance("ecs.gn6e-c12g1.3xlarge").gpu_id].memory_gb == 32
    assert CATALOG.instance("ecs.gn6v-c8g1.2xlarge").vcpu == 8  # error 6
    assert CATALOG.instance("ecs.gn5i-c4g1.xlarge").gpu_id == "P4"
    assert CATALOG.instance("ecs.gn5i-c4g1.xlarge").status == "not_recommended"


def test_gn7i_is_a10_and_never_offered_with_rdma(advise):  # errors 2, 4, 8
    assert {t.gpu_id for t in CATALOG.types_in_family("gn7i")} == {"A10"}
    assert all(t.rdma == "none" for t in CATALOG.types_in_family("gn7i"))
    for workload in (SWIN_L, PRETRAIN):
        rec = advise(workload)
        assert rec.instance.family != "gn7i"
    assert advise(PRETRAIN).instance.rdma != "none"  # 70B ZeRO-3 across instances: RDMA (the segmentation job: TCP will do)


def test_spot_is_up_to_90_percent_with_the_5_minute_notice(advise):  # error 9
    for lang, notice in (("en", "5 minutes"), ("zh", "5 分钟")):
        text = advise(SPOT, lang).render(lang)
        assert "90%" in text and notice in text
        assert not re.search(r"60\s*%\s*[-–~～到至]", text)


def test_large_pretraining_is_not_placed_on_a10(advise):  # error 10
    rec = advise(PRETRAIN)
    assert rec.instance.gpu_id != "A10"
    assert "PLAT-LINGJUN" in [e.rule_id for e in rec.trace]


def test_no_fixed_cpu_to_gpu_ratio_rule(advise):  # error 11
    for _, text in texts(advise):
        assert not re.search(r"4\s*:\s*1\s*(到|to|-|–)\s*8\s*:\s*1", text)


def test_serverless_is_function_compute_not_eas(advise):  # error 12
    for lang in ("zh", "en"):
        text = advise(SERVE, lang).render(lang)
        for line in text.splitlines():
            if "Serverless" in line:
                assert "SDWebUI" in line and "ComfyUI" in line


def test_mixed_fleet_excludes_subscription(advise):  # error 13
    for lang in ("zh", "en"):
        text = advise(PRETRAIN, lang).render(lang)
        assert ("Auto Provisioning" in text or "弹性供应组" in text)
        assert "spot + subscription" not in text and "抢占式+包年包月" not in text


def test_full_finetune_is_not_on_a10(advise):
    assert advise(LLAMA_FULL).instance.gpu_id != "A10"

"""Issue 22, the planning half: answers whose defaults, plans and texts agree with what was asked.

Each test names the starting case of the issue it pins (through recommend() with the fields the question states).
"""

from __future__ import annotations

import re

import pytest

from gpu_advisor import recommend
from gpu_advisor.advisor import get_knowledge
from gpu_advisor.errors import WorkloadError
from gpu_advisor.plan.ladder import STEP_OFFLOAD, training_steps
from gpu_advisor.plan.planner import upper_gib
from gpu_advisor.workload import Workload

INTERNAL_IDS = re.compile(r"\b(AMPERE-80GB|GN8V-96GB-HBM3|BLACKWELL-\d+GB|A100-40GB|V100-SXM2-\d+GB)\b")


def _fired(rec) -> set[str]:
    return {t.rule_id for t in rec.trace}


def _finding(md: str) -> str:
    return md.split("\n## ", 2)[1]


# --- 13: "4张A10能全量微调7B模型吗？" -------------------------------------------------------------------------------
def test_full_finetune_default_is_bf16_mixed_precision_and_said_first() -> None:
    rec = recommend({"task": "llm_finetune", "params_billion": 7, "finetune_method": "full", "num_gpus": 4,
                     "gpu_preference": "A10", "lang": "zh"})
    assert rec.workload["precision"] == "bf16_amp"  # was a silent pure-bf16 default (8 B/param)
    assert rec.lead and "bf16 混合精度" in rec.lead[0].zh and "HF Trainer" in rec.lead[0].zh
    # pure bf16 gives another plan (no offload needed): the answer says so in one line
    assert any("纯 bf16" in line.zh and "CPU 卸载" in line.zh for line in rec.lead[1:])
    finding = _finding(rec.render("zh"))
    assert finding.index("bf16 混合精度") < finding.index("推荐规格")


def test_a10s_hold_a_7b_full_finetune_only_with_cpu_offload_and_the_host_ram_is_there() -> None:
    rec = recommend({"task": "llm_finetune", "params_billion": 7, "finetune_method": "full", "num_gpus": 4,
                     "gpu_preference": "A10", "lang": "en"})
    assert rec.instance.gpu_id == "A10" and rec.instance.total_gpus == 4 and rec.instance.fit_step == STEP_OFFLOAD
    assert "MIT-OFFLOAD" in _fired(rec) and "FIT-PREF-MET" in _fired(rec)
    assert rec.host.ram_gib <= rec.instance.memory_gib
    # the assumptions no longer say "distributed = ddp" while the plan shards with ZeRO-3
    said = {n.field: n.text.en for n in rec.assumptions}
    assert "zero3" in said["distributed"] and "DDP when" not in said["distributed"]


def test_a_stated_precision_gets_no_default_line_and_lora_never_offloads() -> None:
    rec = recommend({"task": "llm_finetune", "params_billion": 7, "finetune_method": "full", "num_gpus": 4,
                     "precision": "bf16", "gpu_preference": "A10"})
    assert rec.lead == [] and rec.instance.fit_step != STEP_OFFLOAD
    lora = Workload(task="llm_finetune", model="Llama 3.1 8B", finetune_method="lora", num_gpus=1)
    assert all(s.step != STEP_OFFLOAD for s in training_steps(lora, bf16=True, gpus=1, fixed_gpus=True,
                                                                 max_gpus_per_node=8))


# --- 7: "Pretrain a 1.3B GPT model on 100B tokens, deadline 10 days" --------------------------------------------
def test_training_tokens_become_sequences_of_one_pass() -> None:
    rec = recommend({"task": "llm_pretrain", "params_billion": 1.3, "training_tokens_billion": 100, "lang": "en"})
    seq = rec.workload["seq_len"]
    assert rec.workload["num_samples"] == round(100e9 / seq) and rec.workload["epochs"] == 1.0
    assert any(n.code == "samples_from_tokens" for n in rec.assumptions)


def test_a_deadline_scales_the_plan_out_until_it_fits() -> None:
    base = {"task": "llm_pretrain", "params_billion": 1.3, "training_tokens_billion": 10, "lang": "en"}
    alone = recommend(base)
    timed = [o for o in alone.cost.options if o.time.wall_hours is not None]
    fastest_one_gpu = min(o.time.wall_hours.mid for o in timed if o.total_gpus == 1)
    deadline = fastest_one_gpu / 3  # needs more than one GPU
    rec = recommend({**base, "deadline_hours": deadline})
    chosen = rec.cost.option(rec.instance.instance_type)
    assert rec.instance.total_gpus > 1 and chosen.time.wall_hours.mid <= deadline
    assert rec.cost.recommended == rec.instance.instance_type and not chosen.violations
    assert any(line.en.startswith(f"To finish within the {deadline:g} h deadline") for line in rec.lead)


def test_ten_days_for_100b_tokens_scale_out_over_rdma_machines() -> None:
    """6 x 1.3 B x 100 B = 7.8e20 FLOPs: about 2,300 A100-hours at ~40 % MFU; 240 h needs more than one 8-GPU node."""
    rec = recommend({"task": "llm_pretrain", "params_billion": 1.3, "training_tokens_billion": 100,
                     "deadline_hours": 240, "lang": "en"})
    assert rec.lead[0].en.startswith("To finish within the 240 h deadline") and rec.instance.total_gpus > 8
    assert "RDMA" in rec.lead[0].en


def test_a_deadline_that_cannot_be_met_says_why_with_numbers_and_no_budget_is_invented() -> None:
    rec = recommend({"task": "llm_pretrain", "params_billion": 1.3, "training_tokens_billion": 100,
                     "deadline_hours": 1, "lang": "en"})
    line = rec.lead[0].en
    assert "1 h deadline cannot be met" in line and "GPU-hours" in line
    needed = int(re.search(r"about (\d+) of them", line).group(1))
    gpu_hours = float(re.search(r"about ([\d,]+) GPU-hours", line).group(1).replace(",", ""))
    assert needed >= gpu_hours  # the GPUs the deadline would take: GPU-hours over the deadline, rounded up
    assert rec.instance.total_gpus > 1  # the fastest plan with a time leads, not a single card
    md = rec.render("en")
    assert "No option meets the deadline" in md and "budget and deadline" not in md


# --- 19 / 7: "两台机器，每台8卡" ------------------------------------------------------------------------------------
def test_machines_times_gpus_is_honoured_with_the_network_verdict() -> None:
    # a default classifier's DDP gradients are small against its step: over TCP RDMA is recommended, not required
    rec = recommend({"task": "image_classification", "num_nodes": 2, "num_gpus": 16, "lang": "zh"})
    assert (rec.instance.nodes, rec.instance.gpus_per_node) == (2, 8)
    assert "NET-TCP-OK" in _fired(rec) and "NET-SINGLE" not in _fired(rec) and "NET-MULTINODE" not in _fired(rec)
    assert "RDMA 建议但非必须" in rec.render("zh")


def test_num_gpus_must_divide_by_num_nodes_in_both_languages() -> None:
    with pytest.raises(WorkloadError) as err:
        recommend({"task": "image_classification", "num_nodes": 3, "num_gpus": 16})
    assert err.value.field == "num_gpus"
    assert "num_nodes" in err.value.message("en") and "整数倍" in err.value.message("zh")


def test_a_large_multi_node_dataset_gets_its_read_throughput_worked_out() -> None:
    rec = recommend({"task": "image_classification", "dataset_size_gb": 20000, "num_nodes": 2, "lang": "en"})
    lines = [s.note.en for s in rec.cost.storage]
    line = next(t for t in lines if "MB/s on average" in t)
    assert "CPFS general-purpose" in line and "enough" in line and "no storage price" in line


# --- 16: "推理服务 ResNet-50，每秒2000张图片，需要几台什么机器？" ----------------------------------------------------------
def test_a_request_rate_gets_a_replica_count_with_its_assumptions() -> None:
    rec = recommend({"task": "inference", "model": "ResNet-50", "requests_per_second": 2000, "lang": "zh"})
    assert tuple(rec.workload["input_size"]) == (224, 224)  # a classifier's input, not Cityscapes' crop
    line = rec.lead[0].zh
    m = re.search(r"需要 (\d+) 个副本，即 \d+ 台 (\S+)（", line)
    assert m and m.group(2) == rec.instance.instance_type and "GFLOP" in line and "假设" in line
    replicas = int(m.group(1))
    option = rec.cost.option(rec.instance.instance_type)
    assert option.hourly_total == pytest.approx(rec.instance.price_per_hour * replicas)
    assert "KV cache" not in rec.render("zh").split("## ")[2]


# --- 12 / 15: the leading card holds the job at the planning estimate -------------------------------------------
@pytest.mark.parametrize("fields", [
    {"task": "panoptic_segmentation", "model": "Mask2Former", "backbone": "Swin-L", "batch_size_per_gpu": 2},
    {"task": "semantic_segmentation", "model": "SAM ViT-H", "input_size": [1024, 1024], "batch_size_per_gpu": 1},
])
def test_the_leading_card_holds_the_upper_estimate(fields) -> None:
    rec = recommend({**fields, "lang": "en"})
    assert upper_gib(rec.planned_memory) <= rec.instance.gpu_memory_gib
    assert "FIT-UPPER-RISK" not in _fired(rec)


def test_a_tight_card_says_so_first() -> None:
    rec = recommend({"task": "semantic_segmentation", "model": "DeepLabV3+", "backbone": "R-50-D8",
                     "input_size": [2944, 2944], "batch_size_per_gpu": 1, "num_gpus": 1, "precision": "bf16_amp",
                     "gradient_checkpointing": True, "gpu_preference": "A10", "lang": "en"})
    assert upper_gib(rec.planned_memory) > rec.instance.gpu_memory_gib
    finding = _finding(rec.render("en"))
    assert finding.index("[FIT-UPPER-RISK] Tight:") < finding.index("Recommended instance type")


# --- 8: consistency of tier, "cards on offer", cheapest / fastest, savings plan ---------------------------------
def test_the_tier_follows_the_job_not_the_card_the_ranking_chose() -> None:
    rec = recommend({"task": "llm_pretrain", "params_billion": 1.3, "num_samples": 1_000_000, "gpu_preference": "80GB",
                     "lang": "en"})
    assert rec.instance.gpu_memory_gib > 48 and upper_gib(rec.planned_memory) < 48
    fired = _fired(rec)
    assert "TIER-LARGE-CARD" not in fired and "TIER-ON-LARGE-CARD" in fired and rec.tier == "standard"
    assert "cards are needed" not in rec.render("en")


def test_more_than_the_cards_on_offer_only_when_true() -> None:
    rec = recommend({"task": "panoptic_segmentation", "model": "Mask2Former", "backbone": "Swin-L",
                     "batch_size_per_gpu": 2, "lang": "en"})
    assert rec.memory.device_total_gib < 48 and "FIT-MITIGATE" in _fired(rec)
    md = rec.render("en")
    assert "more than the cards on offer" not in md and "largest card on offer" not in md
    big = recommend({"task": "llm_finetune", "model": "Qwen2.5 14B", "finetune_method": "full", "precision": "fp32",
                     "num_gpus": 1, "lang": "en"})
    assert "FIT-OVER-ALL-CARDS" in _fired(big)


def test_fastest_and_cheapest_only_among_options_with_the_figure() -> None:
    rec = recommend({"task": "panoptic_segmentation", "model": "Mask2Former", "backbone": "Swin-L",
                     "batch_size_per_gpu": 2, "lang": "en"})
    c = rec.cost
    timed = [o for o in c.options if o.time.wall_hours is not None]
    priced = [o for o in c.options if o.payg_mid is not None or o.hourly_total is not None]
    assert (c.fastest is None) == (len(timed) < 2) and (c.cheapest is None) == (len(priced) < 2)
    if len(timed) < len(c.options) and c.fastest == c.recommended:
        assert "with a time estimate" in c.why.en


def test_a_savings_plan_is_never_cheaper_under_pay_as_you_go_is_cheaper() -> None:
    rec = recommend({"task": "semantic_segmentation", "model": "DeepLabV3+", "backbone": "R-50-D8", "lang": "en"})
    for o in rec.cost.options:
        payg, plan = o.purchase("payg"), o.purchase("savings_plan")
        if payg.total is None or plan.total is None:
            continue
        assert "pay-as-you-go is cheaper" in plan.note.en
        assert plan.total.low >= payg.total.low and plan.total.high >= payg.total.high


# --- 20 and 11: display names, no pointer to an unprinted section, tiling, one epoch in the text ----------------
def test_no_internal_gpu_ids_and_the_reason_inline() -> None:
    rec = recommend({"task": "semantic_segmentation", "model": "UNet", "input_size": [4096, 4096],
                     "batch_size_per_gpu": 2, "precision": "fp16_amp", "gpu_preference": "A10", "lang": "zh"})
    item = next(i for i in rec.sections if i.rule_id == "FIT-PREF-UNMET")
    assert not INTERNAL_IDS.search(item.text.zh) and "被排除的 GPU" not in item.text.zh
    assert "NVIDIA A10 24 GB" in item.text.zh and "即使采取全部显存优化措施仍放不下" in item.text.zh
    assert "MIT-TILE" in _fired(rec)
    for text in [i.text.zh for i in rec.sections] + [i.text.en for i in rec.sections]:
        assert not INTERNAL_IDS.search(text), text


def test_the_one_epoch_caveat_is_in_the_text() -> None:
    """A quick trial keeps one pass, with the caveat; a full job without epochs gets its task's schedule, said."""
    rec = recommend({"task": "semantic_segmentation", "model": "UNet", "stage": "prototype", "num_samples": 800,
                     "lang": "zh"})
    assert any(n.code == "time_one_epoch" for n in rec.cost.assumptions)
    assert "未给出训练轮数，下表的时间与费用只是遍历一次数据（1 轮）的" in rec.render("zh")
    bert = recommend({"task": "nlp_finetune", "model": "BERT-base", "num_samples": 100_000, "seq_len": 512, "lang": "zh"})
    assert any(a.field == "epochs" and a.value == 3 and a.text.zh.startswith("未给出训练轮数") for a in bert.assumptions)


def test_knowledge_rules_use_display_names() -> None:
    for rule in get_knowledge().rules.rules:
        for text in [rule.then.advice] if rule.then.advice else []:
            assert "{gpu_id}" not in text.en + text.zh and "{preferred_gpu}" not in text.en + text.zh, rule.id


def test_the_ruled_out_reason_is_in_each_answer_language() -> None:
    rec = recommend({"task": "semantic_segmentation", "model": "UNet", "input_size": [4096, 4096],
                     "batch_size_per_gpu": 2, "precision": "fp16_amp", "gpu_preference": "A10", "lang": "zh"}, "en")
    item = next(i for i in rec.sections if i.rule_id == "FIT-PREF-UNMET")
    assert not re.search(r"[\u4e00-\u9fff]", item.text.en) and "does not fit even after every mitigation" in item.text.en


def test_a_fixed_gpu_count_that_misses_the_deadline_says_how_many_would_meet_it() -> None:
    rec = recommend({"task": "llm_pretrain", "params_billion": 1.3, "training_tokens_billion": 100,
                     "deadline_hours": 240, "num_gpus": 8, "lang": "en"})
    assert rec.instance.total_gpus == 8  # the user's count: not scaled out
    line = next(t.en for t in rec.cost.relax if t.en.startswith("deadline:"))
    m = re.search(r"about (\d+) would meet 240 h", line)
    assert m and int(m.group(1)) > 8


# --- 4 (s04): the leading serving option has a list price when a priced configuration holds the job ------------
def test_a_priced_configuration_of_a_gpu_leads_over_an_unpriced_one_when_the_rest_is_equal() -> None:
    # 32 sequences (h14-srv: with a serving job's weights exact bytes, 16 fit one A100 80 GB in INT8 at a price)
    rec = recommend({"task": "inference", "model": "Qwen2.5-32B-Instruct", "batch_size_per_gpu": 32, "seq_len": 8192,
                     "region": "ap-northeast-2", "lang": "zh"})
    # Seoul lists no price for the 2 x A100 80 GB type (gn7e-c16g1.8xlarge) that holds it with tensor parallelism;
    # the 4-GPU type has one
    assert rec.instance.price_per_hour is not None and rec.instance.currency == "CNY"
    assert rec.instance.total_gpus == 4 and "ecs.gn7e-c16g1.8xlarge" in rec.lead[0].zh
    assert rec.lead[0].en.startswith("2 × NVIDIA A100 80 GB hold it") and "2 replicas of tensor parallel 2" in rec.lead[0].en
    assert upper_gib(rec.planned_memory) <= rec.instance.gpu_memory_gib
    assert rec.cost.recommended == rec.instance.instance_type
    assert rec.cost.option(rec.instance.instance_type).payg_mid is not None
    # the unpriced configurations are still shown, after it
    assert any(o.price_per_hour is None for o in rec.alternatives)


def _layouts(fields: dict) -> tuple[object, dict[str, set[int]]]:
    from gpu_advisor.plan.defaults import resolve_job
    from gpu_advisor.plan.planner import plan
    from gpu_advisor.validation import workload_from_dict

    kb = get_knowledge()
    job = resolve_job(workload_from_dict(fields), kb.catalog)
    the_plan = plan(kb.catalog, job.workload, job.region)
    counts: dict[str, set[int]] = {}
    for c in the_plan.options:
        counts.setdefault(c.gpu.id, set()).add(c.total_gpus)
    return (job, the_plan), counts


def test_a_priced_layout_is_not_added_to_a_stated_count_or_to_an_unsharded_training_job() -> None:
    for fields in ({"task": "inference", "model": "Qwen2.5-72B-Instruct", "batch_size_per_gpu": 32, "seq_len": 8192,
                    "num_gpus": 4},
                   {"task": "llm_finetune", "model": "Qwen2.5-32B", "finetune_method": "qlora", "gpu_preference": "A10",
                    "num_gpus": 2}):
        _, counts = _layouts(fields)
        assert all(len(n) == 1 for n in counts.values()), (fields, counts)  # one layout per GPU: the fewest that hold it
    # a training job one card holds unsharded: no wider layout of that card (more GPUs would be data parallelism)
    _, counts = _layouts({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora"})
    assert counts["AMPERE-80GB"] == {1}


def test_a_sharded_training_job_gets_a_priced_layout_whose_time_counts_the_sharding_traffic() -> None:
    from gpu_advisor.costing.timing import estimate_time

    # Seoul lists no price for the 2 x A100 80 GB type (gn7e-c16g1.8xlarge) but prices the 4-GPU one
    (job, the_plan), counts = _layouts({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "full",
                                        "gpu_preference": "A100", "region": "ap-northeast-2"})
    a100 = [c for c in the_plan.options if c.gpu.id == "AMPERE-80GB"]
    assert counts["AMPERE-80GB"] == {2, 4}
    assert any(c.price is None for c in a100) and any(c.price is not None for c in a100)
    wider = max(a100, key=lambda c: c.total_gpus)
    assert wider.priced_from == 2
    # the stage at 4 GPUs is the one that moves the fewest bytes among those that fit (planner._best_stage)
    assert wider.price is not None and wider.variant.workload.distributed.value in ("zero2", "zero3")
    # ZeRO-3 all-gathers the parameters every micro-step; ZeRO-2 with one micro-step a step moves what DDP moves
    sharded = any(n.code == "time_shard_traffic" for n in estimate_time(wider, job).notes)
    assert sharded == (wider.variant.workload.distributed.value == "zero3" or wider.variant.accum_steps > 1)


# --- llama33-70b-awq-2xl20: a stated GPU count that cannot hold the job -----------------------------------------
def test_a_stated_count_that_cannot_hold_the_job_leads_with_the_smallest_that_does_and_says_why_first() -> None:
    rec = recommend({"task": "inference", "model": "Llama 3.1 70B", "quantization": "int4", "num_gpus": 2,
                     "gpu_preference": "L20", "batch_size_per_gpu": 100, "lang": "en"})
    assert rec.instance is not None and rec.instance.gpu_id == "L20"  # was: no option at all
    assert rec.instance.total_gpus > 2 and upper_gib(rec.planned_memory) <= rec.instance.gpu_memory_gib
    # the smallest L20 layout that holds it: half of it does not
    from gpu_advisor.memory import estimate_memory
    from gpu_advisor.validation import workload_from_dict
    half = workload_from_dict({"task": "inference", "model": "Llama 3.1 70B", "quantization": "int4",
                               "num_gpus": rec.instance.total_gpus // 2, "batch_size_per_gpu": 100})
    assert estimate_memory(half).device_total_gib > 0.95 * 48
    first = rec.lead[0].en
    assert "2 GPUs you stated" in first and "cannot hold" in first and rec.instance.instance_type in first
    assert f"{rec.memory.device_total_gib:.1f} GiB per GPU" in first  # the reason, with the number
    finding = _finding(rec.render("en"))
    assert finding.index("2 GPUs you stated") < finding.index("Recommended instance type")
    assert "FIT-NONE" not in _fired(rec) and "FIT-PREF-UNMET" not in _fired(rec)
    assert "2 张卡" in rec.lead[0].zh


def test_a_stated_training_count_too_small_for_any_card_is_replanned_not_refused() -> None:
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 70B", "finetune_method": "full", "num_gpus": 1,
                     "lang": "en"})
    assert rec.instance is not None and rec.instance.total_gpus > 1
    assert rec.lead[0].en.startswith("On the 1 GPU you stated, no GPU of the catalog holds this job")
    assert "host RAM" in rec.lead[0].en  # why CPU offload on the one GPU is no plan either
    # a job that nothing holds on any count is still refused as before (a 70B full fine-tune at 128k tokens now has a
    # plan: sequence parallelism over 32 GPUs, tests/test_long_context.py; a CNN's activations have no such split)
    none = recommend({"task": "semantic_segmentation", "model": "UNet", "input_size": [16384, 16384],
                      "batch_size_per_gpu": 1})
    assert none.instance is None and "FIT-NONE" in _fired(none)


# --- h20-vllm-r1-distill-14b: no quantization the question did not ask for leads silently ------------------------
def test_a_card_that_serves_the_model_as_asked_leads_over_a_cheaper_unasked_int8_plan() -> None:
    rec = recommend({"task": "inference", "model": "DeepSeek-R1-Distill-Qwen-14B", "num_gpus": 1, "lang": "en"})
    assert rec.planned_memory.breakdown["weights"] == pytest.approx(rec.memory.breakdown["weights"])  # 16-bit kept
    assert rec.instance.total_gpus == 1 and rec.instance.gpu_memory_gib >= 32
    assert "INF-QUANT" not in _fired(rec)
    cheaper = rec.cost.option(rec.cost.cheapest)
    assert cheaper.instance_type != rec.instance.instance_type  # the cheaper INT8 option is named, not chosen
    assert "INT8" in rec.cost.why.en and rec.cost.cheapest in rec.cost.why.en


def test_an_unasked_int8_plan_that_leads_says_so_first() -> None:
    rec = recommend({"task": "inference", "model": "DeepSeek-R1-Distill-Qwen-14B", "num_gpus": 1,
                     "gpu_preference": "A10", "lang": "zh"})
    assert rec.instance.gpu_id == "A10" and "INF-QUANT" in _fired(rec)  # only INT8 weights fit one A10
    assert "INT8" in rec.lead[0].zh and "没有要求量化" in rec.lead[0].zh
    assert "INT8" in rec.lead[0].en and "16-bit" in rec.lead[0].en
    finding = _finding(rec.render("zh"))
    assert finding.index("没有要求量化") < finding.index("推荐规格")


def test_a_gpu_ruled_out_for_host_ram_says_so_not_several_instances() -> None:
    rec = recommend({"task": "llm_finetune", "model": "Qwen2.5 7B", "num_gpus": 1, "precision": "fp16_amp",
                     "seq_len": 8192, "batch_size_per_gpu": 4, "lang": "en"})
    why = {t.en.split(":", 1)[0]: t.en for t in rec.rejected}
    a100 = why["NVIDIA A100 40 GB (SXM)"]
    assert "host RAM" in a100 and "several instances" not in a100  # one GPU was asked for: one instance


def test_an_unpriced_option_that_leads_over_a_priced_one_says_why_first() -> None:
    # 4 stated GPUs: 16-bit weights hold on 4 x 80 / 96 GB (no price in cn-chengdu, which prices only gn7i there);
    # the priced 4 x A10 needs INT8
    rec = recommend({"task": "inference", "model": "Llama 3.1 70B", "num_gpus": 4, "batch_size_per_gpu": 1,
                     "seq_len": 2048, "region": "cn-chengdu", "lang": "en"})
    first = rec.lead[0].en
    # the priced option is named in the lead (the alternatives table may list five unpriced 4-GPU types before it)
    priced = re.search(r"the option with a price, (ecs\.[\w.-]+)", first)
    assert rec.instance.price_per_hour is None and priced is not None
    assert first.startswith(f"{rec.instance.instance_type} leads although the catalog has no list price")
    assert "INT8" in first and "did not ask for" in first
    finding = _finding(rec.render("en"))
    assert finding.index("leads although") < finding.index("Recommended instance type")
    # the user's GPU without a price: the reason is that it was asked for
    l20 = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora",
                     "gpu_preference": "L20", "lang": "zh"})
    assert l20.instance.gpu_id == "L20" and "你指定的 GPU" in l20.lead[0].zh


def test_a_cheaper_total_sharded_over_pcie_of_an_inference_family_does_not_displace_a_training_family() -> None:
    # both priced in cn-hangzhou: 8 x A10 (gn7i, no NVLink, inference-positioned) with ZeRO-3 totals less than
    # 2 x A100 80 GB (gn7e), which the planner ranks first (Candidate.sharded_off_training) and the deadline line names
    # one epoch stated: with the 3-epoch default the A10 option misses the deadline and the premise does not hold
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "num_samples": 100000,
                     "epochs": 1, "deadline_hours": 12, "lang": "en"})
    assert rec.instance.gpu_id == "AMPERE-80GB" and rec.instance.price_per_hour is not None
    a10 = next(o for o in rec.cost.options if o.gpu_id == "A10")
    mine = rec.cost.option(rec.instance.instance_type)
    assert a10.payg_mid is not None and a10.payg_mid < mine.payg_mid  # the cheaper total is there, and named
    assert a10.instance_type in rec.cost.why.en and "positions for training" in rec.cost.why.en
    assert any(f"{rec.instance.total_gpus} × NVIDIA A100 80 GB" in t.en for t in rec.lead)  # lead and table agree


# --- stated values kept: a stated distributed strategy (plan/stated.py) -------------------------------------------
def test_a_stated_zero2_is_never_planned_as_zero3_and_offloads_at_zero2() -> None:
    w = Workload.model_validate({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "full",
                                 "distributed": "zero2", "num_gpus": 8})
    kept = training_steps(w, bf16=True, gpus=8, fixed_gpus=True, max_gpus_per_node=8, keep_strategy=True)
    stages = {dict(s.update).get("distributed") for s in kept} - {None}
    assert {getattr(d, "value", d) for d in stages} == {"zero2"}
    assert any(s.step == STEP_OFFLOAD for s in kept)  # ZeRO-Offload at the stated stage
    free = training_steps(w, bf16=True, gpus=8, fixed_gpus=True, max_gpus_per_node=8)
    assert "zero3" in {getattr(dict(s.update).get("distributed"), "value", None) for s in free}
    ddp = training_steps(w.model_copy(update={"distributed": "ddp"}), bf16=True, gpus=8, fixed_gpus=True,
                         max_gpus_per_node=8, keep_strategy=True)
    assert all(dict(s.update).get("distributed") is None for s in ddp)  # DDP: no sharding, no offload
    rec = recommend({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "full", "distributed": "zero2",
                     "num_gpus": 8, "lang": "en"})
    assert rec.instance is not None and rec.instance.total_gpus == 8
    assert rec.alternatives and "ZeRO-3" not in rec.render("en") and "offload_param" not in rec.render("en")


def test_a_stated_strategy_that_holds_the_job_nowhere_is_said_first_with_the_change_that_does() -> None:
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "full", "distributed": "ddp",
                     "num_gpus": 8, "lang": "en"})
    assert rec.instance is not None and rec.instance.total_gpus == 8  # the stated count kept
    first = rec.lead[0].en
    assert first.startswith("With DDP as you stated, no GPU of the catalog holds this job")
    # the figure: DDP keeps 16 bytes a parameter on every GPU, more than any card
    need = float(re.search(r"about ([\d.]+) GiB per GPU on", first).group(1))
    assert need > 8.03e9 * 16 / 2**30
    assert rec.instance.instance_type in first and f"{rec.planned_memory.device_total_gib:.1f} GiB" in first
    assert "按你给出的 DDP" in rec.lead[0].zh


def test_a_cheaper_cpu_offload_total_does_not_displace_a_plan_that_keeps_the_states_on_the_gpus() -> None:
    rec = recommend({"task": "llm_finetune", "model": "Qwen2.5-7B", "finetune_method": "full", "distributed": "zero2",
                     "num_gpus": 8, "num_samples": 100000, "lang": "en"})
    assert rec.instance is not None and rec.planned_memory.breakdown.get("optimizer", 0) > 0  # states on the GPUs
    assert rec.cost is None or rec.cost.recommended == rec.instance.instance_type


# --- users-read-as-at-once-said: no single instance holds the stated sequences at once --------------------------
def test_concurrency_no_single_instance_holds_is_served_by_replicas_of_a_layout_that_holds_a_share() -> None:
    rec = recommend({"task": "inference", "model": "Qwen2.5-14B", "concurrent_users": 1000, "batch_size_per_gpu": 1000,
                     "lang": "en"})
    assert rec.instance is not None  # was: no instance at all
    m = re.match(r"1000 concurrent sequences over (\d+) replicas of (\d+) × .*about (\d+) sequences", rec.lead[0].en)
    assert m is not None, rec.lead[0].en
    replicas, gpus, share = (int(g) for g in m.groups())
    assert replicas > 1 and replicas * share >= 1000 and gpus == rec.instance.total_gpus
    assert upper_gib(rec.planned_memory) <= rec.instance.gpu_memory_gib  # each replica holds its share

"""Long-context LLM training: the ladder's chunked-loss and sequence-parallel steps (plan/ladder.py), their memory
(memory/transformer.py: activations per 1/sp of the tokens) and their all-to-all traffic (costing/comm.py)."""

from __future__ import annotations

import pytest

from gpu_advisor import recommend
from gpu_advisor.advisor import get_knowledge
from gpu_advisor.memory import estimate_memory
from gpu_advisor.plan.ladder import STEP_MICROBATCH, STEP_SHARD, training_steps
from gpu_advisor.workload import Workload

GIB = 2.0**30
STATES = ("weights", "master_weights", "optimizer", "gradients", "framework_extras")


def llm(**kw) -> Workload:
    base = dict(task="llm_finetune", model="Qwen2.5 7B", seq_len=32768, batch_size_per_gpu=1,
                gradient_checkpointing=True, finetune_method="full", precision="bf16_amp", chunked_loss=True,
                distributed="zero3", num_gpus=4)
    return Workload(**{**base, **kw})


def _fired(rec) -> set[str]:
    return {t.rule_id for t in rec.trace}


def test_sequence_parallelism_divides_activations_and_loss_buffers_not_model_states() -> None:
    one, four = estimate_memory(llm()), estimate_memory(llm(), 4)
    for part in STATES:
        assert four.breakdown.get(part, 0.0) == one.breakdown.get(part, 0.0)
    assert four.breakdown["activations"] == pytest.approx(one.breakdown["activations"] / 4, rel=1e-3)
    assert four.breakdown["transient"] == pytest.approx(one.breakdown["transient"] / 4, rel=1e-3)
    # a CNN has no sequence to split: the degree changes nothing
    seg = Workload(task="semantic_segmentation", model="UNet", input_size=(512, 512), batch_size_per_gpu=2)
    assert estimate_memory(seg, 4).breakdown == estimate_memory(seg).breakdown


def _updates(steps, key):
    return [dict(s.update).get(key) for s in steps]


def test_the_chain_tries_the_chunked_loss_before_sharding_and_sequence_parallelism_before_more_gpus() -> None:
    w = Workload(task="llm_finetune", model="Qwen2.5 7B", seq_len=32768, finetune_method="full", batch_size_per_gpu=2)
    steps = training_steps(w, bf16=True, gpus=1, fixed_gpus=False, max_gpus_per_node=8, heads=28, seq_len=32768)
    first_shard = next(i for i, s in enumerate(steps) if s.step >= STEP_SHARD)
    chunked = [i for i, s in enumerate(steps) if s.step == STEP_MICROBATCH and dict(s.update).get("chunked_loss")]
    assert chunked == [first_shard - 1]
    assert dict(steps[chunked[0]].update)["batch_size_per_gpu"] == 1
    # at every GPU count: the plain stages, the same stages with the chunked loss, then ZeRO-3 + SP over those GPUs
    for n in (2, 4):
        at_n = [s for s in steps if s.gpus == n]
        assert [bool(dict(s.update).get("chunked_loss")) for s in at_n] == [False] * 3 + [True] * 4
        assert [s.sp for s in at_n] == [1] * 6 + [n]
        assert dict(at_n[-1].update)["distributed"].value == "zero3"
        assert steps.index(at_n[-1]) < min(steps.index(s) for s in steps if s.gpus > n)
    # 28 heads do not divide by 8 or 16: no sequence-parallel step there (DeepSpeed-Ulysses splits the heads)
    assert not [s for s in steps if s.gpus in (8, 16) and s.sp > 1]
    # not a causal LM, or a chunked loss already given: none of these steps / no chunked step
    assert all(s.sp == 1 and not dict(s.update).get("chunked_loss")
               for s in training_steps(w, bf16=True, gpus=1, fixed_gpus=False, max_gpus_per_node=8))
    given = w.model_copy(update={"chunked_loss": True})
    steps = training_steps(given, bf16=True, gpus=1, fixed_gpus=False, max_gpus_per_node=8, heads=28, seq_len=32768)
    assert not [s for s in steps if "chunked_loss" in dict(s.update)] and any(s.sp == 4 for s in steps)


def test_lora_8b_at_32k_fits_with_a_chunked_loss_not_32_gpus() -> None:
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "seq_len": 32768})
    assert rec.instance is not None and rec.instance.total_gpus <= 8     # was 32 x 96 GB on 4 machines
    assert "MIT-CHUNKED-LOSS" in _fired(rec) and "MIT-MULTINODE" not in _fired(rec)
    assert any("Liger" in m.en for m in rec.instance.mitigations)
    assert "enable_liger_kernel" in rec.render("en")


def test_full_7b_at_32k_uses_sequence_parallelism_over_the_gpus_of_one_machine() -> None:
    from gpu_advisor.costing.timing import estimate_time
    from gpu_advisor.plan.defaults import resolve_job
    from gpu_advisor.plan.planner import plan
    from gpu_advisor.validation import workload_from_dict

    fields = {"task": "llm_finetune", "model": "Qwen2.5 7B", "finetune_method": "full", "seq_len": 32768,
              "num_samples": 1000}
    rec = recommend(fields)
    assert rec.instance is not None and rec.instance.total_gpus <= 8 and rec.instance.nodes == 1
    assert "MIT-SEQ-PARALLEL" in _fired(rec)
    kb = get_knowledge()
    job = resolve_job(workload_from_dict(fields), kb.catalog)
    chosen = plan(kb.catalog, job.workload, job.region).chosen
    assert chosen is not None and chosen.variant.sp == chosen.total_gpus > 1
    notes = {n.code for n in estimate_time(chosen, job).notes}
    assert {"time_shard_traffic", "time_sp_traffic"} <= notes


def test_ulysses_traffic_is_the_papers_all_to_alls() -> None:
    from gpu_advisor.costing.comm import ulysses_bytes

    w = llm()
    profile = estimate_memory(w).profile
    # Qwen2.5-7B: 28 layers, q and output 28 x 128 wide, k and v 4 x 128; forward, backward, recomputed forward
    expected = 28 * 3 * (32768 / 4) * (2 * 28 * 128 + 2 * 4 * 128) * 2 * 3 / 4
    assert ulysses_bytes(w, profile, 4) == pytest.approx(expected)
    assert ulysses_bytes(w, profile, 1) == 0.0


@pytest.mark.parametrize("fields", [
    {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora"},
    {"task": "llm_finetune", "model": "Qwen2.5 7B", "finetune_method": "full", "num_gpus": 8},
    {"task": "llm_finetune", "model": "Qwen2.5 14B", "finetune_method": "full", "precision": "fp32"},
])
def test_short_sequences_get_no_long_context_step(fields) -> None:
    rec = recommend(fields)
    assert not {"MIT-CHUNKED-LOSS", "MIT-SEQ-PARALLEL"} & _fired(rec)

"""A serving plan speaks of serving: tensor parallelism and INT8 weights, never training's ZeRO / checkpointing."""

from __future__ import annotations

from gpu_advisor import recommend

TRAINING_ONLY = ("MIT-CKPT", "MIT-SHARD", "MIT-AMP", "MIT-MICROBATCH")


def _fired(rec) -> set[str]:
    return {t.rule_id for t in rec.trace}


def test_a_16_bit_tensor_parallel_plan_is_not_called_int8_or_zero3() -> None:
    # on 80 GB cards 16-bit weights over 4 GPUs hold the job at the planning estimate (int8 on one card does not)
    rec = recommend({"task": "inference", "model": "Llama 3.1 70B", "lang": "en", "gpu_preference": "80GB"})
    assert rec.instance.total_gpus > 1 and rec.planned_memory.profile.job.quantization == "none"
    assert [m.en for m in rec.instance.mitigations] == ["tensor parallelism"]
    fired = _fired(rec)
    # the plan chose the GPU count: INF-SPLIT says it (with the tensor-parallel flag), INF-TP is for a stated count
    assert "INF-SPLIT" in fired and "INF-TP" not in fired and "INF-QUANT" not in fired and not fired & set(TRAINING_ONLY)
    text = rec.render("en")
    assert "ZeRO-3" not in text.split("not the ZeRO / FSDP sharding of training")[0]
    assert "gradient (activation) checkpointing" not in text and "Memory mitigations" not in text


def test_an_int8_plan_says_int8() -> None:
    # 16-bit weights over 4 x 40 GB with 8 sequences do not fit (4 x 80 / 96 GB would, and lead when no GPU is asked
    # for; one sequence fits since a serving job's weights are exact bytes, h14-srv)
    rec = recommend({"task": "inference", "model": "Llama 3.1 70B", "num_gpus": 4, "batch_size_per_gpu": 8,
                     "seq_len": 2048, "gpu_preference": "A100-40GB"})
    assert rec.planned_memory.profile.job.quantization == "int8"
    assert "INT8 weights" in [m.en for m in rec.instance.mitigations]
    assert "INF-QUANT" in _fired(rec)
    assert "int8 (quantized weights)" in rec.planned_memory.formula.en


def test_training_keeps_its_mitigations() -> None:
    rec = recommend({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "full", "precision": "fp32"})
    # an 8B full fine-tune is sharded with ZeRO-2 (its weights fit whole: MIT-ZERO2), never split as for serving
    assert {"MIT-SHARD", "MIT-ZERO2", "MIT-ZERO1"} & _fired(rec) and "INF-TP" not in _fired(rec)
    texts = [m.en for m in rec.instance.mitigations]
    assert any(t.startswith("ZeRO-") and "sharding" in t for t in texts) and "tensor parallelism" not in texts


def test_a_services_assumptions_are_about_serving() -> None:
    rec = recommend({"task": "inference", "model": "Llama 3.1 8B", "lang": "en"})
    said = {n.field: n.text.en for n in rec.assumptions}
    assert "concurrent requests" in said["batch_size_per_gpu"] and "micro-batch" not in said["batch_size_per_gpu"]
    assert "tensor parallelism" in said["distributed"] and "DDP when" not in said["distributed"]
    assert "lose an instance" in said["interruptible"] and "checkpoints" not in said["interruptible"]
    zh = {n.field: n.text.zh for n in rec.assumptions}
    assert "并发请求" in zh["batch_size_per_gpu"] and "张量并行" in zh["distributed"]


def test_serving_a_vision_backbone_is_a_vision_estimate() -> None:
    """'部署 ResNet-50 图像分类服务' parses to task inference + backbone ResNet-50: it was estimated as the default LLM."""
    for fields in ({"backbone": "ResNet-50"}, {"input_size": [640, 640]}, {"backbone": "Swin-L", "input_size": [512, 512]}):
        rec = recommend({"task": "inference", **fields})
        assert not rec.memory.profile.is_llm and rec.memory.profile.method == "classifier"
        assert rec.memory.device_total_gib < 4
    assert recommend({"task": "inference"}).memory.profile.is_llm  # nothing said: the task's typical model, an LLM

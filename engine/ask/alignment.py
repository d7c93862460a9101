"""Preference and RL training methods (lexicon ``alignment``): what they keep resident beyond supervised fine-tuning.

Offline methods (DPO, KTO, ORPO, SimPO) train on fixed examples: the job is sized as supervised fine-tuning of the
same model, and a line said first adds what the method keeps besides, per GPU of the leading option:
- the frozen reference model (DPO, KTO; Rafailov et al. 2023, arXiv:2305.18290 eq. 7): 2 bytes per parameter in
  bf16, on every GPU under DDP / ZeRO-1 / ZeRO-2 and 1/n of it under ZeRO-3 / FSDP (DeepSpeed and FSDP shard the
  reference like the policy when it is wrapped by the same engine, TRL DPOTrainer); with LoRA the reference is the
  base with the adapters disabled (TRL: "the reference model is the base model without the adapter"), nothing extra;
- a pair's chosen and rejected sequences in one forward (TRL ``concatenated_forward``): the activations of two
  sequences per pair, and twice the tokens;
- the reference forward, 2N FLOPs per token on top of 6N  or 4N (LoRA) (Kaplan et al. 2020, arXiv:2001.08361).

Online methods (GRPO, PPO, RLOO, DAPO) generate rollouts with the policy while training: a generation engine's
weights and KV cache are resident beside the training states, and generation takes most of the wall-clock
(OpenRLHF README: "RLHF training spends 80% of the time on the sample generation stage"), so neither the memory
model nor the 6 x params x tokens time of supervised training applies. The question is refused with the states the
method keeps resident (derived per parameter, [ZeRO] 16 bytes per parameter for a model trained with mixed-precision
AdamW, 2 for a frozen bf16 one), the floor in 80 GB GPUs they imply, the KV cache per token, the frameworks' own
reference layouts, and what to ask instead.
"""

from __future__ import annotations

import math
from typing import Any

from gpu_advisor.ask.lexicon import Entry, load_lexicon
from gpu_advisor.errors import WorkloadError
from gpu_advisor.util.i18n import Text

GIB = 2 ** 30
TRAINED_BYTES = 16.0   # [ZeRO] bf16 weights + grads + fp32 master / momentum / variance (arXiv:1910.02054 sec. 3)
FROZEN_BYTES = 2.0     # a bf16 copy of the weights
NF4_BYTES = 0.5        # [QLoRA] NF4 weights (arXiv:2305.14314)
CARD_GB = 80           # the reference card size for the floor (every 80 GB GPU of the catalog)
HEADROOM = 0.95        # the planner's 5 % headroom (plan/planner.py)
SHARDED = ("zero3", "fsdp")
# verl examples/grpo_trainer/run_qwen2-7b.sh @3f388066: Qwen2-7B-Instruct GRPO, trainer.n_gpus_per_node=8, nnodes=1,
# rollout vLLM tensor_model_parallel_size=2, gpu_memory_utilization=0.6, rollout.n=5, ref param_offload=True.
# OpenRLHF README (train_ppo_ray): Llama-3-8B PPO with actor, critic, reference and reward colocated on 8 GPUs,
# --zero_stage 3, --vllm_num_engines 4 --vllm_tensor_parallel_size 2.
SRC_VERL = Text(en="verl's GRPO example for Qwen2-7B runs on 1 node x 8 GPUs (examples/grpo_trainer/run_qwen2-7b.sh)",
                zh="verl 的 Qwen2-7B GRPO 示例用 1 台 8 卡（examples/grpo_trainer/run_qwen2-7b.sh）")
SRC_OPENRLHF = Text(en="OpenRLHF's Llama-3-8B PPO example colocates actor, critic, reference and reward on 8 GPUs (README)",
                    zh="OpenRLHF 的 Llama-3-8B PPO 示例把 actor、critic、参考与奖励模型共置在 8 张卡上（README）")


def method_entry(name: str | None) -> Entry | None:
    return next((e for e in load_lexicon().alignment if e.value == name), None) if name else None


def _profile(fields: dict[str, Any]) -> Any:
    from gpu_advisor import estimate_memory
    from gpu_advisor.ask.parser import validate_fields

    return estimate_memory(validate_fields({**fields, "task": "llm_finetune"})).profile


def _gib(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.1f}"


def online_refusal(method: str | None, fields: dict[str, Any]) -> WorkloadError | None:
    """The refusal for an RL method with rollouts (GRPO, PPO, ...), with the states it keeps resident; None otherwise."""
    entry = method_entry(method)
    if entry is None or entry.extra.get("kind") != "online":
        return None
    if not fields.get("model") and not fields.get("params_billion"):
        return WorkloadError(
            f"model: {entry.value} keeps the policy's training states, a frozen reference model and a rollout engine's "
            "copy of the weights resident (about 20 bytes per parameter with full fine-tuning, 4 with LoRA, before "
            "activations and the KV cache), so it depends on the model: name it (e.g. 'GRPO Qwen2.5-7B') or give its "
            "parameter count.",
            f"模型：{entry.value} 需要常驻策略模型的训练状态、冻结的参考模型和 rollout 引擎的一份权重（全参约每参数 20 字节，"
            "LoRA 约 4 字节，未计激活与 KV 缓存），取决于模型：请说明模型（如“GRPO Qwen2.5-7B”）或给出参数量。",
            field="model")
    prof = _profile(fields)
    p = prof.params_billion * 1e9
    ft = str(fields.get("finetune_method") or "full")
    base = NF4_BYTES if ft == "qlora" else FROZEN_BYTES
    parts_en, parts_zh, total = [], [], 0.0

    def part(en: str, zh: str, bytes_per_param: float) -> None:
        nonlocal total
        gib = bytes_per_param * p / GIB
        total += gib
        parts_en.append(f"{en} {bytes_per_param:g} B/param = {_gib(gib)} GiB")
        parts_zh.append(f"{zh} 每参数 {bytes_per_param:g} 字节 = {_gib(gib)} GiB")

    if ft == "full":
        part("the policy's bf16 weights, gradients and AdamW states", "策略模型的 bf16 权重、梯度与 AdamW 状态", TRAINED_BYTES)
        if entry.extra.get("reference"):
            part("the frozen reference model", "冻结的参考模型", FROZEN_BYTES)
    else:
        part(f"the frozen base ({ft}; the reference is the same base with the adapters disabled)",
             f"冻结的基座（{ft}；参考模型即关闭适配器的同一基座）", base)
    if entry.extra.get("critic"):
        part("the value (critic) model, trained, assumed the policy's size",
             "价值（critic）模型（需训练，按与策略同尺寸假设）", TRAINED_BYTES if ft == "full" else base)
    if entry.extra.get("reward_model"):
        part("the reward model, frozen, assumed the policy's size", "奖励模型（冻结，按与策略同尺寸假设）", FROZEN_BYTES)
    part("the rollout engine's own copy of the weights (vLLM / SGLang, colocated, one tensor-parallel group)",
         "rollout 引擎（vLLM / SGLang，共置，一个张量并行组）自己的一份权重", FROZEN_BYTES)
    cards = max(1, math.ceil(total / (CARD_GB * 1e9 / GIB * HEADROOM)))
    kv = prof.kv_cache_bytes_per_token
    seq = int(fields.get("seq_len") or 1024)
    kv_en = kv_zh = ""
    if kv:
        per100 = kv * seq * 100 / GIB
        kv_en = f" and the rollouts' KV cache of {kv / 1024:,.0f} KiB per token ({per100:.1f} GiB per 100 sequences of {seq:,} tokens in flight)"
        kv_zh = f"与 rollout 的 KV 缓存：每 token {kv / 1024:,.0f} KiB，每 100 条 {seq:,} token 的并发序列 {per100:.1f} GiB"
    name = str(fields.get("model") or prof.display)
    squash = name.replace(" ", "").replace("-", "").lower()
    same = prof.display.replace(" ", "").replace("-", "").lower() in squash
    shape_en = "" if same else f" (sized with the {prof.display} shape)"
    shape_zh = "" if same else f"（按 {prof.display} 的结构估算）"
    no_rm_en = "" if entry.extra.get("reward_model") else "; rule-based rewards (math, code) need no reward model"
    no_rm_zh = "" if entry.extra.get("reward_model") else "；规则奖励（数学、代码）无需奖励模型"
    label = {"full": "", "lora": "LoRA", "qlora": "QLoRA"}.get(ft, ft)
    sft_zh = f"{label + ' 微调' if label else '全参微调'} {name}，8 卡"
    sft_en = f"{label + ' fine-tune' if label else 'full fine-tune'} {name} on 8 GPUs"
    en = (f"{entry.value} on {name}{shape_en}: gpu-advisor sizes supervised training and serving, not an RL loop in which the "
          "policy generates rollouts while it trains, so it gives no instance type or time for it. What stays "
          f"resident, from first principles ({'full fine-tuning' if ft == 'full' else ft}): {'; '.join(parts_en)}{no_rm_en}: {_gib(total)} GiB in all, so at "
          f"least {cards} GPU(s) of {CARD_GB} GB sharded with FSDP / ZeRO-3, before activations{kv_en}. Reference "
          f"layouts: {SRC_VERL.en}; {SRC_OPENRLHF.en}. Generation takes most of the time, so 6 x params x tokens does not "
          f"give it. To size the parts, ask for the training side ('{sft_en}') and add the models above, and ask "
          f"for serving {name} for the rollout engine ('serve {name}, 64 concurrent, output {seq} tokens').")
    zh = (f"{name}{shape_zh} 的 {entry.value} 训练：gpu-advisor 估算监督训练与推理服务，不估算训练中由策略模型在线生成 rollout 的"
          "强化学习循环，因此不给出实例规格与耗时。按第一性原理，常驻显存的有"
          f"（{'全参训练' if ft == 'full' else ft}）：{'；'.join(parts_zh)}{no_rm_zh}：合计 {_gib(total)} GiB，即用 FSDP / ZeRO-3 分片时至少 {cards} 张 "
          f"{CARD_GB} GB 的卡（未计激活{kv_zh}）。参考布局：{SRC_VERL.zh}；{SRC_OPENRLHF.zh}。耗时主要在生成阶段，不能按 6 × 参数 × token "
          f"估算。如需分别估算：训练部分请问“{sft_zh}”并加上上述模型；rollout 引擎请按推理服务问"
          f"“部署 {name}，64 并发，输出 {seq} token”。")
    return WorkloadError(en, zh, field="finetune_method")


def compute_factor(method: str | None, finetune_method: str | None) -> tuple[float, Any]:
    """Compute per example of an offline method over one supervised sequence, from first principles (Kaplan et al.
    2020: forward 2N, backward 4N FLOPs per token; LoRA 4N in all, no weight gradients): the policy's forward and
    backward on each of the pair's sequences, plus the frozen reference's forward (2N) on each. DPO full:
    2 x (6N + 2N) / 6N = 2.67; DPO LoRA: 2 x (4N + 2N) / 4N = 3.0. (1.0, None) for anything else."""
    entry = method_entry(method)
    if entry is None or entry.extra.get("kind") != "offline":
        return 1.0, None
    from gpu_advisor.util.i18n import note

    ft = str(finetune_method or "full")
    seqs = int(entry.extra.get("sequences", 1))
    per_token = 6.0 if ft == "full" else 4.0
    ref = 2.0 if entry.extra.get("reference") else 0.0
    factor = seqs * (per_token + ref) / per_token
    if abs(factor - 1.0) < 1e-9:
        return 1.0, None
    ref_en = f" + the frozen reference's forward {ref:g}N" if ref else ""
    ref_zh = f" + 冻结参考模型前向 {ref:g}N" if ref else ""
    return factor, note(
        "time_alignment", f"{entry.value}: each sample is {seqs} sequence(s), each costing the policy's "
        f"{per_token:g}N FLOPs per token{ref_en} (forward 2N, backward 4N; Kaplan et al. 2020, arXiv:2001.08361): "
        f"time and cost are x {factor:.2f} those of supervised fine-tuning on the same samples.",
        f"{entry.value}：每个样本 {seqs} 条序列，每条每 token 策略模型 {per_token:g}N FLOPs{ref_zh}（前向 2N、反向 4N；"
        f"Kaplan et al. 2020，arXiv:2001.08361）：耗时与费用为同样样本监督微调的 {factor:.2f} 倍。",
        "finetune_method", ft)


def offline_line(method: str | None, rec: Any) -> tuple[Text, bool] | None:
    """What an offline preference method adds to the supervised fine-tuning figures of the leading option, and
    whether the leading option still holds the job with it."""
    entry = method_entry(method)
    if entry is None or entry.extra.get("kind") != "offline" or rec.instance is None or rec.planned_memory is None \
            or rec.workload.get("task") == "inference":
        return None
    prof, opt = rec.planned_memory.profile, rec.instance
    job = prof.job
    ft, dist, n = str(job.finetune_method or "full"), str(job.distributed or "none"), max(1, opt.total_gpus)
    seqs = int(entry.extra.get("sequences", 1))
    ref = FROZEN_BYTES * prof.params_billion * 1e9 / GIB if entry.extra.get("reference") and ft == "full" else 0.0
    ref_gpu = ref / n if dist in SHARDED else ref
    act = float(rec.planned_memory.breakdown.get("activations", 0.0)) * (seqs - 1)
    need = opt.planned_mem_gib + ref_gpu + act
    cap = opt.gpu_memory_gib * HEADROOM
    per_token = (6.0 if ft == "full" else 4.0)
    factor = seqs * (per_token + (2.0 if entry.extra.get("reference") else 0.0)) / per_token
    what_en, what_zh = [], []
    if ref:
        where_en = f"1/{n} of it per GPU under {dist}" if dist in SHARDED else f"whole on every GPU under {dist}"
        where_zh = f"在 {dist} 下每卡 1/{n}" if dist in SHARDED else f"在 {dist} 下每卡一整份"
        what_en.append(f"the frozen reference model, {ref:.1f} GiB of bf16 weights ({where_en})")
        what_zh.append(f"冻结的参考模型，bf16 权重 {ref:.1f} GiB（{where_zh}）")
    elif entry.extra.get("reference"):
        what_en.append(f"no reference copy ({ft}: the reference is the base with the adapters disabled)")
        what_zh.append(f"无需另存参考模型（{ft}：参考模型即关闭适配器的基座）")
    if seqs > 1:
        more_en, more_zh = (f" (+{act:.1f} GiB of activations)", f"（激活 +{act:.1f} GiB）") if act >= 0.05 else ("", "")
        what_en.append(f"each pair's chosen and rejected sequences in one forward{more_en}")
        what_zh.append(f"每对样本的 chosen 与 rejected 两条序列一起前向{more_zh}")
    # the yes / no is decided on the planning (upper) estimate, as the planner decides (plan/planner.fits): the
    # central figure plus the family's margin, the margin applied to the method's extras too
    from gpu_advisor.plan.planner import upper_gib

    pm = rec.planned_memory
    margin = (pm.allocated_upper_gib - 0.25) / pm.allocated_peak_gib if pm.allocated_upper_gib and pm.allocated_peak_gib else 1.0
    upper = upper_gib(pm) + (ref_gpu + act) * max(1.0, margin)
    fits = need <= cap and upper <= opt.gpu_memory_gib
    sft = opt.planned_mem_gib
    up_en = f", up to {upper:.1f} GiB at the planning (upper) estimate" if upper - need >= 0.05 else ""
    up_zh = f"，按规划（上限）估计最多 {upper:.1f} GiB" if upper - need >= 0.05 else ""
    # what brings it under the card: only the remedies that apply to this job
    fix_en, fix_zh = [], []
    if ref and n > 1 and dist not in SHARDED:
        fix_en.append("ZeRO-3 / FSDP (shards the reference)")
        fix_zh.append("ZeRO-3 / FSDP（参考模型一并分片）")
    if ref:
        fix_en.append("precomputed reference log-probs (TRL precompute_ref_log_probs=True)")
        fix_zh.append("预先计算参考模型的 log-prob（TRL precompute_ref_log_probs=True）")
    if ft == "full":
        fix_en.append("LoRA")
        fix_zh.append("LoRA")
    if not job.gradient_checkpointing:
        fix_en.append("gradient checkpointing")
        fix_zh.append("梯度检查点")
    fix_en.append("a GPU with more memory")
    fix_zh.append("显存更大的卡")
    central = need <= cap
    if fits:
        tail_en = f"which still fits (the per-GPU figures of this answer include it; supervised fine-tuning alone {sft:.1f} GiB)"
        tail_zh = f"仍放得下（本答案的每卡显存已含这部分；仅监督微调为 {sft:.1f} GiB）"
    elif central:
        tail_en = ("tight: within the card at the central estimate but not at the planning (upper) one; measure one "
                   f"batch first, and on OOM use {' or '.join(fix_en)}")
        tail_zh = f"偏紧：中间估计放得下，规划（上限）估计放不下；先实测一个批次，OOM 时改用{'或'.join(fix_zh)}"
    else:
        tail_en = f"which does not fit: use {' or '.join(fix_en)}"
        tail_zh = f"放不下：改用{'或'.join(fix_zh)}"
    verdict_en = f"about {need:.1f} GiB per GPU{up_en}, of {opt.gpu_memory_gib:g} GB on {n} × {opt.gpu_display}, {tail_en}"
    verdict_zh = f"{n} 张 {opt.gpu_display} 上每卡约 {need:.1f} GiB{up_zh} / {opt.gpu_memory_gib:g} GB，{tail_zh}"
    unit_en = "pair" if seqs > 1 else "example"
    unit_zh = "对" if seqs > 1 else "条"
    name = str(rec.workload.get("model") or prof.display)
    ref_en = ", plus the reference forward, 2N FLOPs per token" if entry.extra.get("reference") else ""
    ref_zh = "，外加参考模型前向，每 token 2N FLOPs" if entry.extra.get("reference") else ""
    return _OfflineLine(Text(
        en=f"{entry.value} on {name}, beyond supervised fine-tuning: {verdict_en}. It keeps {'; '.join(what_en)}. "
           f"Compute per {unit_en} is about {factor:.1f}x a supervised sample's ({seqs} sequence(s){ref_en}); the "
           "time and cost figures below include it.",
        zh=f"{name} 的 {entry.value}（在监督微调之上）：{verdict_zh}。另需：{'；'.join(what_zh)}。"
           f"每{unit_zh}样本的计算量约为监督微调一条样本的 {factor:.1f} 倍（{seqs} 条序列{ref_zh}）；下面的耗时与费用已按此计入。"),
        fits, ref_gpu, act, central)


class _OfflineLine(tuple):   # (line, fits, reference GiB per GPU, extra activation GiB): unpacks as (line, fits)
    def __new__(cls, line: Text, fits: bool, ref_gpu: float, act: float, central: bool | None = None) -> "_OfflineLine":
        obj = super().__new__(cls, (line, fits))
        obj.ref_gpu, obj.act = ref_gpu, act
        obj.central = fits if central is None else central   # within the card at the central estimate
        return obj


def with_offline_method(line: Any, rec: Any) -> Any:
    """The recommendation with an offline method's resident extras (offline_line: the frozen reference's share, the
    second sequence's activations) in the leading option's per-GPU figures, when it still fits: one per-GPU figure in
    the answer, the method's. One that no longer fits keeps the supervised figures; its line says what to do."""
    if line is None or not getattr(line, "central", line[1]) or rec.planned_memory is None or rec.instance is None:
        return rec
    extra = line.ref_gpu + line.act
    if extra < 0.05:
        return rec
    pm, inst = rec.planned_memory, rec.instance
    parts = dict(pm.breakdown)
    if line.ref_gpu >= 0.05:
        parts["reference_model"] = round(line.ref_gpu, 2)
    if line.act >= 0.05:
        parts["activations"] = round(parts.get("activations", 0.0) + line.act, 2)
    need = pm.device_total_gib + extra
    pm = pm.model_copy(update={"device_total_gib": round(need, 2), "breakdown": parts,
                               "allocated_peak_gib": pm.allocated_peak_gib + extra,
                               "allocated_upper_gib": pm.allocated_upper_gib + extra if pm.allocated_upper_gib else 0.0})
    headroom = round((1.0 - need / inst.gpu_memory_gib) * 100.0, 1) if inst.gpu_memory_gib else inst.headroom_pct
    inst = inst.model_copy(update={"planned_mem_gib": round(need, 2), "headroom_pct": headroom})
    return rec.model_copy(update={"planned_memory": pm, "instance": inst})

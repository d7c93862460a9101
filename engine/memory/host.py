"""Host RAM and vCPUs per node for the data pipeline, checkpoint staging and CPU offload.

The model states in host RAM are the GPU estimate's own (memory/states.py), so the two never disagree:
- checkpoint staging: what this node's ranks save, copied to host memory on the way to storage. A full training
  job saves its weights and its optimizer state with the fp32 master copy; PEFT (LoRA / QLoRA) saves the adapters
  only, not the frozen base. With ZeRO / FSDP each rank saves its own shard of what is sharded, so a node stages its
  GPUs' share; what is replicated (DDP, or weights under ZeRO-1/2) is saved once, by rank 0.
- CPU offload (Workload.cpu_offload): exactly the bytes per GPU that the GPU estimate moved off the card, for each
  GPU of the node. Without cpu_offload nothing is offloaded: the GPU estimate keeps the states on the card.
"""

from __future__ import annotations

from gpu_advisor.util.i18n import Text
from gpu_advisor.memory.core import estimate_memory
from gpu_advisor.memory.states import SHARD_OPT, SHARD_WEIGHTS, STATES, per_param
from gpu_advisor.memory.types import HostEstimate, MemoryEstimate
from gpu_advisor.workload import Augmentation, Workload

GIB = 2.0**30
PREFETCH_FACTOR = 2          # torch.utils.data.DataLoader default prefetch_factor
WORKER_BASE_GIB = 0.35       # one worker process: Python + torch + dataset object (copy-on-write pages touched)
OS_AND_RUNTIME_GIB = 4.0     # OS, CUDA driver host allocations, main process
SOURCES = ["PyTorch DataLoader (num_workers, prefetch_factor=2, pin_memory): https://pytorch.org/docs/stable/data.html",
           "DeepSpeed ZeRO-Offload (Ren et al. 2021, arXiv:2101.06840): optimizer state in host memory",
           "PyTorch checkpoint saving copies tensors to CPU: https://pytorch.org/docs/stable/notes/serialization.html",
           "PEFT checkpoint format: the adapter state_dict holds the adapter's parameters, not the base model "
           "(https://huggingface.co/docs/peft/developer_guides/checkpoint)",
           "DeepSpeed model checkpointing: every rank saves its own optimizer state partition "
           "(zero_pp_rank_<r>_mp_rank_00_optim_states.pt; https://deepspeed.readthedocs.io/en/latest/model-checkpointing.html)"]
ADAPTERS = ("lora", "qlora")
STATE_PARTS = ("weights", "gradients", "optimizer", "master_weights")


def _sample_bytes(w: Workload, est_job: dict) -> float:
    """Decoded sample in host memory: uint8 HxWx3 image (x2 for augmentation copies), or int64 token ids."""
    if est_job.get("input_size"):
        h, wd = est_job["input_size"]
        return h * wd * 3 * 2 + h * wd * 8     # image copies + int64 label map / targets
    return (est_job.get("seq_len") or 2048) * 8 * 2


def loader_workers(workload: Workload, estimate: MemoryEstimate) -> int:
    """DataLoader workers per GPU: the user's, else the model's trainer default (Ultralytics workers 8,
    MethodSpec.train_defaults), else 8 with heavy augmentation and 4 otherwise."""
    if workload.data_loader_workers is not None:
        return workload.data_loader_workers
    from gpu_advisor.kb.models import knowledge
    method = knowledge().methods.get(estimate.profile.method or "") if estimate.profile.method else None
    if method is not None and method.train_defaults is not None and method.train_defaults.workers:
        return method.train_defaults.workers
    return 8 if workload.augmentation == Augmentation.heavy else 4


def estimate_host(workload: Workload, gpus_per_node: int, estimate: MemoryEstimate | None = None) -> HostEstimate:
    """RAM (GiB) and vCPUs one node needs: workers x prefetch x decoded batch, pinned memory, staging, offload.

    ``estimate`` is this workload's memory estimate when the caller already has it (saves recomputing it).
    """
    est = estimate if estimate is not None else estimate_memory(workload)
    job = est.profile.job.__dict__  # the frozen JobSettings' fields, read-only here
    gpus = max(1, gpus_per_node)
    heavy = workload.augmentation == Augmentation.heavy
    workers = loader_workers(workload, est)
    batch = job["batch_size_per_gpu"]
    sample = _sample_bytes(workload, job)
    pipeline = gpus * workers * (PREFETCH_FACTOR * batch * sample + WORKER_BASE_GIB * GIB)
    pinned = gpus * 2 * batch * sample
    offload = _offloaded(workload, est) * gpus
    staging = _staging(est, gpus, offloaded=offload > 0)
    parts = {"os_runtime": OS_AND_RUNTIME_GIB * GIB, "dataloader": pipeline, "pinned_memory": pinned,
             "checkpoint_staging": staging, "cpu_offload": offload}
    ram = sum(parts.values()) / GIB
    vcpu = gpus * (workers + 1) + (2 * gpus if heavy else 0)
    breakdown = {k: round(v / GIB, 2) for k, v in parts.items() if v > 0}
    formula = Text(
        en=(f"RAM {ram:.1f} GiB = 4 GiB OS/runtime + {gpus} GPU × {workers} workers × ({PREFETCH_FACTOR} prefetch × "
            f"{batch} samples × {sample / 2**20:.1f} MiB + {WORKER_BASE_GIB} GiB/worker) + pinned {pinned / GIB:.1f} GiB "
            f"+ checkpoint staging {staging / GIB:.1f} GiB + offload {offload / GIB:.1f} GiB; "
            f"vCPU {vcpu} = {gpus} × ({workers} workers + 1){' + heavy augmentation' if heavy else ''}"),
        zh=(f"内存 {ram:.1f} GiB = 4 GiB 系统/运行时 + {gpus} 卡 × {workers} 个 worker ×（预取 {PREFETCH_FACTOR} × "
            f"{batch} 个样本 × {sample / 2**20:.1f} MiB + 每 worker {WORKER_BASE_GIB} GiB）+ 锁页内存 {pinned / GIB:.1f} GiB "
            f"+ 检查点暂存 {staging / GIB:.1f} GiB + 卸载 {offload / GIB:.1f} GiB；"
            f"vCPU {vcpu} = {gpus} ×（{workers} 个 worker + 1）{'+ 重度增强' if heavy else ''}"))
    return HostEstimate(ram_gib=round(ram, 2), vcpu=vcpu, breakdown=breakdown, formula=formula,
                        assumptions=est.assumptions, sources=SOURCES)


def _saved(est: MemoryEstimate) -> tuple[float, float]:
    """Bytes a checkpoint of the whole job holds: (weights, optimizer state + fp32 master copy)."""
    profile, job = est.profile, est.profile.job
    trainable = profile.trainable_params_billion * 1e9
    if job.finetune_method in ADAPTERS:  # fp32 adapters (PEFT autocast_adapter_dtype) and their optimizer state
        return trainable * 4.0, trainable * STATES.get(job.optimizer or "adamw", 2.0) * 4.0
    transformer = profile.method is None  # CV profiles name their method (memory/core.py)
    weight, _, optimizer, master = per_param(job.precision, job.optimizer, transformer)
    if master and not transformer:  # torch.cuda.amp: the fp32 parameters are the master copy, the 16-bit ones a cache
        weight = 0.0
    return profile.params_billion * 1e9 * weight, trainable * (optimizer + master)


def _staging(est: MemoryEstimate, gpus_per_node: int, offloaded: bool) -> float:
    """Bytes this node's ranks copy to host memory when they save a checkpoint (0 when the job does not train)."""
    job = est.profile.job
    if not job.training:
        return 0.0
    weights, optimizer = _saved(est)
    n = max(1, job.num_gpus)
    share = min(1.0, gpus_per_node / n)  # of a state sharded over all n ranks
    sharded_weights = n > 1 and job.distributed in SHARD_WEIGHTS
    if offloaded:  # already in host memory: saved from there, not copied again
        optimizer = 0.0
        weights = 0.0 if sharded_weights else weights
    return (weights * (share if sharded_weights else 1.0)
            + optimizer * (share if n > 1 and job.distributed in SHARD_OPT else 1.0))


def _offloaded(workload: Workload, est: MemoryEstimate) -> float:
    """Bytes per GPU that cpu_offload keeps in host memory: the model states the GPU estimate moved off the card."""
    if not workload.cpu_offload:
        return 0.0
    on_card = estimate_memory(workload.model_copy(update={"cpu_offload": False}))
    moved = sum(on_card.breakdown.get(k, 0.0) - est.breakdown.get(k, 0.0) for k in STATE_PARTS)
    return max(0.0, moved) * GIB

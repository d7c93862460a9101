"""Host RAM and vCPUs per node for the data pipeline, checkpoint staging and ZeRO offload."""

from __future__ import annotations

from gpu_advisor.i18n import Text
from gpu_advisor.memory.core import estimate_memory
from gpu_advisor.memory.types import HostEstimate, MemoryEstimate
from gpu_advisor.workload import Augmentation, Workload

GIB = 2.0**30
PREFETCH_FACTOR = 2          # torch.utils.data.DataLoader default prefetch_factor
WORKER_BASE_GIB = 0.35       # one worker process: Python + torch + dataset object (copy-on-write pages touched)
OS_AND_RUNTIME_GIB = 4.0     # OS, CUDA driver host allocations, main process
SOURCES = ["PyTorch DataLoader (num_workers, prefetch_factor=2, pin_memory): https://pytorch.org/docs/stable/data.html",
           "DeepSpeed ZeRO-Offload (Ren et al. 2021, arXiv:2101.06840): optimizer state in host memory",
           "PyTorch checkpoint saving copies tensors to CPU: https://pytorch.org/docs/stable/notes/serialization.html"]


def _sample_bytes(w: Workload, est_job: dict) -> float:
    """Decoded sample in host memory: uint8 HxWx3 image (x2 for augmentation copies), or int64 token ids."""
    if est_job.get("input_size"):
        h, wd = est_job["input_size"]
        return h * wd * 3 * 2 + h * wd * 8     # image copies + int64 label map / targets
    return (est_job.get("seq_len") or 2048) * 8 * 2


def estimate_host(workload: Workload, gpus_per_node: int, estimate: MemoryEstimate | None = None) -> HostEstimate:
    """RAM (GiB) and vCPUs one node needs: workers x prefetch x decoded batch, pinned memory, staging, offload.

    ``estimate`` is this workload's memory estimate when the caller already has it (saves recomputing it).
    """
    est = estimate if estimate is not None else estimate_memory(workload)
    job = est.profile.job.__dict__  # the frozen JobSettings' fields, read-only here
    gpus = max(1, gpus_per_node)
    heavy = workload.augmentation == Augmentation.heavy
    workers = workload.data_loader_workers if workload.data_loader_workers is not None else (8 if heavy else 4)
    batch = job["batch_size_per_gpu"]
    sample = _sample_bytes(workload, job)
    pipeline = gpus * workers * (PREFETCH_FACTOR * batch * sample + WORKER_BASE_GIB * GIB)
    pinned = gpus * 2 * batch * sample
    states = est.profile.params_billion * 1e9
    staging = states * (4.0 + (8.0 if job.get("optimizer") in ("adam", "adamw") else 4.0)) if job["training"] else 0.0
    offload = states * 12.0 if job["distributed"] in ("zero3", "fsdp") and states > 20e9 else 0.0
    parts = {"os_runtime": OS_AND_RUNTIME_GIB * GIB, "dataloader": pipeline, "pinned_memory": pinned,
             "checkpoint_staging": staging, "zero_offload": offload}
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

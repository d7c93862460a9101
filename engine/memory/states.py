"""Model states per GPU: weights, gradients, optimizer state, fp32 master copy, DDP buckets, sharding.

Bytes per parameter (cited in the output):
- fp32: weights 4, grads 4, each optimizer state 4.
- AMP (fp16_amp / bf16_amp): 16-bit working weights 2 + fp32 master 4; grads 2 for transformers
  (Megatron/DeepSpeed mixed precision, ZeRO paper 1910.02054 §3: 2+2+4+4+4 = 16 B with Adam) and 4 for CV
  (torch.cuda.amp keeps fp32 parameters, so grads are fp32; the 16-bit copies are autocast's weight cache).
- pure bf16: weights 2, grads 2, each optimizer state 2 (torch optimizers keep states in the parameter dtype).
- Optimizer states: SGD 0, SGD momentum 1, Adam/AdamW 2, Lion 1, 8-bit AdamW 2 x 1 byte, Adafactor ~0.05.
- Sharding over n GPUs (Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054, sec. 5 and Figure 1): ZeRO-1 (P_os) divides
  the optimizer states and the fp32 master copy by n, 2 Psi + 2 Psi + K Psi / n with AMP and Adam (K = 12); ZeRO-2
  (P_os+g) the gradients too, 2 Psi + (2 + K) Psi / n; ZeRO-3 / FSDP (P_os+g+p) the weights too, (2 + 2 + K) Psi / n
  plus the gathered layers in flight. The paper's 7.5B example on 64 GPUs: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
"""

from __future__ import annotations

from dataclasses import dataclass

# DeepSpeed ZeRO-1 / 2 (microsoft/DeepSpeed@38327e07 deepspeed/runtime/zero/stage_1_and_2.py): the gradients are
# reduced through an "ipg" buffer of reduce_bucket_size elements in the gradient dtype (torch.empty(reduce_bucket_size),
# zero/config.py default 5e8, as in LLaMA-Factory examples/deepspeed/ds_z2_config.json), and at the optimizer step each
# rank's gradient partition is flattened and cast to fp32 for the fp32 optimizer (single_grad_partition
# ... .to(single_partition_of_fp32_groups[i].dtype)): 4 bytes per trainable parameter / n beside the 16-bit gradients.
DS_REDUCE_BUCKET = 5e8
STATES = {"sgd": 0.0, "sgd_momentum": 1.0, "adam": 2.0, "adamw": 2.0, "lion": 1.0, "adafactor": 0.05}
SHARD_OPT = {"zero1", "zero2", "zero3", "fsdp"}
SHARD_GRAD = {"zero2", "zero3", "fsdp"}
SHARD_WEIGHTS = {"zero3", "fsdp"}


@dataclass(frozen=True)
class StateBytes:
    weights: float
    gradients: float
    optimizer: float
    master_weights: float
    ddp_buckets: float
    gathered: float          # ZeRO-3 / FSDP: all-gathered parameters of the layers in flight

    def static(self) -> float:
        return self.weights + self.optimizer + self.master_weights + self.ddp_buckets + self.gathered


def per_param(precision: str, optimizer: str | None, transformer: bool) -> tuple[float, float, float, float]:
    """(weight, grad, optimizer, master) bytes per trainable parameter."""
    amp = precision in ("fp16_amp", "bf16_amp", "fp8")
    if precision == "fp32":
        w, g, state, master = 4.0, 4.0, 4.0, 0.0
    elif amp:
        w, g, state, master = (1.0 + 2.0 if precision == "fp8" else 2.0), (2.0 if transformer else 4.0), 4.0, 4.0
    else:   # pure bf16
        w, g, state, master = 2.0, 2.0, 2.0, 0.0
    if optimizer == "adamw_8bit":
        opt = 2.0
    else:
        opt = STATES.get(optimizer or "sgd", 0.0) * state
    return w, g, opt, master


def model_states(params: float, trainable: float, frozen_bytes_per_param: float | None, s: dict,
                 transformer: bool, layer_params: float) -> StateBytes:
    """Per-GPU bytes of model states. frozen_bytes_per_param: storage of frozen (LoRA base) weights."""
    w, g, opt, master = per_param(s["precision"], s.get("optimizer"), transformer)
    n, dist = max(1, int(s.get("num_gpus", 1))), s.get("distributed", "none")
    if frozen_bytes_per_param is not None:    # LoRA/QLoRA: frozen base + fp32 adapters (PEFT autocast_adapter_dtype)
        weights = params * frozen_bytes_per_param + trainable * 4.0
        w_t, g, opt, master = 4.0, 4.0, STATES.get(s.get("optimizer") or "adamw", 2.0) * 4.0, 0.0
    else:
        weights, w_t = params * w, w
    grads, optim, mast = trainable * g, trainable * opt, trainable * master
    if dist in SHARD_OPT and n > 1:
        optim, mast = optim / n, mast / n
    if dist in SHARD_GRAD and n > 1:
        grads = grads / n
    gathered = 0.0
    if dist in SHARD_WEIGHTS and n > 1:
        weights = weights / n
        gathered = 2.0 * layer_params * (frozen_bytes_per_param or w_t)
    if s.get("cpu_offload"):
        # FSDP CPUOffload(offload_params=True) (torchtune fsdp_cpu_offload) keeps the parameter and gradient shards in
        # CPU memory and runs the optimizer step there; DeepSpeed offload_optimizer moves optimizer state + fp32 master,
        # offload_param (ZeRO-3) the parameter shards. The gathered layers in flight stay on the GPU.
        optim, mast = 0.0, 0.0
        if dist in SHARD_WEIGHTS:
            weights, grads = 0.0, 0.0
    buckets = trainable * g if dist == "ddp" and n > 1 else 0.0
    if dist in ("zero1", "zero2") and n > 1 and frozen_bytes_per_param is None:
        buckets = min(trainable, DS_REDUCE_BUCKET) * g
        if master > 0 and not s.get("cpu_offload"):
            grads += trainable * 4.0 / n   # the fp32 copy of this rank's gradient partition at the step
    return StateBytes(weights, grads, optim, mast, buckets, gathered)


def torch_at_most(version: str, major: int, minor: int) -> bool:
    a, b = (int(x) for x in version.split("."))
    return (a, b) <= (major, minor)

"""KV-cache capacity of a serving engine that reserves a fraction of the card (vLLM `gpu_memory_utilization`).

vLLM (vllm/worker/gpu_worker.py determine_num_available_blocks / v1 kv_cache_utils) profiles one forward at the
largest batch, then gives the KV cache what is left of `gpu_memory_utilization` x total memory after the weights,
the peak activations and the non-torch allocations (CUDA context, NCCL, CUDA graphs):
    kv budget = utilization x GPU memory - weights - activations - CUDA context
That budget in tokens is budget / (KV bytes per token); in sequences at a context of seq_len it is budget / (KV bytes
of one seq_len sequence), which for sliding-window layers stops growing past the window.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_advisor.memory.core import CUDA_CONTEXT_GIB, GIB
from gpu_advisor.memory.transformer import kv_bytes_per_token_layer, kv_cache_bytes, kv_layers
from gpu_advisor.kb.models import TransformerSpec

DEFAULT_UTILIZATION = 0.9      # vLLM EngineArgs.gpu_memory_utilization default


@dataclass(frozen=True)
class KvCapacity:
    budget_gib: float            # per GPU, left for the KV cache
    tokens: int                  # KV-cache tokens the budget holds (all GPUs of one replica)
    sequences: int               # concurrent sequences of seq_len tokens
    bytes_per_token: float       # KV bytes per token of one sequence, all layers (per replica)


def kv_capacity(t: TransformerSpec, seq_len: int, gpu_memory_gib: float, weights_gib: float, activations_gib: float,
                utilization: float = DEFAULT_UTILIZATION, kv_bytes: float = 2.0, tensor_parallel: int = 1) -> KvCapacity:
    """KV capacity of one replica over `tensor_parallel` GPUs; weights / activations per GPU (as estimate_memory gives
    them with num_gpus = tensor_parallel)."""
    if not 0.0 < utilization <= 1.0:
        raise ValueError("gpu_memory_utilization must be in (0, 1]")
    budget = utilization * gpu_memory_gib - weights_gib - activations_gib - CUDA_CONTEXT_GIB
    budget_bytes = max(0.0, budget) * GIB * tensor_parallel
    per_token = kv_bytes_per_token_layer(t, kv_bytes) * kv_layers(t)
    per_seq = kv_cache_bytes(t, seq_len, kv_bytes, seq_len)
    return KvCapacity(round(budget, 3), int(budget_bytes // per_token) if per_token else 0,
                      int(budget_bytes // per_seq) if per_seq else 0, per_token)

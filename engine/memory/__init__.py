"""GPU-memory and host-RAM estimator (see docs/memory-model.md)."""

from __future__ import annotations

from gpu_advisor.memory.api import estimate_dict, estimate_jsonl
from gpu_advisor.memory.core import estimate_memory
from gpu_advisor.memory.host import estimate_host
from gpu_advisor.memory.types import HostEstimate, MemoryEstimate

__all__ = ["estimate_memory", "estimate_host", "estimate_dict", "estimate_jsonl", "MemoryEstimate", "HostEstimate"]

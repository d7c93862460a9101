"""GPU-memory and host-RAM estimator (see docs/memory-model.md).

The names below are imported on first use, not with the package (gpu_advisor.util.lazy says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_advisor.util.lazy import lazy_exports

_EXPORTS = {
    "estimate_dict": "gpu_advisor.memory.api", "estimate_jsonl": "gpu_advisor.memory.api",
    "estimate_memory": "gpu_advisor.memory.core", "estimate_host": "gpu_advisor.memory.host",
    "HostEstimate": "gpu_advisor.memory.types", "MemoryEstimate": "gpu_advisor.memory.types",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # pragma: no cover
    from gpu_advisor.memory.api import estimate_dict, estimate_jsonl
    from gpu_advisor.memory.core import estimate_memory
    from gpu_advisor.memory.host import estimate_host
    from gpu_advisor.memory.types import HostEstimate, MemoryEstimate

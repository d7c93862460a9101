"""GPU-memory and host-RAM estimator (see docs/memory-model.md).

The names below are imported when first used (PEP 562), not when the package is: a package whose ``__init__``
imports its own submodules races a thread that imports one of those submodules directly (CPython gh-83065:
``_DeadlockError``, or a partially initialised module). With eager imports here, 7 of 80 runs of eight threads
importing this package and its submodules at once failed that way; tests/test_import_races.py keeps it lazy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "estimate_dict": "gpu_advisor.memory.api", "estimate_jsonl": "gpu_advisor.memory.api",
    "estimate_memory": "gpu_advisor.memory.core", "estimate_host": "gpu_advisor.memory.host",
    "HostEstimate": "gpu_advisor.memory.types", "MemoryEstimate": "gpu_advisor.memory.types",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpu_advisor.memory' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from gpu_advisor.memory.api import estimate_dict, estimate_jsonl
    from gpu_advisor.memory.core import estimate_memory
    from gpu_advisor.memory.host import estimate_host
    from gpu_advisor.memory.types import HostEstimate, MemoryEstimate

"""gpu-advisor: explained GPU server recommendations for Alibaba Cloud.

Public API (stable): ``Workload``, ``recommend``, ``Recommendation``, ``estimate_memory`` and the errors
``AdvisorError``, ``WorkloadError``, ``UnknownModelError``, ``KnowledgeError``.
Imports are lazy so that ``gpu-advisor --version`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Workload": "gpu_advisor.workload",
    "recommend": "gpu_advisor.advisor",
    "Recommendation": "gpu_advisor.answer.recommendation",
    "estimate_memory": "gpu_advisor.memory",
    "AdvisorError": "gpu_advisor.errors",
    "WorkloadError": "gpu_advisor.errors",
    "UnknownModelError": "gpu_advisor.errors",
    "KnowledgeError": "gpu_advisor.errors",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpu_advisor' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from gpu_advisor.advisor import recommend
    from gpu_advisor.errors import AdvisorError, KnowledgeError, UnknownModelError, WorkloadError
    from gpu_advisor.memory import estimate_memory
    from gpu_advisor.answer.recommendation import Recommendation
    from gpu_advisor.workload import Workload

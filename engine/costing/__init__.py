"""Time to train and total cost: real instance options ranked by cost and time under each purchase model.

The names below are imported when first used (PEP 562), not when the package is: a package whose ``__init__``
imports its own submodules races a thread that imports one of those submodules directly (CPython gh-83065:
``_DeadlockError``, or a partially initialised module). With eager imports here, 12 of 80 runs of eight threads
importing this package and its submodules at once failed that way; tests/test_import_races.py keeps it lazy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CostOption": "gpu_advisor.costing.models", "CostReport": "gpu_advisor.costing.models",
    "PurchaseLine": "gpu_advisor.costing.models", "Range": "gpu_advisor.costing.models",
    "StorageLine": "gpu_advisor.costing.models", "TimeEstimate": "gpu_advisor.costing.models",
    "best_per_gpu": "gpu_advisor.costing.report", "build_cost_report": "gpu_advisor.costing.report",
    "job_hours": "gpu_advisor.costing.report", "estimate_time": "gpu_advisor.costing.timing",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpu_advisor.costing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from gpu_advisor.costing.models import CostOption, CostReport, PurchaseLine, Range, StorageLine, TimeEstimate
    from gpu_advisor.costing.report import best_per_gpu, build_cost_report, job_hours
    from gpu_advisor.costing.timing import estimate_time

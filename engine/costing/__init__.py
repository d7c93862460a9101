"""Time to train and total cost: real instance options ranked by cost and time under each purchase model.

The names below are imported on first use, not with the package (gpu_advisor.util.lazy says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_advisor.util.lazy import lazy_exports

_EXPORTS = {
    "CostOption": "gpu_advisor.costing.models", "CostReport": "gpu_advisor.costing.models",
    "PurchaseLine": "gpu_advisor.costing.models", "Range": "gpu_advisor.costing.models",
    "StorageLine": "gpu_advisor.costing.models", "TimeEstimate": "gpu_advisor.costing.models",
    "best_per_gpu": "gpu_advisor.costing.report", "build_cost_report": "gpu_advisor.costing.report",
    "job_hours": "gpu_advisor.costing.report", "estimate_time": "gpu_advisor.costing.timing",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # pragma: no cover
    from gpu_advisor.costing.models import CostOption, CostReport, PurchaseLine, Range, StorageLine, TimeEstimate
    from gpu_advisor.costing.report import best_per_gpu, build_cost_report, job_hours
    from gpu_advisor.costing.timing import estimate_time

"""Time to train and total cost: real instance options ranked by cost and time under each purchase model."""

from gpu_advisor.costing.models import CostOption, CostReport, PurchaseLine, Range, StorageLine, TimeEstimate
from gpu_advisor.costing.report import best_per_gpu, build_cost_report, job_hours
from gpu_advisor.costing.timing import estimate_time

__all__ = ["CostOption", "CostReport", "PurchaseLine", "Range", "StorageLine", "TimeEstimate", "best_per_gpu",
           "build_cost_report", "estimate_time", "job_hours"]

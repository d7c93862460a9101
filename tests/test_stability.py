"""Memory stability: resident memory grows by less than 10 MB over many rule-engine evaluations.

The suite runs GPU_ADVISOR_STABILITY_EVALS evaluations (default 5,000, ~7 s); `make bench` runs 50,000
(~60 s, too long for the suite) with the same test. RSS is read from /proc/self/status after a warm-up.
A smaller recommend()-level check covers the planner, the assembly and rendering as well.
"""

from __future__ import annotations

import gc
import os

from test_concurrency import MIXED, mixed_facts, rss_mb

from gpu_advisor import recommend
from gpu_advisor.advisor import get_knowledge

EVALS = int(os.environ.get("GPU_ADVISOR_STABILITY_EVALS", "5000"))
LIMIT_MB = 10.0


def test_rss_stable_over_engine_evaluations() -> None:
    engine = get_knowledge().engine
    records = mixed_facts()
    for i in range(500):
        engine.evaluate(records[i % len(records)])
    gc.collect()
    before = rss_mb()
    for i in range(EVALS):
        engine.evaluate(records[i % len(records)])
    gc.collect()
    growth = rss_mb() - before
    print(f"\nRSS growth over {EVALS} engine evaluations: {growth:.2f} MB (before {before:.1f} MB)")
    assert growth < LIMIT_MB, f"RSS grew {growth:.1f} MB over {EVALS} evaluations"


def test_rss_stable_over_recommendations() -> None:
    for w in MIXED:  # warm-up: caches filled, templates compiled
        recommend(w, "en").render("zh")
    gc.collect()
    before = rss_mb()
    for i in range(max(100, EVALS // 25)):
        recommend(MIXED[i % len(MIXED)], "en" if i % 2 else "zh").render()
    gc.collect()
    growth = rss_mb() - before
    assert growth < LIMIT_MB, f"RSS grew {growth:.1f} MB over recommendations"

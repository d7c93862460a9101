from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def advise():
    """recommend() with a per-session cache: the same workload is only evaluated once per test session."""
    from gpu_advisor import recommend

    cache: dict[str, object] = {}

    def run(workload: dict, lang: str = "en"):
        import json

        key = json.dumps(workload, sort_keys=True) + lang
        if key not in cache:
            cache[key] = recommend(workload, lang)
        return cache[key]

    return run

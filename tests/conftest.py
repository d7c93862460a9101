from __future__ import annotations

import os

import pytest

# tests never touch the network: a Hugging Face id the knowledge base does not ship is looked up in the local cache
# only (tests/test_llm_configs.py serves a fake Hub on 127.0.0.1 and lifts this for its own tests)
os.environ["HF_HUB_OFFLINE"] = "1"


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

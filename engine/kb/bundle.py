"""The loaded knowledge base as one bundle: catalog, rules and the rule engine that evaluates them, cached per rules
folder, price override file and engine (GPU_ADVISOR_ENGINE: durable, the default, or python)."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gpu_advisor.kb.catalog import Catalog
from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.rules.engine import DurableEngine, PythonEngine, RuleEngine
from gpu_advisor.rules.loader import RuleBase, load_rules


@dataclass(frozen=True)
class Knowledge:
    catalog: Catalog
    rules: RuleBase
    engine: RuleEngine
    # answers derived from this knowledge alone (scenario tiers by task, region, language), and their lock
    scenarios: dict[tuple[str, str | None, str], tuple[Any, ...]] = field(default_factory=dict, compare=False, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)


_lock = threading.Lock()


@lru_cache(maxsize=4)
def _knowledge(rules_dir: str | None, override: str | None, engine: str) -> Knowledge:
    catalog = load_catalog(override)
    rules = load_rules(rules_dir)
    active = list(rules.active)
    runner: RuleEngine = PythonEngine(active) if engine == "python" else DurableEngine(active)
    return Knowledge(catalog, rules, runner)


def get_knowledge(*, rules_dir: str | None = None, override: str | None = None,
                  engine: str | None = None) -> Knowledge:
    """The loaded knowledge base (cached per rules folder, price override file and engine)."""
    override = override or os.environ.get("GPU_ADVISOR_CATALOG_OVERRIDE") or None
    engine = engine or os.environ.get("GPU_ADVISOR_ENGINE", "durable")
    with _lock:
        return _knowledge(rules_dir, override, engine)

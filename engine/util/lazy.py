"""Lazy package exports (PEP 562) for the engine's subpackages.

A package whose ``__init__`` imports its own submodules races a thread that imports one of those submodules directly
(CPython gh-83065 on 3.11 / 3.12: ``_DeadlockError`` or a partially initialised module; tests/test_import_races.py).
So ``gpu_advisor.costing`` and ``gpu_advisor.memory`` name their exports here and import each on first use. The top
package ``gpu_advisor`` keeps its own ``__getattr__``: importing this module from its ``__init__`` would be the very
pattern it avoids.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """The package's ``__getattr__``: ``exports`` maps each name to the module that defines it."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

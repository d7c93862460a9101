"""Tables other modules derive from a frozen knowledge object (catalog, model profiles, rule base), built once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class DerivedCache:
    """Mixin: ``derived(key, build)`` returns ``build()``, computed once per object and key.

    The class provides the storage, ``self._derived: dict`` (a pydantic PrivateAttr or a dataclass field), so the
    cache lives and dies with the knowledge object it is derived from: no module-level registry keyed by id()."""

    def derived(self, key: Any, build: Callable[[], Any]) -> Any:
        cache: dict[Any, Any] = self._derived  # type: ignore[attr-defined]
        value = cache.get(key)
        if value is None:
            value = cache[key] = build()
        return value

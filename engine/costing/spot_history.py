"""Spot price history written by `gpu-advisor catalog refresh` into the override file's `spot_price_history` key.

Per type and region: the lowest and highest SpotPrice / OriginPrice ratio seen over the queried period
(DescribeSpotPriceHistory), with source and date. Override files written before this key existed kept it in a
sidecar (<override>.spot.yaml); that file is still read when the override itself has no such key.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpu_advisor.util import yamlio

class SpotObservation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: str
    region: str
    min_ratio: float = Field(gt=0, le=1.5)
    max_ratio: float = Field(gt=0, le=1.5)
    samples: int = Field(ge=1)
    zones: list[str]
    period: str
    currency: str | None = None
    source: str
    as_of: str


class SpotHistory(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    spot_price_history: list[SpotObservation]

    def find(self, type_name: str, region: str) -> SpotObservation | None:
        return next((o for o in self.spot_price_history if o.type == type_name and o.region == region), None)


def sidecar_path(override: str | Path) -> Path:
    path = Path(override)
    return path.with_name(f"{path.stem}.spot.yaml")


@lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> SpotHistory | None:
    from gpu_advisor.util import userdata

    try:  # the user's file: bounded, UTF-8, strict YAML (an alias bomb or bad bytes is "no history", not a crash)
        text = userdata.read_text(path, "spot history", userdata.MAX_OVERRIDE_BYTES)
        return SpotHistory.model_validate(userdata.load(text, path, max_bytes=userdata.MAX_OVERRIDE_BYTES,
                                                        max_nodes=userdata.MAX_OVERRIDE_NODES))
    except (userdata.InputError, ValidationError):
        return None


@lru_cache(maxsize=8)
def _load_key(path: str, mtime: float) -> SpotHistory | None:
    try:
        data = yamlio.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "spot_price_history" not in data:
            return None
        return SpotHistory.model_validate({"spot_price_history": data["spot_price_history"] or []})
    except (OSError, yamlio.YAMLError, ValidationError):
        return None


def load_spot_history(override: str | Path | None) -> SpotHistory | None:
    """The override file's spot_price_history (or, for older files, its sidecar); None when there is none."""
    if not override:
        return None
    main = Path(override)
    if main.is_file():
        found = _load_key(str(main), main.stat().st_mtime)
        if found is not None:
            return found
    path = sidecar_path(override)
    if not path.is_file():
        return None
    return _load(str(path), path.stat().st_mtime)

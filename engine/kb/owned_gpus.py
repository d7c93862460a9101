"""GPUs people own or name that Alibaba's catalog does not sell by that name (knowledge/owned_gpus.yaml): the card's
memory and BF16 support, with the source of each figure. The verdict on the named card reads them (plan/owned.py), and
its time and serving speed (plan/owned_speed.py); they are never an Alibaba offering."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from gpu_advisor.errors import KnowledgeError
from gpu_advisor.util import yamlio

OWNED_FILE = "owned_gpus.yaml"
_FLAGS = re.IGNORECASE | re.ASCII


@dataclass(frozen=True)
class OwnedGPU:
    """One card: what the planner's fit test reads (memory_gb, supports_bf16) and what the answer cites."""

    id: str
    display_name: str
    names: tuple[str, ...]
    memory_gb: float
    supports_bf16: bool
    source: str
    as_of: str
    memory_bandwidth_gb_s: float | None = None
    dense_bf16_tflops: float | None = None
    architecture: str | None = None
    nvlink_gb_s: float | None = None          # NVLink total of the board; None: the cards talk over PCIe
    throughput_source: str | None = None      # where bandwidth and TFLOPS come from, when not in ``source``

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile("|".join(f"(?:{n})" for n in self.names), _FLAGS)


def _entry(i: int, row: object) -> OwnedGPU:
    where = f"{OWNED_FILE}: gpus[{i}]"
    if not isinstance(row, dict):
        raise KnowledgeError(f"{where}: not a mapping", f"{where}：不是映射")
    missing = [k for k in ("id", "display_name", "names", "memory_gb", "supports_bf16", "source", "as_of")
               if row.get(k) in (None, "", [])]
    if missing:
        raise KnowledgeError(f"{where}: needs {', '.join(missing)}", f"{where}：缺少 {', '.join(missing)}")
    mem = row["memory_gb"]
    if isinstance(mem, bool) or not isinstance(mem, int | float) or not 1 <= mem <= 1024:
        raise KnowledgeError(f"{where}: memory_gb must be a number of GB in 1-1024, not {mem!r}",
                             f"{where}：memory_gb 必须是 1-1024 之间的 GB 数，而不是 {mem!r}")
    names = tuple(str(n) for n in row["names"])
    for n in names:
        try:
            re.compile(n, _FLAGS)
        except re.error as exc:
            raise KnowledgeError(f"{where}: bad name pattern {n!r}: {exc}", f"{where}：名称正则无效 {n!r}：{exc}") from exc
    return OwnedGPU(id=str(row["id"]), display_name=str(row["display_name"]), names=names, memory_gb=float(mem),
                    supports_bf16=bool(row["supports_bf16"]), source=str(row["source"]), as_of=str(row["as_of"]),
                    memory_bandwidth_gb_s=row.get("memory_bandwidth_gb_s"),
                    dense_bf16_tflops=row.get("dense_bf16_tflops"), nvlink_gb_s=row.get("nvlink_gb_s"),
                    architecture=row.get("architecture"),
                    throughput_source=row.get("throughput_source"))


@lru_cache(maxsize=1)
def owned_gpus() -> tuple[OwnedGPU, ...]:
    raw = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath(OWNED_FILE).read_text(encoding="utf-8"))
    return tuple(_entry(i, row) for i, row in enumerate((raw or {}).get("gpus") or []))


def owned_gpu_names() -> list[str]:
    """Every name pattern of the file, for the parser's GPU vocabulary (lexicon._gpu_pattern)."""
    return [n for g in owned_gpus() for n in g.names]


def find_owned_gpu(text: str) -> OwnedGPU | None:
    """The card a GPU name the catalog does not resolve stands for ("RTX 4090", "H20", "4090 24G"), or None."""
    for g in owned_gpus():
        if g.pattern.search(text):
            return g
    return None

"""Resolve a GPU the user asked for ("A10", "V100 32GB", "L20") to catalog GPU ids, or explain why not."""

from __future__ import annotations

import difflib
import re

from gpu_advisor.kb.catalog import Catalog
from gpu_advisor.errors import WorkloadError

_NOISE = re.compile(r"nvidia|tesla|geforce|sxm2?|pcie|[\s_-]+")
_MEMORY = re.compile(r"(\d{2,3})\s*g(?:b|ib)?\b")


def _norm(text: str) -> str:
    return _NOISE.sub("", text.lower())


def _family_or_type_gpu(catalog: Catalog, text: str) -> frozenset[str] | None:
    """An instance family or type written where a GPU is asked for ("gn7i", "ecs.gn7i-c8g1.2xlarge", "ebmgn8v"; an
    assistant passing on a type from an earlier answer): the GPU it carries, from the catalog."""
    name = text.strip().lower()
    itype = catalog.instance_types.get(name if name.startswith("ecs.") else f"ecs.{name}")
    family = catalog.families.get(name.removeprefix("ecs."))
    gpu_id = itype.gpu_id if itype is not None else (family.gpu_id if family is not None else None)
    return frozenset({gpu_id}) if gpu_id and gpu_id in catalog.gpus else None


def resolve_gpu_preference(catalog: Catalog, text: str) -> frozenset[str]:
    """Catalog GPU ids that match the user's words; WorkloadError (field gpu_preference) when none do."""
    memory = _MEMORY.search(text.lower())
    wanted = _norm(_MEMORY.sub("", text.lower())) if memory else _norm(text)
    ids = set()
    for gpu in catalog.gpus.values():
        names = {_norm(gpu.id), gpu.id.split("-")[0].lower(), _norm(gpu.display_name)}
        if gpu.named_by_alibaba:  # the model without its memory size: "NVIDIA A100 80 GB" -> "a100"
            names.add(_norm(re.sub(r"\(.*?\)", "", _MEMORY.sub("", gpu.display_name.lower()))))
        if wanted and wanted in names:
            if memory is None or (gpu.memory_gb and int(gpu.memory_gb) == int(memory.group(1))):
                ids.add(gpu.id)
    if not ids and memory is not None and not wanted:
        ids = {g.id for g in catalog.gpus.values() if g.memory_gb and int(g.memory_gb) == int(memory.group(1))}
    if ids:
        return frozenset(ids)
    if (carried := _family_or_type_gpu(catalog, text)) is not None:
        return carried
    # the names people write ("A100 80 GB", "RTX 5880 48 GB"), never the catalog's internal ids
    known = sorted({g.display_name.removeprefix("NVIDIA ").split(",")[0].replace(" (SXM)", "")
                    for g in catalog.gpus.values() if g.named_by_alibaba})
    unnamed = sorted({f"{g.memory_gb:g}GB" for g in catalog.gpus.values() if not g.named_by_alibaba and g.memory_gb},
                     key=lambda m: float(m[:-2]))
    close = difflib.get_close_matches(text.upper(), [k.upper() for k in known], n=5, cutoff=0.3)
    close = [k for k in known if k.upper() in close]
    raise WorkloadError(
        f"gpu_preference: '{text[:40]}' is not a GPU in the catalog; named GPUs: {', '.join(known)}; GPUs Alibaba "
        f"does not name can be asked for by memory: {', '.join(unnamed)}",
        f"gpu_preference：目录中没有 GPU“{text[:40]}”；已命名的 GPU：{'、'.join(known)}；阿里云未公布型号的 GPU 可按显存"
        f"指定：{'、'.join(unnamed)}",
        field="gpu_preference", suggestions=close or known[:5])

"""Instance-family names in a question ("gn7i和gn8is哪个更适合跑Llama-3-8B推理？", "is ecs.gn7i-c8g1.2xlarge enough"):
the catalog's family and type names (knowledge/catalog, one vocabulary), each read as the GPU that family carries, so
that "gn7i or gn8is" compares the job on an A10 and on an L20 (gpu_advisor.ask.compare), said back with the family."""

from __future__ import annotations

import re
from typing import Any, Callable

from gpu_advisor.ask.parsed import Scanner


def _catalog() -> Any:
    from gpu_advisor.kb.catalog_loader import load_catalog

    return load_catalog()    # cached per override path by the loader


_CACHE: dict[Any, Any] = {}
_CACHE_OF: list[object] = [None]   # the catalog the cached answers are about (an override reloads it)


def _cached(key: Any, make: Any) -> Any:
    catalog = _catalog()
    if _CACHE_OF[0] is not catalog:
        _CACHE.clear()
        _CACHE_OF[0] = catalog
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def family_pattern() -> re.Pattern[str]:
    return _cached("pattern", _family_pattern)


def _family_pattern() -> re.Pattern[str]:
    """A family name from the catalog, longest first, optionally with the ecs. prefix and a type's size suffix
    ("ecs.gn7i-c8g1.2xlarge"); never inside another word."""
    names = sorted(_catalog().families, key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in names)
    # the letters every name starts with, first: a position that cannot start a family fails at once (linear)
    heads = "|".join(sorted({m.group(0) for n in names if (m := re.match(r"[a-z]+", n))}, key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?=(?:ecs\.)?(?:{heads}))(?:ecs\.)?(?P<family>{alternatives})"
                      r"(?P<size>(?:-c\d+g\d+|-\d+x)?\.\d*x?large|-c\d+g\d+)?(?![\w-])", re.IGNORECASE | re.ASCII)


def family_gpu(family: str) -> tuple[str, str] | None:
    return _cached(("gpu", family.lower()), lambda: _family_gpu(family))


def _family_gpu(family: str) -> tuple[str, str] | None:
    """(the gpu_preference that names the family's GPU, how to say it) or None when the family has no GPU the
    planner can be asked for ("gn8is" -> ("L20", "NVIDIA L20 48 GB"); an unnamed GPU by its memory: "96GB")."""
    cat = _catalog()
    fam = cat.families.get(family.lower())
    gpu = cat.gpus.get(fam.gpu_id) if fam is not None and fam.gpu_id else None
    if gpu is None:
        return None
    from gpu_advisor.errors import WorkloadError
    from gpu_advisor.plan.preference import resolve_gpu_preference

    # the name people write for it ("NVIDIA A100 80 GB" -> "A100", or "A100 80GB" when "A100" is also the 40 GB card)
    written = re.sub(r"\(.*?\)|,.*$", "", gpu.display_name.removeprefix("NVIDIA ")).strip()
    base = re.sub(r"\s*\d+\s*GB$", "", written).strip()
    tries = [base, f"{base} {gpu.memory_gb:g}GB"] if gpu.named_by_alibaba and gpu.memory_gb else []
    tries += [f"{gpu.memory_gb:g}GB"] if gpu.memory_gb else []
    for pref in tries:
        try:
            if resolve_gpu_preference(cat, pref) == frozenset({gpu.id}):
                return pref, gpu.display_name
        except WorkloadError:
            continue
    return None


def mentioned_gpu(words: str) -> str | None:
    """The GPU preference a family / type mention stands for ("gn8is" -> "L20"), or None."""
    m = family_pattern().fullmatch(words.strip())
    hit = family_gpu(m.group("family")) if m else None
    return hit[0] if hit else None


def family_named(s: Scanner, m: re.Match[str], prefer: Callable[[Scanner, re.Match[str], str, bool], None]) -> None:
    """A family or type named: its GPU becomes the preference (the first) or a GPU compared with it (the others,
    parser._compared_gpus), with a hint that says which GPU the family carries (numeric.EXTRACTORS, which passes its
    GPU-preference handler as ``prefer``)."""
    family = m.group("family").lower()
    hit = family_gpu(family)
    fam = _catalog().families[family]
    if hit is None:   # a GPU Alibaba does not name, of a memory size other GPUs share: said back, not a preference
        gpu = _catalog().gpus.get(fam.gpu_id) if fam.gpu_id else None
        what = gpu.display_name if gpu else "no GPU in the catalog"
        s.claim(m)
        s.note_unused(m.group(0), f"Alibaba Cloud's {family} family ({what}): its GPU cannot be asked for apart from other "
                      "GPUs of the same memory, so the plan chooses among all the catalog's GPUs",
                      f"阿里云 {family} 规格族（{what}）：其 GPU 无法与同显存的其他 GPU 区分指定，方案在目录的全部 GPU 中选择")
        return
    pref, display = hit
    vgpu_en = " (a vGPU family: gpu-advisor plans whole GPUs)" if fam.vgpu else ""
    vgpu_zh = "（vGPU 规格族：gpu-advisor 按整卡规划）" if fam.vgpu else ""
    said = m.group(0)
    itype = _catalog().instance_types.get(f"ecs.{family}{m.group('size').lower()}") if m.group("size") else None
    count = itype.gpu_count if itype is not None and not itype.gpu_fraction else None
    if count and float(count).is_integer() and "num_gpus" not in s.fields:
        # a whole instance type named ("ebmgn7ex.32xlarge"): its GPUs are the ones asked about
        s.set("num_gpus", int(count), m, claim=False)
        s.hint("instance_family", m, f"'{said}' is an instance type of Alibaba Cloud's {family} family: {int(count)} x "
               f"{display}{vgpu_en}.", f"“{said}”是阿里云 {family} 规格族的实例规格：{int(count)} 张 {display}{vgpu_zh}。",
               claim=False)
    else:
        s.hint("instance_family", m, f"'{said}' is Alibaba Cloud's {family} family, with {display}: read as that "
               f"GPU{vgpu_en}.", f"“{said}”是阿里云 {family} 规格族，配 {display}：按该 GPU 理解{vgpu_zh}。", claim=False)
    if s.fields.get("gpu_preference") == pref:
        first = next((h.matched for h in s.hints if h.kind == "instance_family" and h.matched != said), pref)
        s.claim(m)
        s.note_unused(said, f"the same GPU as {first} ({display}): the families differ in vCPU, RAM and network, which "
                      "the plan chooses for the job", f"与 {first} 的 GPU 相同（{display}）：两者的差别在 vCPU、内存与网络，"
                      "由方案按作业选择")
        return
    prefer(s, m, pref, True)


__all__ = ["family_named", "family_gpu", "family_pattern", "mentioned_gpu"]

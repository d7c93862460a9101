"""Assumption notes, storage lines and sources of a cost report (bilingual)."""

from __future__ import annotations

from datetime import date, datetime, timezone
import re
from functools import lru_cache
from typing import Any

from gpu_advisor.costing import basis
from gpu_advisor.costing.models import CostOption, StorageLine
from gpu_advisor.costing.timing import scaling_for, utilisation_for
from gpu_advisor.util.i18n import Note, Text, note


# The notes below depend on a few constants only (family, utilisation band, scaling band, storage kind), not on the
# option: each is built once and shared (the models are frozen), instead of once per option of every answer.

def utilisation_note(candidate: Any) -> tuple[Note, tuple[str, ...]]:
    family = candidate.estimate.profile.family
    return _utilisation_note(family, utilisation_for(family, candidate.variant.workload, candidate.gpu))


@lru_cache(maxsize=64)
def _utilisation_note(family: str, util: basis.Utilisation) -> tuple[Note, tuple[str, ...]]:
    text_en = f"Utilisation (executed FLOPs incl. recompute / dense peak) for {family}: {util.low:.0%}-{util.high:.0%} of dense peak; {util.why.en}."
    text_zh = f"{family} 的算力利用率（实际执行 FLOPs（含重计算）÷ 稠密峰值）：稠密峰值的 {util.low:.0%}–{util.high:.0%}；{util.why.zh}。"
    code = f"time_mfu_{family}_fp32" if util is basis.UTILISATION_FP32_CONV else f"time_mfu_{family}"
    return note(code, text_en, text_zh, "utilisation", [util.low, util.high]), util.sources


def scaling_note(candidate: Any) -> tuple[Note, tuple[str, ...]]:
    return _scaling_note(scaling_for(candidate.instance, candidate.nodes, candidate.total_gpus, candidate))


@lru_cache(maxsize=16)
def _scaling_note(scale: basis.Scaling) -> tuple[Note, tuple[str, ...]]:
    code = f"time_scaling_{scale.low:g}_{scale.high:g}"
    return note(code, f"Scaling: {scale.why.en}.", f"扩展效率：{scale.why.zh}。", "scaling",
                [scale.low, scale.high]), scale.sources


def _price_date(as_of: str | None) -> date | None:
    """YYYY, YYYY-MM or YYYY-MM-DD as the first day it can mean; None when absent or unreadable."""
    parts = (as_of or "").split("-")
    try:
        return date(int(parts[0]), int(parts[1]) if len(parts) > 1 else 1, int(parts[2]) if len(parts) > 2 else 1)
    except (ValueError, IndexError):
        return None


def stale_price_dates(options: list[CostOption], today: date | None = None) -> list[str]:
    """The price dates among the options that are more than 12 months before today."""
    today = today or datetime.now(timezone.utc).date()
    out = set()
    for o in options:
        when = _price_date(o.price_as_of) if o.price_per_hour is not None else None
        if when is not None and (today - when).days > 365:
            out.add(str(o.price_as_of))
    return sorted(out)


def price_note(options: list[CostOption], today: date | None = None) -> Note | None:
    priced = [o for o in options if o.price_per_hour is not None]
    if not priced:
        return None
    dated = sorted({f"{o.currency} {o.region} as of {o.price_as_of} ({o.price_origin})" for o in priced})
    dated_zh = sorted({f"{o.currency}，{o.region}，截至 {o.price_as_of}（{o.price_origin}）" for o in priced})
    stale = stale_price_dates(priced, today)
    old_en = (f" Prices dated {', '.join(stale)} are more than 12 months old; for current ones run "
              "`gpu-advisor catalog refresh --public` (USD, international regions) or `catalog refresh` (API)."
              if stale else "")
    old_zh = (f"截至 {'、'.join(stale)} 的价格已超过 12 个月；获取当前价格请运行 `gpu-advisor catalog refresh --public`"
              "（美元，国际地域）或 `catalog refresh`（API）。" if stale else "")
    return note("cost_prices_dated", "Prices are pay-as-you-go list prices per instance-hour, compute only (no disks, "
                f"bandwidth or images): {'; '.join(dated)}. Check the console before buying.{old_en}",
                f"价格为按量付费目录价（每实例每小时，仅计算资源，不含云盘、带宽、镜像）：{'；'.join(dated_zh)}。"
                f"购买前请在控制台核对。{old_zh}", "price", stale or None)


def base_notes() -> list[Note]:
    return list(_base_notes())


@lru_cache(maxsize=1)
def _base_notes() -> tuple[Note, ...]:
    return (
        note("time_compute", "Time = training FLOPs per sample (memory estimator) x samples x epochs (x 4/3 with "
             "activation checkpointing) / (dense peak x utilisation x GPUs x scaling efficiency); the data pipeline "
             "is assumed to keep the GPUs busy.",
             "时间 = 每样本训练 FLOPs（显存估算器）× 样本数 × 轮数（开启激活检查点时 × 4/3）÷（稠密峰值 × 利用率 × "
             "GPU 数 × 扩展效率）；假设数据流水线能让 GPU 保持忙碌。", "time", None),
        note("cost_spot_range", "Spot totals are a range: Alibaba publishes 'up to 90 % off' / 'as low as 10 % of "
             "pay-as-you-go' and no minimum discount.",
             "抢占式实例总价为区间：阿里云公布“最高省 90 %”/“最低为按量价格的 10 %”，未公布最低折扣。", "spot", None),
        note("cost_savings_assumed", f"Savings-plan figures use an ASSUMED discount of "
             f"{basis.SAVINGS_DISCOUNT_LOW:.0%}-{basis.SAVINGS_DISCOUNT_HIGH:.0%}: 76 % is Alibaba's published upper "
             "bound; GPU-family rates are not in the catalog. Break-even month = 12 x (1 - discount) for a 1-year "
             "commitment used 24x7.",
             f"节省计划按假设折扣 {basis.SAVINGS_DISCOUNT_LOW:.0%}–{basis.SAVINGS_DISCOUNT_HIGH:.0%} 计算：76 % 是阿里云公布的"
             "上限；目录中没有 GPU 规格族的费率。回本月数 = 12 × (1 − 折扣)（1 年期承诺、24×7 使用）。", "savings_plan", None),
    )


_CPFS_FORMULA = re.compile(r"min\{\s*([0-9.]+)\s*x\s*GiB,\s*([0-9,]+)\s*\}\s*MB/s")
LARGE_DATASET_GB = 2000  # the storage rules' boundary (STOR-CPFS-LARGE): beyond it, one cloud disk is not the place


def _cpfs_classes(catalog: Any) -> list[tuple[str, float, float]]:
    """(class, MB/s per GiB, cap MB/s) of CPFS general-purpose, read from the catalog's throughput formulas."""
    entry = catalog.storage.get("cpfs_general_purpose")
    out = []
    for cls in (entry.details or {}).get("classes", []) if entry else []:
        m = _CPFS_FORMULA.search(str(cls.get("throughput", "")))
        if m:
            out.append((str(cls.get("class", "")), float(m.group(1)), float(m.group(2).replace(",", ""))))
    return out


def throughput_line(job: Any, catalog: Any, hours: float | None, gpus: int) -> StorageLine | None:
    """The read throughput the plan needs (samples x epochs x bytes per sample / wall-clock time) and what CPFS of the
    dataset's size delivers (the catalog's per-class formulas); None without a size, a time or a per-sample size."""
    from gpu_advisor.plan.defaults import _bytes_per_sample

    w = job.workload
    per = _bytes_per_sample(w)
    if not hours or not w.num_samples or per is None:
        return None
    epochs = float(w.epochs or 1.0)
    need = w.num_samples * epochs * per[0] / (hours * 3600) / 1e6  # MB/s
    en = (f"the plan reads about {need:,.0f} MB/s on average ({w.num_samples:,} samples x {epochs:g} epoch(s) at "
          f"{per[0] / 1e3:,.0f} KB each in about {hours:,.0f} h on {gpus} GPU(s))")
    zh = (f"方案平均读取约 {need:,.0f} MB/s（{w.num_samples:,} 个样本 × {epochs:g} 轮，每个约 {per[0] / 1e3:,.0f} KB，"
          f"{gpus} 张卡约 {hours:,.0f} 小时）")
    size = float(w.dataset_size_gb) if w.dataset_size_gb is not None else None
    classes = _cpfs_classes(catalog)
    if size is not None and classes:
        gib = size * 1e9 / 2**30
        parts_en, parts_zh = [], []
        for name, per_gib, cap in classes:
            got = min(per_gib * gib, cap)
            verdict_en, verdict_zh = ("enough", "够用") if got >= need else ("not enough", "不够")
            parts_en.append(f"{name}: min({per_gib:g} x {gib:,.0f} GiB, {cap:,.0f}) = {got:,.0f} MB/s, {verdict_en}")
            parts_zh.append(f"{name}：min({per_gib:g} × {gib:,.0f} GiB, {cap:,.0f}) = {got:,.0f} MB/s，{verdict_zh}")
        en += "; CPFS general-purpose at the dataset's size gives " + "; ".join(parts_en)
        zh += "；按数据集容量，CPFS 通用型可提供 " + "；".join(parts_zh)
    entry = catalog.storage.get("cpfs_general_purpose")
    return StorageLine(item=_THROUGHPUT, size_gib=size, note=Text(en=en + "; CPFS capacity prices are not in the "
                       "catalog: no storage price is given", zh=zh + "；目录中没有 CPFS 容量价格，不给出存储费用"),
                       source=entry.source if entry else None)


def storage_lines(job: Any, catalog: Any, nodes: int, hours: float | None = None, gpus: int = 1) -> list[StorageLine]:
    w = job.workload
    essd = catalog.storage.get("essd")
    size = float(w.dataset_size_gb) if w.dataset_size_gb is not None else None
    lines = [StorageLine(item=_ESSD, size_gib=size, note=_ESSD_NO_PRICE if size is not None else _ESSD_NO_SIZE,
                         source=essd.source if essd else None)]
    if nodes > 1:
        cpfs = catalog.storage.get("cpfs_general_purpose")
        lines.append(StorageLine(item=_SHARED_FS, size_gib=size, note=_SHARED_FS_NO_PRICE,
                                 source=cpfs.source if cpfs else None))
    if nodes > 1 or (size is not None and size > LARGE_DATASET_GB):
        line = throughput_line(job, catalog, hours, gpus)
        if line is not None:
            lines.append(line)
    return lines


_THROUGHPUT = Text(en="read throughput the GPUs need vs what the shared file system delivers",
                   zh="GPU 所需读取吞吐与共享文件系统可提供的吞吐")


_ESSD = Text(en="ESSD cloud disk for the dataset and checkpoints (PL1 or AutoPL)",
             zh="存放数据集与检查点的 ESSD 云盘（PL1 或 AutoPL）")
_ESSD_NO_PRICE = Text(en="ESSD capacity prices are not in the catalog: no price is given",
                      zh="目录中没有 ESSD 容量价格：不给出价格")
_ESSD_NO_SIZE = Text(en=f"{_ESSD_NO_PRICE.en}; dataset size not given", zh=f"{_ESSD_NO_PRICE.zh}；未给出数据集大小")
_SHARED_FS = Text(en="shared file system (CPFS or NAS) so every instance reads the same data",
                  zh="共享文件系统（CPFS 或 NAS），供各实例读取同一份数据")
_SHARED_FS_NO_PRICE = Text(en="CPFS/NAS prices are not in the catalog", zh="目录中没有 CPFS/NAS 价格")


def dedupe(notes: list[Note]) -> list[Note]:
    seen: set[str] = set()
    out = []
    for n in notes:
        if n.code not in seen:
            seen.add(n.code)
            out.append(n)
    return out

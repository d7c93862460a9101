"""The answer to an open question about what a named GPU holds ("ecs.gn7i-c8g1.2xlarge 能跑什么模型", "What models can I
run on one A10?"): instead of a verdict on a model nobody named, the reference serving workloads of
knowledge/scenarios.yaml (`capacity`) are planned on the GPU and count the question names, and the answer says which of
them it holds, first. Each row is a full plan (the planner's own fit, headroom and tensor parallelism)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util import yamlio
from gpu_advisor.util.i18n import Text


@lru_cache(maxsize=1)
def _rows() -> dict[str, list[dict[str, Any]]]:
    path = resources.files("gpu_advisor.knowledge") / "scenarios.yaml"
    return yamlio.safe_load(path.read_text(encoding="utf-8")).get("capacity", {})


def _as_stated(rec: Any) -> bool:
    """The plan keeps the row's weight format: a planner that had to quantize further (a 16-bit row served as INT8 to
    fit the count) planned a different row, whose weights per GPU are smaller than as configured."""
    planned, configured = rec.planned_memory, rec.memory
    if planned is None or configured is None:
        return False
    return planned.breakdown.get("weights", 0.0) >= 0.8 * configured.breakdown.get("weights", 0.0)


def wants_capacity(parsed: ParsedQuestion, fields: dict[str, Any]) -> bool:
    from gpu_advisor.ask.lexicon import load_lexicon

    return (fields.get("gpu_preference") is not None and fields.get("model") is None
            and fields.get("params_billion") is None and str(fields.get("task")) in _rows()
            and load_lexicon().keywords["open_question"].search(parsed.text) is not None)


def capacity_line(parsed: ParsedQuestion, fields: dict[str, Any], rec: Any, plan_on: Callable[[dict[str, Any]], Any]) -> Text | None:
    """"1 × NVIDIA A10 24 GB, one request of 4,096 tokens: holds Qwen2.5-7B (16-bit, about 16.9 GiB per GPU); ...", or
    None when the question is not such a question or the named GPU is not the one the answer plans on."""
    if not wants_capacity(parsed, fields) or rec.instance is None:
        return None
    count = int(fields.get("num_gpus") or 1)
    keep = {k: fields[k] for k in ("gpu_preference", "region", "seq_len", "concurrent_users", "batch_size_per_gpu")
            if fields.get(k) is not None}
    gpu = rec.instance.gpu_display if rec.instance.gpu_id else None
    en, zh = [], []
    for row in _rows()[str(fields["task"])]:
        try:
            r = plan_on({**row["workload"], **keep, "num_gpus": count, "lang": rec.lang})
        except Exception:   # noqa: BLE001 - a row the advisor refuses is left out, never guessed
            continue
        inst = r.instance
        label = Text(**row["label"])
        if inst is not None and inst.gpu_display == gpu and inst.total_gpus <= count and _as_stated(r):
            need = r.planned_memory.device_total_gib if r.planned_memory else inst.planned_mem_gib
            en.append(f"holds {label.en} (about {need:.1f} GiB per GPU)")
            zh.append(f"放得下 {label.zh}（每卡约 {need:.1f} GiB）")
        elif inst is not None and inst.gpu_display == gpu and _as_stated(r):
            en.append(f"{label.en} needs {inst.total_gpus} of them")
            zh.append(f"{label.zh} 需 {inst.total_gpus} 张")
        else:
            en.append(f"does not hold {label.en}")
            zh.append(f"放不下 {label.zh}")
    if not en:
        return None
    tokens = int(fields.get("seq_len") or rec.workload.get("seq_len") or 4096)
    return Text(en=f"What {count} × {gpu} holds, serving one request of {tokens:,} tokens: {'; '.join(en)}. Name the model "
                   "(and its concurrency) for a plan of your own.",
                zh=f"{count} 张 {gpu} 能跑的模型（单路请求、{tokens} tokens 推理）：{'；'.join(zh)}。请说明要用的模型（和并发数）以得到具体方案。")


__all__ = ["capacity_line", "wants_capacity"]

"""An answer to a question as Markdown for a ticket (also the MCP `ask` tool's text) and as JSON, and the labels and
value formatting that the terminal rendering (gpu_advisor.cli.terminal) shares."""

from __future__ import annotations

import json
from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.ask.questions import load_questions

UI = {
    "understood": ("What I understood", "我理解到的"), "assumed": ("Assumed", "假设"),
    "notes": ("Notes", "备注"), "answer": ("Recommendation", "推荐配置"), "alternatives": ("Alternatives", "备选"),
    "memory": ("GPU memory per card", "单卡显存估算"), "warnings": ("Warnings", "注意"),
    "field": ("Field", "字段"), "value": ("Value", "取值"), "from": ("From your words", "原文"),
    "instance": ("Instance type", "实例规格"), "gpu": ("GPU", "GPU"), "vcpu": ("vCPU", "vCPU"),
    "ram": ("RAM (GiB)", "内存 (GiB)"), "price": ("Price / hour", "每小时价格"), "reason": ("Why", "理由"),
    "card": ("card", "单卡显存"), "none": ("No GPU instance fits; see the warnings.", "没有合适的 GPU 实例，请看注意事项。"),
    "how_hint": ("Type 'how N' to see the rules behind line N, 'how' for all rules, Enter to quit.",
                 "输入 “how N” 查看第 N 行依据的规则，“how” 查看全部规则，直接回车退出。"),
    "you_answered": ("Your answers", "您的回答"), "unpriced": ("not listed", "未列出"),
    "cpu_only": ("A CPU instance: this job needs no GPU.", "CPU 实例：该作业不需要 GPU。"),
    "cost": ("Cost and time", "费用与时间"), "wall": ("wall-clock about", "耗时约"),
    "payg_job": ("pay-as-you-go for the job", "按量付费整个作业"), "payg_month": ("pay-as-you-go per month", "按量付费每月"),
    "spot_job": ("spot for the job (the price floats, rework included)", "抢占式整个作业（价格浮动，含返工）"),
    "misses": ("misses", "不满足"), "unused": ("Not used", "未使用"),
    "none_fits": ("No option meets every constraint. What to relax:", "没有方案满足全部约束。可以放宽："),
    "none_fits_both": ("No option meets the budget and deadline. What to relax:", "没有方案同时满足预算与期限。可以放宽："),
    "none_fits_budget": ("No option meets the budget. What to relax:", "没有方案满足预算。可以放宽："),
    "none_fits_deadline": ("No option meets the deadline. What to relax:", "没有方案满足期限。可以放宽："),
}


def ui(key: str, lang: str) -> str:
    en, zh = UI[key]
    return zh if lang == "zh" else en


# Labels of fields that have no follow-up question (those take theirs from knowledge/ask/questions.yaml).
FIELD_LABELS = {
    "stage": ("Stage", "阶段"), "backbone": ("Backbone", "骨干网络"), "num_gpus": ("GPUs", "GPU 数"), "expert_parallel": ("Expert parallel", "专家并行"),
    "optimizer": ("Optimizer", "优化器"), "gradient_checkpointing": ("Gradient checkpointing", "梯度检查点"),
    "lora_rank": ("LoRA rank", "LoRA 秩"), "distributed": ("Distributed", "分布式策略"),
    "pytorch_version": ("PyTorch", "PyTorch 版本"), "num_classes": ("Classes", "类别数"),
    "data_loader_workers": ("Loader workers", "数据加载进程"), "augmentation": ("Augmentation", "数据增强"),
    "budget_total": ("Total budget (CNY)", "总预算（元）"), "expected_months_of_use": ("Months of use", "使用月数"),
    "num_nodes": ("Nodes", "机器数"), "training_tokens_billion": ("Training tokens (billions)", "训练 token 数（十亿）"),
    "requests_per_second": ("Requests per second", "每秒请求数"), "concurrent_users": ("Concurrent users", "并发用户数"),
    "output_tokens": ("Output tokens per request", "每请求输出 token 数"),
}


def field_label(field: str, lang: str) -> str:
    q = load_questions().questions.get(field)
    if q:
        return q.label.get(lang)
    en, zh = FIELD_LABELS.get(field, (field, field))
    return zh if lang == "zh" else en


def fmt_value(value: Any, lang: str) -> str:
    if isinstance(value, bool):
        return ("是" if value else "否") if lang == "zh" else ("yes" if value else "no")
    if isinstance(value, list | tuple) and len(value) == 2:
        return f"{value[0]}×{value[1]}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def value_of(obj: Any, name: str, default: Any = None) -> Any:
    return getattr(obj, name, default) if obj is not None else default


def render_markdown(parsed: ParsedQuestion, rec: Any, lang: str) -> str:
    """The question, what was understood (a Markdown table), then the advisor's own Markdown."""
    from gpu_advisor.answer.render import md_escape

    # the user's words are escaped (Markdown and HTML inert: `<img onerror=...>` stays text) and kept on one line
    lines = [f"> {md_escape(' '.join(parsed.text.split()))}", "", f"**{ui('understood', lang)}**", "",
             f"| {ui('field', lang)} | {ui('value', lang)} | {ui('from', lang)} |", "|---|---|---|"]
    for u in parsed.understood:
        cells = [field_label(u.field, lang).replace("|", "\\|"), md_escape(fmt_value(u.value, lang)),
                 md_escape(" ".join(u.matched.split()))]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"- {ui('assumed', lang)}: {field_label(a.field, lang)} = {fmt_value(a.value, lang)} — {a.reason.get(lang)}"
              for a in parsed.assumed]
    lines += [f"- {ui('notes', lang)}: {h.text.get(lang)}" for h in parsed.hints]
    lines += [f"- {ui('unused', lang)}: “{md_escape(u.matched)}” — {u.why.get(lang)}" for u in parsed.unused]
    return "\n".join(lines) + "\n\n" + rec.render(lang)


def render_json(parsed: ParsedQuestion, rec: Any, lang: str, answers: dict[str, Any] | None = None) -> str:
    doc = {"question": parsed.text, "lang": lang, "parsed": parsed.model_dump(mode="json"),
           "answers": answers or {}, "recommendation": rec.model_dump(mode="json")}
    return json.dumps(doc, ensure_ascii=False, indent=2, default=str) + "\n"

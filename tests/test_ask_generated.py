"""Generated questions (issue 22): templates in Chinese and English over the knowledge base's vocabulary and the
units people write. Over 2,000 questions: no traceback, never a model other than the one named, and every number
written in the question either sets the field it states or is listed as not used. A sample is also run through the
advisor, which must size the named model itself (or refuse)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

from gpu_advisor.ask.api import recommend_fields
from gpu_advisor.ask.parser import parse_question
from gpu_advisor.ask.vocab import all_names
from gpu_advisor.errors import WorkloadError
from gpu_advisor.kb.models import knowledge, resolve_backbone, resolve_transformer
from gpu_advisor.kb.confignames import resolve_method

sys.path.insert(0, str(Path(__file__).parent / "answers"))
from evaluate import numbers_accounted  # noqa: E402

SEED = 22
N_QUESTIONS = 2400

# (template, expected fields as functions of the slots); {m} is the model name
LLM_TEMPLATES = [
    ("Fine-tune {m} with LoRA on {g} GPUs, seq {s}, batch {b}, {e} epochs",
     {"finetune_method": "lora", "num_gpus": "g", "seq_len": "s", "batch_size_per_gpu": "b", "epochs": "e"}),
    ("用 LoRA 微调 {m}，{g} 卡，序列长度 {s}，batch {b}，{e} 个 epoch",
     {"finetune_method": "lora", "num_gpus": "g", "seq_len": "s", "batch_size_per_gpu": "b", "epochs": "e"}),
    ("Full fine-tune {m} (not LoRA) on {n} nodes of {g} GPUs, budget {money} CNY",
     {"finetune_method": "full", "num_nodes": "n", "num_gpus": "n*g", "budget_total": "money"}),
    ("{n} 台机器，每台 {g} 卡，全参数微调 {m}，不用 LoRA，预算 {w} 万元",
     {"finetune_method": "full", "num_nodes": "n", "num_gpus": "n*g", "budget_total": "w*10000"}),
    ("Serve {m} for {u} concurrent users with {k}K context",
     {"task": "inference", "concurrent_users": "u", "seq_len": "k*1024"}),
    ("部署 {m} 推理服务，每秒 {r} 个请求，上下文 {s}",
     {"task": "inference", "requests_per_second": "r", "seq_len": "s"}),
    ("Pretrain {m} on {t}B tokens within {d} days, seq {s}",
     {"task": "llm_pretrain", "training_tokens_billion": "t", "deadline_hours": "d*24", "seq_len": "s"}),
    ("QLoRA 微调 {m}，每小时预算 {p} 元，{d} 天内完成，rank {rk}",
     {"finetune_method": "qlora", "budget_per_hour": "p", "deadline_hours": "d*24", "lora_rank": "rk"}),
]
CV_TEMPLATES = [
    ("Train {m} on {N} images at {h}x{h}, batch {b}, {e} epochs, {g} GPUs",
     {"num_samples": "N", "input_size": "[h,h]", "batch_size_per_gpu": "b", "epochs": "e", "num_gpus": "g"}),
    ("训练 {m}，{N} 张图片，{h}x{h}，batch {b}，{e} 轮，{g} 卡，每小时预算 {p} 元",
     {"num_samples": "N", "input_size": "[h,h]", "batch_size_per_gpu": "b", "epochs": "e", "num_gpus": "g",
      "budget_per_hour": "p"}),
    ("{n} 台机器，每台 {g} 卡，训练 {m}，{e} 个 epoch，{d} 天内完成",
     {"num_nodes": "n", "num_gpus": "n*g", "epochs": "e", "deadline_hours": "d*24"}),
    ("Deploy {m} as an API serving {r} images per second",
     {"task": "inference", "requests_per_second": "r"}),
]


def _slots(rng: random.Random) -> dict[str, Any]:
    return {"g": rng.choice([1, 2, 4, 8]), "s": rng.choice([128, 512, 1024, 2048, 4096, 8192]),
            "b": rng.choice([1, 2, 4, 8, 16, 32]), "e": rng.choice([1, 2, 3, 5, 10, 30, 100, 300]),
            "n": rng.choice([2, 3, 4, 8]), "money": rng.choice([500, 3000, 20000, 150000]),
            "w": rng.choice([1, 2, 5, 10]), "u": rng.choice([8, 32, 50, 200, 1000]), "k": rng.choice([4, 8, 32, 128]),
            "r": rng.choice([5, 20, 100, 2000]), "t": rng.choice([10, 100, 300]), "d": rng.choice([1, 2, 3, 7, 10]),
            "p": rng.choice([10, 15, 30, 80]), "rk": rng.choice([8, 16, 64]), "N": rng.choice([2000, 5000, 120000]),
            "h": rng.choice([224, 512, 640, 1024])}


def _value(expr: str, slots: dict[str, Any]) -> Any:
    if expr in ("lora", "qlora", "full", "inference", "llm_pretrain"):
        return expr
    return eval(expr, {}, dict(slots))  # noqa: S307 - expressions of this file's own templates


def _plain(name: str) -> bool:
    """Names people write in a sentence: no parentheses, no hub owner prefix."""
    return not any(ch in name for ch in "()/,") and len(name) <= 40


def _names() -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    kb = knowledge()
    llm = [(n, p, k) for n, p, k in all_names() if p == "transformers" and kb.transformers[k].family == "llm" and _plain(n)]
    # a name that is both a method's and a backbone's alias ("ddrnet") is a method, as `estimate --model` reads it
    cv = [(n, p, k) for n, p, k in all_names() if p in ("methods", "backbones") and _plain(n)
          and not (p == "backbones" and resolve_method(n))]
    return llm, cv


def _questions() -> list[tuple[str, str, str, dict[str, Any]]]:
    rng = random.Random(SEED)
    llm, cv = _names()
    out = []
    for i in range(N_QUESTIONS):
        names, templates = (llm, LLM_TEMPLATES) if i % 2 == 0 else (cv, CV_TEMPLATES)
        name, pool, key = rng.choice(names)
        template, expected = rng.choice(templates)
        slots = _slots(rng)
        question = template.format(m=name, **slots)
        out.append((question, pool, key, {f: _value(e, slots) for f, e in expected.items()}))
    return out


QUESTIONS = _questions()


def _key(pool: str, name: str) -> str | None:
    if pool == "transformers":
        return resolve_transformer(name)
    found = resolve_method(name) if pool == "methods" else resolve_backbone(name)
    return found[0] if found else None


def _same(a: Any, b: Any) -> bool:
    if isinstance(b, (int, float)) and isinstance(a, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= 1e-3 * max(1, abs(b))
    if isinstance(b, list):
        return list(a or []) == b
    return a == b


def test_generated_questions_are_read_as_written() -> None:
    assert len(QUESTIONS) >= 2000
    failures: list[str] = []
    for question, pool, key, expected in QUESTIONS:
        try:
            parsed = parse_question(question)
        except WorkloadError as exc:
            failures.append(f"{question!r}: refused: {exc}")
            continue
        fields = parsed.workload_fields
        named = fields.get("model") if pool != "backbones" else fields.get("backbone") or fields.get("model")
        if named is None or _key(pool, named) != key:
            failures.append(f"{question!r}: model {named!r}, want {key}")
        for field, want in expected.items():
            if not _same(fields.get(field), want):
                failures.append(f"{question!r}: {field} = {fields.get(field)!r}, want {want!r}")
        ok, detail = numbers_accounted(parsed)
        if not ok:
            failures.append(f"{question!r}: {detail}")
    assert not failures, f"{len(failures)} of {len(QUESTIONS)}:\n" + "\n".join(failures[:25])


@pytest.mark.parametrize("start", range(0, 200, 50))
def test_the_advisor_sizes_the_named_model(start: int) -> None:
    """A sample through the advisor: no traceback, and the profile sized is the named model (or a refusal)."""
    for question, pool, key, _ in QUESTIONS[start:start + 50]:
        parsed = parse_question(question)
        try:
            rec = recommend_fields(parsed, parsed.workload_fields, parsed.lang)
        except WorkloadError:
            continue
        prof = rec.memory.profile if rec.memory else None
        assert prof is not None, question
        if pool == "transformers":
            assert prof.key == key, (question, prof.key, key)
        elif pool == "methods":
            spec = knowledge().methods[key]
            assert prof.method in {key, spec.mask_variant, spec.detection_variant} or prof.method.startswith(key), (
                question, prof.method, key)
        else:
            assert prof.backbone == key, (question, prof.backbone, key)

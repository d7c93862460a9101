"""parse_question: a question in Chinese or English -> ParsedQuestion (Workload fields + what was understood).

Pipeline: normalise -> names (models, backbones, LLM families, regions, enums, flags) -> quantities with units
-> task and stage -> tidy-up (LLM model string, global batch, bf16 for LLMs) -> assumptions -> validation.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from gpu_advisor.ask.keywords import LLM_TASKS, finish_task, run_keywords
from gpu_advisor.ask.lexicon import load_lexicon
from gpu_advisor.ask.numeric import run_numeric
from gpu_advisor.ask.parsed import Assumed, ParsedQuestion, Scanner, Understood
from gpu_advisor.errors import UnknownModelError, WorkloadError
from gpu_advisor.util.i18n import Text
from gpu_advisor.util.textsafe import visible
from gpu_advisor.workload import Workload

MAX_QUESTION_CHARS = 4000
DEFAULT_TASK = "image_classification"
MIXED_WORDS = re.compile(r"混合|mixed|\bamp\b", re.IGNORECASE | re.ASCII)


def detect_lang(text: str) -> str:
    """zh when Chinese characters carry the sentence, en otherwise ("训练 Llama" is zh, "... in 杭州" is en)."""
    cjk = len(re.findall(r"[\u3400-\u9fff]", text))
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk >= 2 and cjk * 2 > latin_words else "en"


def _tidy(s: Scanner) -> None:
    f = s.fields
    family = f.pop("_llm_family", None)
    matched = f.pop("_llm_match", "")
    if family and "model" not in f:
        size = f.get("params_billion")
        name = f"{family} {size:g}B" if size else family
        s.set("model", name, matched, claim=False)
    global_batch = f.pop("_global_batch", None)
    if global_batch and "batch_size_per_gpu" not in f:
        per_gpu = max(1, global_batch // int(f.get("num_gpus") or 1))
        s.set("batch_size_per_gpu", per_gpu, f"global batch {global_batch}", claim=False)
    if f.get("precision") == "bf16_amp" and f.get("task") in LLM_TASKS and not MIXED_WORDS.search(s.text):
        _replace(s, "precision", "bf16")
    if f.get("task") == "image_classification" and "model" not in f and "backbone" in f:
        s.set("model", f.pop("backbone"), "backbone", claim=False)
        s.understood[:] = [u for u in s.understood if u.field != "backbone"]


def _replace(s: Scanner, field: str, value: Any) -> None:
    s.fields[field] = value
    s.understood[:] = [u._replace(value=value) if u.field == field else u for u in s.understood]


def _assume(s: Scanner) -> list[Assumed]:
    assumed = []
    if "task" not in s.fields:
        s.fields["task"] = DEFAULT_TASK
        assumed.append(Assumed("task", DEFAULT_TASK, Text(
            en="The question names no task; assumed image classification with a typical CNN "
               "(a common mid-size deep-learning training job). Say the task to change this.",
            zh="问题中没有说明任务类型；按图像分类、常见 CNN 模型（典型的中等规模深度学习训练）估算。"
               "说明具体任务即可修改。")))
    return assumed


def parse_question(text: str) -> ParsedQuestion:
    """Read a question; never evaluates it. Raises WorkloadError for empty text or out-of-range values."""
    if not isinstance(text, str) or not text.strip():
        raise WorkloadError("The question is empty: write what you want to train or serve.",
                            "问题为空：请写出您要训练或部署的内容。", field="question")
    if len(text) > MAX_QUESTION_CHARS:
        raise WorkloadError(f"The question is longer than {MAX_QUESTION_CHARS} characters; shorten it.",
                            f"问题超过 {MAX_QUESTION_CHARS} 个字符，请精简。", field="question")
    text = visible(text)  # no terminal escapes, bidi or zero-width characters in what is parsed and echoed
    lang = detect_lang(text)
    s = Scanner(text)
    implied = run_keywords(s)
    run_numeric(s)
    finish_task(s, implied)
    _tidy(s)
    _refuse_unsupported(s)
    assumed = _assume(s)
    fields = {k: v for k, v in s.fields.items() if not k.startswith("_")}
    fields["lang"] = lang
    validate_fields(fields)
    order = {name: i for i, name in enumerate(Workload.model_fields)}
    understood = sorted(s.understood, key=lambda u: order.get(u.field, len(order)))
    return ParsedQuestion(text=text, lang=lang, workload_fields=fields, understood=understood,
                          assumed=assumed, hints=s.hints)


def _refuse_unsupported(s: Scanner) -> None:
    """A question about a model family the knowledge base has no profile for (and no model it has) is refused:
    answering it as the default task would size a different job."""
    if {"model", "backbone"} & set(s.fields):
        return
    for entry in load_lexicon().unsupported:
        if entry.pattern.search(s.text):
            raise UnknownModelError(
                f"model: gpu-advisor has no memory profile for {entry.value}: its knowledge base covers vision models "
                "(segmentation, detection, classification) and transformer language models, so it cannot size this "
                "job. Name a model it covers, or measure one training step with torch.cuda.max_memory_allocated().",
                f"模型：知识库中没有{entry.extra['zh']}的显存模型（目前覆盖视觉模型——分割、检测、分类——以及 Transformer "
                "语言模型），无法估算该作业。请换用知识库中的模型，或用 torch.cuda.max_memory_allocated() 实测一步训练。",
                field="model")


def validate_fields(fields: dict[str, Any]) -> Workload:
    """Build the Workload; a pydantic error becomes a WorkloadError naming the field."""
    try:
        from gpu_advisor.validation import workload_from_dict  # written by another engineer
    except ImportError:
        workload_from_dict = None
    if workload_from_dict is not None:
        return workload_from_dict(fields)
    try:
        return Workload(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or "workload"
        msg = err.get("msg", "invalid value")
        raise WorkloadError(f"{field}: {msg} (got {err.get('input')!r})",
                            f"字段 {field}：{msg}（收到的值 {err.get('input')!r}）", field=field) from None


__all__ = ["parse_question", "detect_lang", "validate_fields", "ParsedQuestion", "Understood"]

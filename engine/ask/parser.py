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
from gpu_advisor.ask.parsed import Assumed, Hint, ParsedQuestion, Scanner, Understood
from gpu_advisor.ask.population import find_population, resolve_population
from gpu_advisor.ask.typos import read_typos
from gpu_advisor.ask.vocab import pool_for
from gpu_advisor.kb.models import knowledge, looks_like_llm, norm, spelling_labels
from gpu_advisor.errors import UnknownModelError, WorkloadError
from gpu_advisor.util.i18n import Text
from gpu_advisor.util.textsafe import visible
from gpu_advisor.workload import Workload

MAX_QUESTION_CHARS = 4000
DEFAULT_TASK = "image_classification"
MIXED_WORDS = re.compile(r"混合|mixed|\bamp\b", re.IGNORECASE | re.ASCII)


KANA = re.compile(r"[\u3040-\u30ff]")
HANGUL = re.compile(r"[\uac00-\ud7af]")
OTHER_SCRIPT = re.compile(r"[\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f]")   # Cyrillic, Arabic, Thai


def other_language(text: str) -> bool:
    """Japanese (kana), Korean (hangul) or another script: answered, with a note that zh and en are supported."""
    sample = text[:2000]
    return bool(KANA.search(sample) or HANGUL.search(sample) or len(OTHER_SCRIPT.findall(sample)) >= 3)


OTHER_LANGUAGE_NOTE = ("gpu-advisor understands Chinese and English; this question was read as far as its Chinese "
                       "characters, numbers and model names go. 本工具支持中文和英文提问；该问题仅按其中的汉字、数字与"
                       "模型名理解。")


LATIN_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:[-_./:][A-Za-z0-9]+)*")


def detect_lang(text: str) -> str:
    """zh when Chinese characters carry the sentence, en otherwise ("训练 Llama" is zh, "... in 杭州" is en)."""
    text = text[:2000]
    cjk = len(re.findall(r"[\u3400-\u9fff]", text))
    # a hyphenated name ("DeepSeek-R1-Distill-Qwen-7B", "ecs.gn7i-c8g1.2xlarge") is one word, not five
    latin_words = len(LATIN_WORD.findall(text))
    return "zh" if cjk >= 2 and cjk * 2 > latin_words + 1 else "en"


def _tidy(s: Scanner) -> None:
    f = s.fields
    f.pop("_llm_family", None)
    f.pop("_llm_match", None)
    if dataset := f.pop("_dataset", None):
        row, matched = dataset
        if "task" not in f:
            s.set("task", row["task"], matched, claim=False)
        for field in ("num_classes", "num_samples"):
            if field in f:
                s.note_unused(matched, f"{row['name']}'s {field} ({row[field]:,}) not used: the question states "
                              f"{f[field]:,}", f"{row['name']} 的 {field}（{row[field]:,}）未使用：问题中给出了 {f[field]:,}")
            elif field == "num_samples" and f.get("task") in LLM_TASKS + ("nlp_finetune",):
                continue
            else:
                s.set(field, int(row[field]), matched, claim=False)
    _iterations(s)
    global_batch = f.pop("_global_batch", None)
    if global_batch and "batch_size_per_gpu" not in f:
        per_gpu = max(1, global_batch // int(f.get("num_gpus") or 1))
        s.set("batch_size_per_gpu", per_gpu, f"global batch {global_batch}", claim=False)
    if f.get("precision") == "bf16_amp" and f.get("task") in LLM_TASKS + ("inference",) and not MIXED_WORDS.search(s.text):
        _replace(s, "precision", "bf16")   # serving has no mixed precision: "in bf16" is bf16 weights
    if f.get("task") == "image_classification" and "model" not in f and "backbone" in f:
        said = next((u.matched for u in s.understood if u.field == "backbone"), str(f["backbone"]))
        s.set("model", f.pop("backbone"), said, claim=False)
        s.understood[:] = [u for u in s.understood if u.field != "backbone"]


def _usual_batch(s: Scanner) -> tuple[int, str, str] | None:
    """(images per GPU, why en, why zh) a vision training job assumes when none is stated: the named method's own
    trainer default (Ultralytics), else the task's (knowledge/models/defaults.yaml, as memory/jobdefaults.py does)."""
    from gpu_advisor.kb.models import knowledge

    task = s.fields.get("task")
    if task not in VISION_TASKS:
        return None
    pool, key = s.resolved.get("model", (None, None))
    own = knowledge().methods[key].train_defaults if pool == "methods" and key in knowledge().methods else None
    if own is not None:
        return own.batch, own.why, own.why_zh
    row = knowledge().task_defaults.get(str(task), {})
    return (int(row["batch"]), str(row.get("why", "")), "该任务每卡常用图像数") if row.get("batch") else None


def _iterations(s: Scanner) -> None:
    """"160k iterations" / "训练16万次迭代": epochs = iterations x samples per iteration / training samples (the time is
    computed from samples x epochs, costing/timing.py). The samples per iteration are the global batch, or the batch
    per GPU times the GPUs stated; with no GPU count the batch stated is taken as one iteration's, said back. What is
    missing to convert is said back; the count is never dropped."""
    f = s.fields
    found = f.pop("_iters", None)
    if not found:
        return
    iters, said = found
    if "epochs" in f:
        s.note_unused(said, f"iterations: the stated epochs ({f['epochs']:g}) are used", f"迭代次数：按问题中给出的轮数（{f['epochs']:g}）计")
        return
    per_gpu, gpus, total = f.get("batch_size_per_gpu"), f.get("num_gpus"), f.get("_global_batch")
    if total:
        batch, how_en, how_zh = int(total), f"global batch {total}", f"全局 batch {total}"
    elif per_gpu and gpus:
        batch = int(per_gpu) * int(gpus)
        how_en, how_zh = f"batch {per_gpu} per GPU x {gpus} GPUs", f"每卡 batch {per_gpu} × {gpus} 卡"
    elif gpus and (usual := _usual_batch(s)) is not None:
        # "SegFormer-B2 ... 160k 次迭代，8 卡": the batch per GPU not stated, the usual one of the method / task (what the
        # memory estimate assumes too), said back; the stated iterations are never replaced by a default schedule
        batch = usual[0] * int(gpus)
        how_en = f"batch per GPU not given: {usual[0]} per GPU ({usual[1]}) x {gpus} GPUs"
        how_zh = f"未给出每卡 batch：按每卡 {usual[0]}（{usual[2]}）× {gpus} 卡"
    elif per_gpu:
        batch = int(per_gpu)
        how_en = f"batch {per_gpu}, taken as one iteration's (no GPU count is stated: with a per-GPU batch on N GPUs, multiply the epochs by N)"
        how_zh = f"batch {per_gpu}，按每次迭代的总 batch 计（未给出卡数：若是 N 张卡、每卡 {per_gpu}，轮数再乘以 N）"
    else:
        batch = None
    samples = f.get("num_samples")
    if batch is None or not samples:
        need_en = " and ".join(w for w, ok in (("the batch per iteration", batch), ("the number of training samples", samples)) if not ok)
        need_zh = "与".join(w for w, ok in (("每次迭代的 batch", batch), ("训练样本数", samples)) if not ok)
        s.note_unused(said, f"iterations: {need_en} {'are' if ' and ' in need_en else 'is'} needed to turn them into epochs (iterations x batch / samples = "
                      "epochs); the time is given for one epoch until then", f"迭代次数：还需要{need_zh}才能换算为轮数（迭代次数 × "
                      "batch ÷ 样本数 = 轮数）；在此之前时间按一轮计")
        return
    epochs = iters * batch / int(samples)
    s.set("epochs", round(epochs, 3), said, claim=False)
    s.hints.append(Hint("iterations", said, Text(
        en=f"{iters:,} iterations x {batch} samples each ({how_en}) / {int(samples):,} training samples = {epochs:,.3g} epochs.",
        zh=f"{iters:,} 次迭代 × 每次 {batch} 个样本（{how_zh}）÷ {int(samples):,} 个训练样本 = {epochs:,.3g} 轮。")))


def _replace(s: Scanner, field: str, value: Any) -> None:
    s.fields[field] = value
    s.understood[:] = [u._replace(value=value) if u.field == field else u for u in s.understood]


TASK_NAMES = {"llm_finetune": ("fine-tuning", "微调"), "llm_pretrain": ("pretraining", "预训练"),
              "nlp_finetune": ("fine-tuning", "微调")}


def _assume_training(s: Scanner) -> Assumed | None:
    """No verb says training or serving ("DeepSeek-R1-Distill-Qwen-32B 需要什么配置"): the task read from the model or
    a task word is a training job by default; that default decides the answer, so it is said (never silently)."""
    how = s.fields.pop("_task_unstated", None)
    task = s.fields.get("task")
    if not how or not task:
        return None
    if how == "serve":   # a named language model, no training or serving word: served by default (keywords)
        name = str(s.fields.get("model") or "")
        s.understood[:] = [u for u in s.understood if u.field not in ("task", "stage")]
        return Assumed("task", task, Text(
            en=f"The question says neither training nor serving: sized as serving {name} (inference). To size "
               "fine-tuning or training it, say 'fine-tune' / 'train' (or LoRA / SFT).",
            zh=f"问题中没有说明是训练还是部署：按部署（推理）{name} 估算。如需按微调或训练估算，请写“微调 / 训练”"
               "（或 LoRA / SFT）。"))
    name = str(s.fields.get("model") or s.fields.get("backbone") or "")
    verb_en, verb_zh = TASK_NAMES.get(str(task), ("training", "训练"))
    method_en = " (a full fine-tune unless a method is said)" if task == "llm_finetune" and "finetune_method" not in s.fields else ""
    method_zh = "（未说明方法时按全参微调）" if method_en else ""
    if how == "model":   # the task came from the model alone: it is an assumption, not something the user said
        s.understood[:] = [u for u in s.understood if u.field != "task"]
    what_en = f"{verb_en} {name}" if name else verb_en
    what_zh = f"{verb_zh} {name}" if name else verb_zh
    return Assumed("task", task, Text(
        en=f"The question says neither training nor serving: sized as {what_en}{method_en} ({task}). To size serving "
           "it, say 'serve' / 'inference' (or what it is for, e.g. 'as a code assistant'); to train, say 'fine-tune'.",
        zh=f"问题中没有说明是训练还是部署：按{what_zh}{method_zh}（{task}）估算。如需按部署估算，请写“部署 / 推理”（或用途，"
           "如“做代码助手”）；如需训练，请写“微调 / 训练”。"))


def _assume(s: Scanner) -> list[Assumed]:
    assumed = [a for a in (_assume_training(s),) if a is not None]
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
        raise WorkloadError(f"question: it is {len(text):,} characters, over the limit of {MAX_QUESTION_CHARS:,}; shorten it "
                            "to the job: the task, the model, the data, the GPUs, the budget and the deadline.",
                            f"问题：共 {len(text):,} 个字符，超过 {MAX_QUESTION_CHARS:,} 个字符的上限；请精简为作业本身："
                            "任务、模型、数据、GPU、预算与期限。", field="question")
    text = visible(text)  # no terminal escapes, bidi or zero-width characters in what is parsed and echoed
    lang = detect_lang(text)
    s = Scanner(text)
    read_typos(s)
    _claim_markers(s)
    implied = run_keywords(s)
    run_numeric(s)
    find_population(s)
    finish_task(s, implied)
    _served_alignment(s)
    _tidy(s)
    population = resolve_population(s)
    _refuse_unsupported(s)
    if other_language(text):
        from gpu_advisor.ask.parsed import Hint
        s.hints.insert(0, Hint("language", "", Text(en=OTHER_LANGUAGE_NOTE, zh=OTHER_LANGUAGE_NOTE)))
    assumed = _assume(s) + population
    _refuse_out_of_scope(s, assumed)
    _refuse_no_job(s, assumed)
    _compared_gpus(s)
    _bare_image_size(s)
    _bare_context(s)
    _account_for_numbers(s)
    fields = {k: v for k, v in s.fields.items() if not k.startswith("_")}
    fields["lang"] = lang
    validate_fields(fields)
    order = {name: i for i, name in enumerate(Workload.model_fields)}
    understood = sorted(s.understood, key=lambda u: order.get(u.field, len(order)))
    unresolved = [_unresolved_entry(u, s.text) for u in s.unresolved]
    return ParsedQuestion(text=text, lang=lang, workload_fields=fields, understood=understood,
                          assumed=assumed, hints=s.hints, unused=s.unused, unresolved=unresolved,
                          other_language=other_language(text), other_models=s.fields.get("_other_models", []),
                          alignment=s.fields.get("_alignment"),
                          yes_no=_yes_no(s.text))


def _claim_markers(s: Scanner) -> None:
    """Ticket ids, list markers and "24x7" (lexicon keywords.not_a_quantity, always_on) count nothing of the job:
    claimed before any quantity is read, so they set no field and are not listed as numbers not used."""
    kw = load_lexicon().keywords
    said = {"not_a_quantity": ("read as a ticket / order id: it sizes nothing", "理解为工单 / 订单编号：不参与估算"),
            "always_on": ("read as running around the clock (a service is priced by the month, 24×7)",
                          "理解为全天候运行（服务按月、24×7 计价）")}
    for name, (en, zh) in said.items():
        for m in list(s.matches(kw[name])):
            s.hint(name, m, f"'{m.group(0).strip()}' {en}.", f"“{m.group(0).strip()}”{zh}。")
    listed, want = [], 1   # "1) ... 2) ...": the markers that count 1, 2, ... in order, when there are at least two
    for m in s.matches(kw["list_marker"]):
        if int(m.group("n")) == want:
            listed.append(m)
            want += 1
    if len(listed) >= 2:
        for m in listed:
            s.claim(m)
        shown = " ".join(m.group(0).strip() for m in listed)
        s.hints.append(Hint("list_marker", shown, Text(en=f"'{shown}' read as list markers: they size nothing.",
                                                       zh=f"“{shown}”理解为列表序号：不参与估算。")))


def _yes_no(text: str) -> bool:
    """A yes / no question ("单卡够吗？"), not an open one about what a machine or budget can do ("能跑什么模型")."""
    kw = load_lexicon().keywords
    return kw["yes_no"].search(text) is not None and kw["open_question"].search(text) is None


STRAY_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d{1,15}(?:\.\d{1,6})?(?:e-?\d{1,3})?(?:\s*[%kKmMbBwW万亿千]|\s*(?:fps|gb|tb|g\b))?")
MAX_STRAY = 20


COMPARE_CUE = re.compile(r"还是|哪个|区别|差别|差异|\bdifference\b|哪一个|哪种|对比|比较|相比|\bvs\.?\b|\bversus\b|\bor\b|\bcompare|\bwhich\b|\bbetter\b",
                         re.IGNORECASE)


def _compared_gpus(s: Scanner) -> None:
    """"A10 和 L20 哪个划算", "T4 or A10?": two catalog GPUs in a comparison. The first stays the preference; each
    other one becomes a 'gpu_compare' hint (the answer plans the job on every GPU named and compares them) instead of
    a second preference said back as not used."""
    first = s.fields.get("gpu_preference")
    if not first or not COMPARE_CUE.search(s.text):
        return
    from gpu_advisor.ask.numeric import _catalog_gpu

    from gpu_advisor.ask.families import mentioned_gpu

    kept = []
    for u in s.unused:
        gpu = mentioned_gpu(u.matched) or u.matched.strip().upper().replace(" ", "")   # "gn8is": its GPU, L20
        if u.why.en.startswith("gpu_preference was already read") and gpu != str(first).upper() and _catalog_gpu(gpu):
            s.hints.append(Hint("gpu_compare", gpu, Text(en=f"Compared with {first}: {gpu}.", zh=f"与 {first} 对比：{gpu}。")))
        else:
            kept.append(u)
    s.unused[:] = kept


VISION_TASKS = ("semantic_segmentation", "instance_segmentation", "panoptic_segmentation", "object_detection",
                "image_classification")
# a number standing alone in a vision question ("YOLOv8s at 640", "训练 YOLO11m，640，300 个 epoch", "batch 128，224"):
# the square input size people write bare, when it is one of the usual sizes (multiples of 32, 128-2048)
BARE_SIZE = re.compile(r"(?:(?<=\bat )|(?<=[，,、]\s)|(?<=[，,、]))(?P<num>\d{3,4})(?=\s*(?:[，,、。.;；]|$|\s+(?:with|and|for|on|px)\b))",
                       re.IGNORECASE)


def _bare_image_size(s: Scanner) -> None:
    """A free number that can only be the image size of a vision job becomes input_size, said back as such."""
    if s.fields.get("task") not in VISION_TASKS or "input_size" in s.fields:
        return
    for m in s.matches(BARE_SIZE):
        side = int(m.group("num"))
        if 128 <= side <= 2048 and side % 32 == 0:
            s.set("input_size", [side, side], m)
            s.hint("input_size", m, f"'{side}' read as the image size ({side}x{side}).",
                   f"“{side}”理解为图像尺寸（{side}×{side}）。", claim=False)
            return


# a bare "32K" / "128k" in a language-model question ("Qwen2.5-72B int4，32K，100 并发"): the context length people
# write that way (a power of two of thousands of tokens); a count of samples or images has its own words
BARE_CONTEXT = re.compile(r"(?<![\w.])(?P<num>\d{1,4})\s*[kK](?![\w])")
CONTEXT_KS = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}


def _bare_context(s: Scanner) -> None:
    """A free "32K" that can only be the context of a language-model job becomes seq_len, said back as such."""
    if "seq_len" in s.fields or not _language_model_job(s):
        return
    for m in s.matches(BARE_CONTEXT):
        k = int(m.group("num"))
        if k in CONTEXT_KS:
            s.set("seq_len", k * 1024, m)
            s.hint("seq_len", m, f"'{m.group(0)}' read as the context length ({k * 1024:,} tokens).",
                   f"“{m.group(0)}”理解为上下文长度（{k * 1024:,} token）。", claim=False)
            return


def _language_model_job(s: Scanner) -> bool:
    task = s.fields.get("task")
    if task in LLM_TASKS:
        return True
    resolved = s.resolved.get("model")
    if task != "inference" or not resolved or resolved[0] != "transformers":
        return False
    profile = knowledge().transformers.get(resolved[1])
    return profile is not None and getattr(profile, "family", None) == "llm"


def _account_for_numbers(s: Scanner) -> None:
    """Every number the question writes sets a field, belongs to a name, or is listed as not used with the words
    around it: nothing is dropped silently (issue 22)."""
    said = " ".join([u.matched for u in s.understood] + [h.matched for h in s.hints] + [u.matched for u in s.unused]
                    + [str(v) for k, v in s.fields.items() if k in ("model", "backbone", "gpu_preference")])
    found = 0
    for m in STRAY_NUMBER.finditer(s.text):
        if not s._free(m.start(), m.end()) or m.group(0).strip() in said:
            continue
        before = s.text[max(0, m.start() - 16):m.start()].split(",")[-1]
        before = before[before.find(" ") + 1:] if " " in before.strip() and before[0].isascii() else before
        after = s.text[m.end():m.end() + 12].split(",")[0]
        after = after[:after.rfind(" ")] if " " in after.strip() and after[-1:].isascii() else after
        around = (before + s.text[m.start():m.end()] + after).strip()
        if any(u.matched == around for u in s.unused):
            continue
        s.note_unused(around, "a number not attached to any field: say what it counts (e.g. 'batch 8', '8 GPUs', "
                      "'300 epochs')", "这个数字没有对应到任何字段：请说明它是什么（如“batch 8”“8 卡”“300 个 epoch”）")
        found += 1
        if found >= MAX_STRAY:
            break


# words that make an unknown text model a text-embedding / reranker (encoder) model: its closest known names are
# encoders, not decoder LLMs whose names happen to be spelled alike ("bge-m3" is not "Gemma 3")
ENCODER_WORDS = re.compile(r"embedd?(?:ing|er)s?\b|\brerank(?:er|ing)?s?\b|cross[\s-]*encoder|bi[\s-]*encoder|sentence[\s-]*"
                           r"(?:transformers?|embeddings?)|向量模型|向量化模型|嵌入模型|文本向量|重排序?模型|排序模型", re.IGNORECASE)


def _is_encoder_name(name: str, question: str) -> bool:
    """An unresolved name of a text-embedding / reranker family (the lexicon's `embedding` family: bge, gte, e5, m3e,
    jina-embeddings, ...) or a text model named in a question about embeddings / reranking."""
    if ENCODER_WORDS.search(name) or any(f.word == "embedding" and f.pattern.search(name) for f in load_lexicon().families):
        return True
    return ENCODER_WORDS.search(question) is not None and not looks_like_llm(name)


def _unresolved_entry(u: Any, question: str) -> tuple[str, str, list[str]]:
    pool = pool_for(u.kind)
    family = next((f for f in load_lexicon().families if f.word == "backbone" and f.pattern.match(u.text)), None)
    if pool == "methods" and family is not None:
        # "EfficientNet-B4", "MobileNetV4": a backbone family the knowledge base lacks; the closest are backbones
        # (ResNet, ConvNeXt, RegNet), not detection or segmentation heads spelled alike; with few spelled alike, the
        # common backbones the lexicon names (families: suggest)
        close = closest_models(u.text, "backbones")
        if len(close) < 3:
            shown = {knowledge().backbones[k].display for k in family.suggest if k in knowledge().backbones}
            close += [d for d in sorted(shown, key=[knowledge().backbones[k].display for k in family.suggest].index)
                      if d not in close]
        return u.text, u.kind, close[:5]
    if pool == "transformers" and _is_encoder_name(u.text, question):
        return u.text, "encoder", closest_models(u.text, pool, family="encoder_nlp")
    return u.text, u.kind, closest_models(u.text, pool)


def closest_models(name: str, pool: str, n: int = 5, family: str | None = None) -> list[str]:
    """Up to n distinct known models close to name, by their display names ("Mistral 7B", not five of its aliases).
    family: only profiles of that family (an embedding model's closest names are encoders, the embedding and
    reranker models first when nothing is spelled alike)."""
    import difflib

    kb = knowledge()
    specs: dict[str, Any] = {"methods": kb.methods, "backbones": kb.backbones, "transformers": kb.transformers}[pool]
    if family is not None:
        # the family's profiles and every embedding / reranker model (a decoder-based embedder is one too)
        specs = {k: v for k, v in specs.items() if getattr(v, "family", None) == family or getattr(v, "role", None)}
    labels: dict[str, str] = {}
    for spec in specs.values():
        # "DeepSeek-R1-Distill-Qwen-32B", not its base's display; each model once ("Yi-1.5-34B", not also
        # "01-ai/Yi-1.5-34B" and "Yi-1.5-34B-Chat")
        for fold, label in spelling_labels(spec).items():
            labels.setdefault(fold, label)
    folded = norm(name)
    out: list[str] = []
    for hit in difflib.get_close_matches(folded, list(labels), n=40, cutoff=0.5):
        if labels[hit] not in out:
            out.append(labels[hit])
    # a short name that is one word of known names ("R1" of "DeepSeek-R1", "K2" of "Kimi K2"): those models
    if len(out) < n and folded and len(folded) <= 4:
        words = [label for label in dict.fromkeys(labels.values())
                 if folded in re.split(r"[^a-z0-9.]+", label.lower()) and label not in out]
        out.extend(sorted(words, key=len))   # the shortest first: DeepSeek-R1 before its distilled models
    # a family prefix ("llama", "deepseek") with no close spelling: the models whose names start with it
    head = re.match(r"[a-z]+", folded)
    if len(out) < n and head and len(head.group(0)) >= 3:
        for fold, label in labels.items():
            if fold.startswith(head.group(0)) and label not in out:
                out.append(label)
    # the name's own family first ("GLM-Z1-32B": the GLM models before a Llama spelled alike): the first word of the name
    # as written, when known names start with it
    word = re.match(r"[a-z]+", name.strip().lower())
    if word and len(word.group(0)) >= 3 and family is None:
        w = word.group(0)
        kin = [label for fold, label in labels.items() if fold.startswith(w)]
        if kin:
            ranked = [label for label in out if norm(label).startswith(w)]
            out = list(dict.fromkeys([*ranked, *kin, *out]))
    if family is not None:
        # embedding / reranker models first (the spelled-alike ones, then the others), plain encoders after them
        for spec in sorted(specs.values(), key=lambda v: (getattr(v, "role", None) is None, v.display)):
            if spec.display not in out:
                out.append(spec.display)
        trained_for_it = {v.display for v in specs.values() if getattr(v, "role", None) is not None}
        out.sort(key=lambda label: label not in trained_for_it)
    return out[:n]


def _no_job(s: Scanner, assumed: list[Assumed]) -> bool:
    """The question states no job: the task was assumed, nothing but a GPU, a region or a count was read, and no
    training or serving word is written ("训练 ... A100 x 8" is a job, if a vague one)."""
    stated = {u.field for u in s.understood}
    if not any(a.field == "task" for a in assumed) or stated - {"gpu_preference", "region", "num_gpus"}:
        return False
    kw = load_lexicon().keywords
    return not any(s.first(kw[k]) for k in ("training", "inference", "pretrain", "finetune"))


HOW_TO_ASK_EN = ("To get a recommendation, say what you want to train or serve (model, data, load), e.g. 'serve "
                 "Qwen2.5-7B for 20 concurrent users' or 'fine-tune Llama 3.1 8B with LoRA'.")
HOW_TO_ASK_ZH = "如需推荐配置，请说明要训练或部署什么（模型、数据、负载），例如“部署 Qwen2.5-7B，并发 20”或“LoRA 微调 Llama 3.1 8B”。"


def _refuse_out_of_scope(s: Scanner, assumed: list[Assumed]) -> None:
    """"我的发票怎么开？", "How do I install the CUDA driver?", "杭州 A10 有库存吗？": a support-desk topic the advisor does
    not answer (lexicon keywords.out_of_scope) and no job: a short reply saying what the tool does, never a plan for
    a default job. A GPU named gets its catalog list prices (not stock)."""
    m = load_lexicon().keywords["out_of_scope"].search(s.text)
    if m is None or not _no_job(s, assumed):
        return
    said = m.group(0).strip()
    facts_en = facts_zh = ""
    if gpu := s.fields.get("gpu_preference"):
        from gpu_advisor.ask.catalog_facts import named_gpu_prices
        from gpu_advisor.kb.catalog_loader import load_catalog

        price_en, price_zh = named_gpu_prices(s, load_catalog(), str(gpu))
        if price_en:
            facts_en = f" What the catalog records (list prices, not live stock or quotas):{price_en}"
            facts_zh = f"目录记录的信息（目录价，不是实时库存或配额）：{price_zh}"
    raise WorkloadError(
        f"question: gpu-advisor sizes GPU servers for a training or serving job (instance type, GPU count, memory, time, "
        f"price); it does not answer questions about '{said}' (invoices, refunds, account and billing issues, stock, "
        f"quotas, driver installation, logins): use the Alibaba Cloud console or open a support ticket for that.{facts_en} "
        + HOW_TO_ASK_EN,
        f"问题：gpu-advisor 只为训练或部署作业估算 GPU 服务器（规格、卡数、显存、时间、价格），不回答关于“{said}”的问题"
        f"（发票、退款、账号与账单、库存、配额、驱动安装、登录等），请在阿里云控制台处理或提交工单。{facts_zh}" + HOW_TO_ASK_ZH,
        field="question")


def _refuse_no_job(s: Scanner, assumed: list[Assumed]) -> None:
    """A question about a GPU and nothing else ("我只有 H100，可以在阿里云买到吗？") names no job: answering it with the
    default task's plan would answer another question. Say which GPUs the catalog has instead; the facts of an
    instance type named ("ecs.gn8is-8x.32xlarge 有几张卡"); the cheapest priced types when that is asked."""
    gpu_notes = [h for h in s.hints if h.kind in ("gpu_preference", "gpu_excluded")]
    if not _no_job(s, assumed):
        return
    if not gpu_notes:
        if load_lexicon().keywords["cheapest_listing"].search(s.text):
            from gpu_advisor.ask.catalog_facts import cheapest_types

            cheap_en, cheap_zh = cheapest_types(s)
            raise WorkloadError(f"question: {cheap_en}{HOW_TO_ASK_EN[0].lower()}{HOW_TO_ASK_EN[1:]}",
                                f"问题：{cheap_zh}{HOW_TO_ASK_ZH}", field="question")
        return
    from gpu_advisor.kb.catalog_loader import load_catalog

    from gpu_advisor.plan.preference import resolve_gpu_preference

    catalog = load_catalog()
    named = sorted({g.display_name.removeprefix("NVIDIA ").split(",")[0] for g in catalog.gpus.values()
                    if g.named_by_alibaba})
    families: dict[float, set[str]] = {}
    for t in catalog.instance_types.values():
        g = catalog.gpus.get(t.gpu_id)
        if g is not None and not g.named_by_alibaba and g.memory_gb and t.status in ("current", "sales_only"):
            families.setdefault(g.memory_gb, set()).add(t.family)
    unnamed_en = "; ".join(f"{m:g} GB ({', '.join(sorted(f)[:3])})" for m, f in sorted(families.items()))
    gpu = str(s.fields.get("gpu_preference") or gpu_notes[0].matched)
    try:
        sold = bool(resolve_gpu_preference(catalog, gpu))
    except WorkloadError:
        sold = False
    status_en = (f"{gpu} is in the catalog." if sold else
                 f"{gpu} is not an Alibaba Cloud GPU instance in gpu-advisor's catalog (Alibaba's pages and API do not "
                 "list it by that name).")
    status_zh = (f"目录中有 {gpu}。" if sold else f"gpu-advisor 的阿里云目录中没有 {gpu}（阿里云的页面和 API 未以此名称列出）。")
    from gpu_advisor.ask.catalog_facts import named_gpu_prices

    from gpu_advisor.ask.catalog_facts import named_type_facts

    price_en, price_zh = named_gpu_prices(s, catalog, gpu)
    type_en, type_zh = named_type_facts(s, catalog)
    status_en, status_zh = type_en + status_en + price_en, type_zh + status_zh + price_zh
    raise WorkloadError(
        f"question: {status_en} The GPUs it lists by name: {', '.join(named)}; GPUs Alibaba does not name, by memory: "
        f"{unnamed_en}. To get a recommendation, say what you want to train or serve (model, data), e.g. 'fine-tune "
        f"Llama 3.1 8B with LoRA on {gpu}'.",
        f"问题：{status_zh}目录按型号列出的 GPU：{'、'.join(named)}；阿里云未公布型号的 GPU（按显存）：{unnamed_en}。"
        f"如需推荐配置，请说明要训练或部署什么（模型、数据），例如“用 {gpu} LoRA 微调 Llama 3.1 8B”。", field="question")


def _served_alignment(s: Scanner) -> None:
    """"部署用 GRPO 训练过的 Qwen", "serve the RLHF-tuned Llama": the method says how the served model was made."""
    method = s.fields.get("_alignment")
    if method is None or s.fields.get("task") != "inference":
        return
    del s.fields["_alignment"]
    from gpu_advisor.ask.parsed import Unused

    why = Text(en=f"{method}: how the served model was trained; it sizes nothing here",
               zh=f"{method}：所部署模型的训练方式；不影响此处的估算")
    s.unused = [Unused(u.matched, why) if u.why.en.startswith(f"{method}: a preference") else u for u in s.unused]
    said = [h for h in s.hints if h.kind == "alignment"]   # an offline method, said as used: not when serving
    s.hints = [h for h in s.hints if h.kind != "alignment"]
    s.unused += [Unused(h.matched, why) for h in said]


def _refuse_unsupported(s: Scanner) -> None:
    """A question about a model family the knowledge base has no profile for (and no model it has) is refused:
    answering it as the default task would size a different job. An entry marked any_model (pose estimation, 3D
    segmentation) is refused even with a known model named: HRNet-W48 is known as a backbone, not with a keypoint head."""
    unknown = {u.text for u in s.unresolved}   # a name the registry lacks ("CogVideoX-5B") names no known model
    named = {f for f in ("model", "backbone") if f in s.fields and s.fields[f] not in unknown}
    serving = s.first(load_lexicon().keywords["inference"]) is not None
    step_en, step_zh = ("serve one request at the batch you need", "按所需批大小实测一次推理") if serving else \
        ("run one training step", "实测一步训练")
    # an unknown name is refused as the family only when the name is of the family ("CogVideoX-5B"), not when the
    # family's word is elsewhere ("InternVL2.5-8B on my OCR dataset": an unknown VLM, refused with the closest names)
    where = s.fields["model"] if not named and s.fields.get("model") in unknown else s.text
    for entry in load_lexicon().unsupported:
        if (named and not entry.extra.get("any_model")) or not entry.pattern.search(where):
            continue
        known_en = known_zh = ""
        if named:
            name = s.fields.get("model") or s.fields.get("backbone")
            known_en = f" ({name} is known only as a classification / segmentation / detection network)"
            known_zh = f"（{name} 在知识库中只用于分类、分割或检测网络）"
        raise UnknownModelError(
            f"model: gpu-advisor has no memory profile for {entry.value}{known_en}: its knowledge base covers vision "
            "models (segmentation, detection, classification) and transformer language models, so it cannot size this "
            f"job. Name a model it covers, or {step_en} and read torch.cuda.max_memory_allocated().",
            f"模型：知识库中没有{entry.extra['zh']}的显存模型{known_zh}（目前覆盖视觉模型——分割、检测、分类——以及 "
            f"Transformer 语言模型），无法估算该作业。请换用知识库中的模型，或{step_zh}并读取 "
            "torch.cuda.max_memory_allocated()。", field="model")


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

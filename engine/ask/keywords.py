"""Extractors driven by the keyword tables of knowledge/ask/lexicon.yaml: models, backbones, datasets,
regions, enum choices (precision, LoRA, ...), yes/no flags, and the task and stage."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from gpu_advisor.ask.lexicon import FLAGS, Entry, Lexicon, load_lexicon
from gpu_advisor.ask.parsed import Scanner, Understood
from gpu_advisor.ask.vocab import QUANT_WORDS, find_names, find_unresolved
from gpu_advisor.kb.models import knowledge

LLM_TASKS = ("llm_finetune", "llm_pretrain")


def _earliest(s: Scanner, entries: tuple[Entry, ...]) -> tuple[Entry, re.Match[str]] | None:
    """The entry whose pattern matches first in the text (ties: table order)."""
    best: tuple[Entry, re.Match[str]] | None = None
    for entry in entries:
        m = s.first(entry.pattern)
        if m and (best is None or m.start() < best[1].start()):
            best = (entry, m)
    return best


def _variant(entry: Entry, m: re.Match[str]) -> str:
    groups = m.groupdict()
    var = groups.get("var") or groups.get("var2")
    fam = groups.get("fam")
    if fam:
        base = {"bert": "BERT", "roberta": "RoBERTa", "macbert": "MacBERT"}[fam.lower()]
        return f"{base}-{var.lower()}" if var else base
    if not var:
        return entry.value
    mapped = entry.extra.get("variant_map", {}).get(var.lower())
    if mapped:
        return str(mapped)
    if entry.value == "YOLO":
        return f"YOLO{var.lower()}" if var.lower().startswith("v") else f"YOLO{var.upper()}"
    return f"{entry.value}-{var.upper() if len(var) <= 3 else var.capitalize()}"


PANOPTIC_METHODS = ("mask2former", "maskformer")
VISION_TASKS = ("semantic_segmentation", "instance_segmentation", "panoptic_segmentation", "object_detection",
                "image_classification")
PEFT_OTHER = re.compile(r"p[\s-]*tuning(?:\s*v2)?|prefix[\s-]*tuning|prompt[\s-]*tuning|\bia3\b|adapter[\s-]*tuning",
                        re.IGNORECASE)


def implied_task(pool: str, key: str) -> str | None:
    """The task a known model implies when the question names none (from its knowledge-base family)."""
    kb = knowledge()
    if pool == "transformers":
        return "nlp_finetune" if kb.transformers[key].family == "encoder_nlp" else "llm"
    if pool != "methods":
        return None
    method = kb.methods[key]
    if key in PANOPTIC_METHODS:
        return "panoptic_segmentation"
    if method.family in ("cnn_segmentation", "transformer_segmentation", "prototype"):
        return "semantic_segmentation"
    if method.family == "classification":
        return "image_classification"
    if method.family == "detection":
        return "instance_segmentation" if "mask" in key or method.mask_logit_rois else "object_detection"
    return None


def _drop_model(s: Scanner) -> None:
    s.fields.pop("model", None)
    s.resolved.pop("model", None)
    s.understood[:] = [x for x in s.understood if x.field != "model"]


def extract_names(s: Scanner) -> str | None:
    """Models and backbones the knowledge base knows (gpu_advisor.ask.vocab), then model-family words it does not
    know (unresolved: said back and refused, never replaced). Returns the task the first model implies."""
    implied: str | None = None
    sized: list[Any] = []          # known names followed by a size of their own: unresolved (vocab.find_names)
    not_alias = [f for f in load_lexicon().families if f.not_alias]
    for span in find_names(s.text, sized):
        longer = next((m for f in not_alias if (m := f.pattern.match(s.text, span.start)) and m.end() > span.end), None)
        if longer is not None:   # "SAM 2": another network than the known "SAM" it starts with
            from gpu_advisor.ask.vocab import Unresolved
            sized.append(Unresolved(span.start, longer.end(), longer.group(0), "vision"))
            continue
        s.taken.append((span.start, span.end))
        field = "backbone" if span.pool == "backbones" else "model"
        if field in s.fields:
            s.note_unused(span.text, f"a second {field} name; only the first one named is sized",
                          f"第二个{'骨干网络' if field == 'backbone' else '模型'}名称；只按第一个估算")
            if field == "model":
                s.fields.setdefault("_other_models", []).append((span.pool, span.key, span.text))
            continue
        s.set(field, span.text, s.text[span.start:span.end])   # said back as written ("DeepSeek-V3 671B")
        s.resolved[field] = (span.pool, span.key)
        if field == "model" and _task_word(span.text):
            s.fields["_generic_model"] = True  # "classification": a task word, no name; a real name beside it wins
        written = s.text[span.start:span.end]
        for word in re.findall(r"[A-Za-z0-9]+", written.lower()):
            if word in QUANT_WORDS:
                s.set("quantization", QUANT_WORDS[word], written, claim=False)
            elif word == "fp8":
                s.set("precision", "fp8", written, claim=False)
        if field == "model":
            implied = implied_task(span.pool, span.key) or implied  # the model's task, also when a backbone came first
    for u in [u for u in sized if u.kind == "backbone"]:
        # "ResNeXt-101 64x8d", "ConvNeXt XL": the backbone as written; `estimate` refuses it naming the closest
        # backbones it has, never the family's other size
        s.taken.append((u.start, u.end))
        if "backbone" in s.fields:
            s.note_unused(u.text, "a second backbone name; only the first one named is sized", "第二个骨干网络名称；只按第一个估算")
        else:
            s.set("backbone", u.text, u.text)
    sized = [u for u in sized if u.kind != "backbone"]
    if s.fields.get("_generic_model") and "backbone" in s.fields:
        # "Deploy ResNet-50 for image classification": the task word is no model; the named backbone is the network
        # (sized with the task's generic head), said back as the backbone, not as a model called "classification"
        _drop_model(s)
    for u in [*sized, *find_unresolved(s.text, [*s.taken, *((u.start, u.end) for u in sized)])]:
        s.taken.append((u.start, u.end))
        if s.fields.get("_generic_model") and not s.unresolved:
            # "Fine-tune DINOv2 ViT-L/14 for classification": the task word is no model; the unknown name is the one
            # meant, refused as such, never sized as a generic classifier
            _drop_model(s)
        if "model" in s.fields:
            s.note_unused(u.text, "a model name the knowledge base does not know, beside a known one",
                          "知识库中没有的模型名，问题中另有已知模型")
            continue
        s.set("model", u.text, u.text)
        s.unresolved.append(u)
        if u.kind == "llm":
            implied = implied or "llm"
            s.fields["_llm_family"] = u.text
        elif u.task:
            implied = implied or u.task
    if implied is None and "backbone" in s.fields and "model" not in s.fields:
        implied = "image_classification"  # a backbone alone ("ResNet-50"): a classifier of that backbone
    return implied


PRETRAINED_NEAR = re.compile(r"pre[\s-]*trained|预训练(?:权重|模型|的)|权重|weights|checkpoint|初始化|init", re.IGNORECASE)


@lru_cache(maxsize=1)
def named_datasets() -> tuple[tuple[dict[str, Any], re.Pattern[str]], ...]:
    """knowledge/datasets.yaml `named`: each dataset's facts and one compiled pattern."""
    from gpu_advisor.plan.defaults import _dataset_file

    rows = _dataset_file().get("named", [])
    return tuple((row, re.compile("|".join(f"(?:{p})" for p in row["patterns"]), FLAGS)) for row in rows)


def extract_dataset(s: Scanner, lex: Lexicon) -> None:
    """The first named dataset (knowledge/datasets.yaml): its classes and images are applied after the numbers,
    so that a count the question states wins (parser._tidy). A dataset named as the source of pretrained weights
    ("ImageNet-pretrained") sets nothing and is said back as not used."""
    best = None
    for row, pattern in named_datasets():
        m = s.first(pattern)
        if m and (best is None or m.start() < best[1].start()):
            best = (row, m)
    if not best:
        return
    row, m = best
    s.claim(m)
    around = s.text[max(0, m.start() - 10):m.end() + 14]
    if PRETRAINED_NEAR.search(around):
        s.note_unused(m.group(0), f"{row['name']} named as the source of pretrained weights, not the training set",
                      f"{row['name']} 是预训练权重的来源，不是训练数据集")
        return
    s.fields["_dataset"] = (row, m.group(0).strip())
    s.hint("dataset", m, f"Dataset {row['name']}: {row['num_classes']:,} classes, {row['num_samples']:,} training "
           f"images ({row['source'].split(';')[0]}).",
           f"数据集 {row['name']}：{row['num_classes']:,} 类，{row['num_samples']:,} 张训练图像（{row['source'].split(';')[0]}）。",
           claim=False)


def extract_region(s: Scanner, lex: Lexicon) -> None:
    found = _earliest(s, lex.regions)
    if found:
        entry, m = found
        s.set("region", entry.value, m)
        if entry.extra.get("note_en"):  # a name that covers several regions: the one taken is said back
            said = m.group(0).strip()
            s.hint("region", m, entry.extra["note_en"].format(m=said), entry.extra["note_zh"].format(m=said), claim=False)


NEGATOR = re.compile(r"(?:\bnot|\bno|\bwithout|\binstead of|\brather than|\bnon|\bnever|\bdon'?t use|\bdisabl(?:e|ed|ing)|"
                     r"\bturn(?:ed|ing)? off|\bswitch(?:ed|ing)? off|不是|不用|不要|无需|不需要|别用|别|非|不做|不走|不采用|关闭|关掉|禁用|不)"
                     r"\s*(?:use|using|with|do|doing|enable|enabling|用|使用|做|采用|走|会用|开|开启|启用|打开)?\s*[-:：]?\s*$",
                     re.IGNORECASE)
OFFLOAD = re.compile(r"(?:cpu|zero)[\s-]*offload\w*|\boffload(?:ing)?\b(?!\s*activations?)|卸载到\s*(?:cpu|内存)|offload\s*到\s*(?:cpu|内存)",
                     re.IGNORECASE)
ACT_OFFLOAD = re.compile(r"activation[\s_-]*offload\w*|offload(?:ing)?\s*(?:the\s*)?activations?|激活\s*(?:值)?\s*卸载", re.IGNORECASE)
CLAUSE_END = re.compile(r"[,，。;；!?！？()（）]")
NO_QUANT = re.compile(r"(?:\bwithout|\bno|\bnot|\bnon|不|无|不做|不用|不要)\s*(?:any\s*)?(?:weight\s*)?(?:quantization|quantized|quantizing|量化)",
                      re.IGNORECASE)


def negated(s: Scanner, start: int) -> int | None:
    """Where the negator right before the span starts, inside its clause ("not LoRA", "不是 LoRA", "(not LoRA)");
    None when the span is not negated."""
    lo = max(0, start - 20)
    before = s.text[lo:start]
    clause = CLAUSE_END.split(before)[-1]
    m = NEGATOR.search(clause)
    return None if m is None else start - len(clause) + m.start()


def extract_enums(s: Scanner, lex: Lexicon) -> None:
    """precision, finetune_method, quantization, optimizer, distributed: the first listed entry that matches and is
    not negated. A negated choice is said back as not used; "not LoRA" with no other method means a full fine-tune."""
    if m := s.first(NO_QUANT):
        s.set("quantization", "none", m, claim=True)
    for field, entries in lex.enums.items():
        negated_entries: list[tuple[Entry, re.Match[str]]] = []
        for entry in entries:
            chosen = None
            for m in s.matches(entry.pattern):
                neg = negated(s, m.start())
                if neg is not None:
                    negated_entries.append((entry, m))
                    s.claim(m)
                    s.note_unused(s.text[neg:m.end()], f"negated: not {entry.value}", f"否定：不是 {entry.value}")
                    continue
                chosen = m
                break
            if chosen is not None and any(f in s.fields for f in entry.extra.get("unless", ())):
                continue     # an implied value (Ollama's default 4-bit tags) yields to a stated one
            if chosen is not None:
                s.set(field, entry.value, chosen, claim=False)
                _switched_choice(s, entries, chosen)
                if "note_en" in entry.extra:   # a value the words imply, not state: said as such
                    s.hint(f"implied_{field}", chosen, entry.extra["note_en"], entry.extra["note_zh"], claim=False)
                break
        if field == "finetune_method" and field not in s.fields and any(
                e.value in ("lora", "qlora") for e, _ in negated_entries):
            entry, m = next((e, m) for e, m in negated_entries if e.value in ("lora", "qlora"))
            s.set(field, "full", s.text[negated(s, m.start()) or m.start():m.end()], claim=False)


# "KV cache 用 fp8", "fp8 KV cache", "--kv-cache-dtype fp8", "KV 缓存 fp8": the KV cache's dtype, not the weights'
KV_DTYPE = re.compile(r"(?:kv[\s_-]*cache(?:[\s_-]*dtype)?|kv\s*缓存)\s*(?:用|使用|采用|量化为|量化成|量化到|设为|为|是|in|=|:|at|to)?\s*"
                      r"(?P<a>fp8(?:_e4m3|_e5m2)?|fp16|bf16)\b|(?P<b>fp8|fp16|bf16)\s*(?:的)?\s*(?:kv[\s_-]*cache|kv\s*缓存)",
                      re.IGNORECASE)
KV_VALUES = {"fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "fp16": "fp16", "bf16": "bf16"}


def _switched_choice(s: Scanner, entries: tuple[Entry, ...], chosen: re.Match[str]) -> None:
    """"int8，那如果换成 int4 呢", "LoRA 微调…换成全参呢": another choice of the same table in a clause that switches to it
    replaces the first one (Scanner.set says the first back as replaced). A span an earlier-listed entry also matches
    ("Q-LoRA" for lora) is that entry's, not a second choice."""
    seen: list[tuple[int, int]] = [chosen.span()]
    for entry in entries:
        for m in s.matches(entry.pattern):
            if any(m.start() < hi and lo < m.end() for lo, hi in seen):
                continue
            seen.append(m.span())
            if negated(s, m.start()) is None and s.switched(m):
                s.set(next(f for f, es in load_lexicon().enums.items() if es is entries), entry.value, m, claim=False)
                return


def extract_kv_dtype(s: Scanner) -> None:
    """The KV cache's dtype said with its own words; the dtype word is claimed so that it does not also set the
    weights' precision."""
    if m := s.first(KV_DTYPE):
        word = (m.group("a") or m.group("b")).lower()
        s.set("kv_cache_dtype", KV_VALUES[word], m)


def extract_peft_other(s: Scanner) -> None:
    """A preference / RL method (lexicon ``alignment``, the first row that matches): kept in the private field
    ``_alignment`` for gpu_advisor.ask.alignment, which says what the method adds to the supervised fine-tuning
    figures (offline) or refuses with a derived floor (online: rollouts)."""
    for entry in load_lexicon().alignment:
        if (m := s.first(entry.pattern)) is None:
            continue
        if "_alignment" not in s.fields:
            s.fields["_alignment"] = entry.value   # private: never a Workload field, never in what-I-understood
            s.claim(m)
            kind_en = "generates rollouts while training" if entry.extra.get("kind") == "online" else "trains on fixed examples"
            kind_zh = "训练中在线生成 rollout" if entry.extra.get("kind") == "online" else "在固定样本上训练"
            if entry.extra.get("kind") == "offline":   # used: sized as supervised fine-tuning plus what it adds
                s.hint("alignment", m, f"{entry.value}: a preference method ({kind_en}); sized as fine-tuning of the "
                       "same model plus what it adds (its sequences per sample, a reference model), stated with the answer",
                       f"{entry.value}：偏好方法（{kind_zh}）；按同一模型的微调估算，并计入它增加的部分（每个样本的序列数、"
                       "参考模型），随答案给出")
            else:
                s.note_unused(m.group(0), f"{entry.value}: a preference / RL method ({kind_en}); what it adds to supervised "
                              "fine-tuning of the same model is stated with the answer",
                              f"{entry.value}：偏好 / 强化学习方法（{kind_zh}）；它在同一模型监督微调之上增加的部分随答案给出")
        else:
            s.claim(m)
    if m := s.first(PEFT_OTHER):
        s.claim(m)
        s.note_unused(m.group(0), "a parameter-efficient method gpu-advisor has no memory model for (it trains a small "
                      "set of prompt / adapter weights on frozen weights, like LoRA); the estimate uses the stated or "
                      "default fine-tune method: ask again with LoRA for a close figure",
                      "gpu-advisor 没有该参数高效方法的显存模型（与 LoRA 类似，只在冻结权重上训练少量提示 / 适配器参数）；"
                      "估算按问题中给出的或默认的微调方法：如需接近的数字，请按 LoRA 再问一次")


def extract_flags(s: Scanner, lex: Lexicon) -> None:
    kw = lex.keywords
    if m := s.first(kw["no_rdma"]):   # "没有RDMA": said back with the answer's inter-node verdict (ask/network.py)
        s.hint("no_rdma", m, "Your machines have no RDMA: the answer says what that means for this job over TCP.",
               "你的机器没有 RDMA：答案会说明本作业走 TCP 的影响。")
    if m := s.first(kw["single_node"]):   # "不用多机", "single machine only": one instance (ask/api.one_machine)
        s.hint("single_node", m, "One machine only, as asked: a plan on several machines is replaced by the one that fits "
               "one machine, or the answer says none does.", "按要求只用一台机器：多机方案会换成单机方案；单机放不下时会说明。",
               claim=False)
    no, yes = s.first(kw["interruptible_no"]), s.first(kw["interruptible_yes"])
    if no:
        s.set("interruptible", False, no)
    elif yes and (neg := negated(s, yes.start())) is not None:   # "without spot instances", "不用抢占式"
        s.set("interruptible", False, s.text[neg:yes.end()], claim=False)
        s.claim(yes)
    elif yes:
        s.set("interruptible", True, yes, claim=False)
    offloads = [m for m in s.matches(OFFLOAD) if not re.search(r"(?:activation|激活)[\s_-]*$", s.text[:m.start()], re.I)]
    if offloads:
        m = offloads[0]
        neg = negated(s, m.start())
        s.set("cpu_offload", neg is None, m if neg is None else s.text[neg:m.end()], claim=False)
    if m := s.first(ACT_OFFLOAD):
        s.set("activation_offloading", True, m, claim=False)
    if m := s.first(kw["checkpointing"]):   # "without gradient checkpointing", "不开梯度检查点": off
        neg = negated(s, m.start())
        s.set("gradient_checkpointing", neg is None, m if neg is None else s.text[neg:m.end()], claim=False)
    if m := s.first(kw["heavy_aug"]):
        s.set("augmentation", "heavy", m, claim=False)
    elif m := s.first(kw["light_aug"]):
        s.set("augmentation", "light", m, claim=False)


def extract_task(s: Scanner, lex: Lexicon, implied: str | None) -> None:
    """Task from explicit words, else from the model / LLM family / size; inference wins unless training is said."""
    kw = lex.keywords
    explicit = _earliest_task(s, lex)
    if explicit and implied in ("nlp_finetune", "llm") and explicit[0] in VISION_TASKS:
        # "BERT 中文分类模型": the named text model is more specific than a generic task word
        s.note_unused(explicit[1].group(0), f"read as the task of the named model ({implied}), not {explicit[0]}",
                      f"按所述模型的任务（{implied}）理解，而不是 {explicit[0]}")
        explicit = None
    task, m = explicit if explicit else (implied, None)
    sized_lm = "params_billion" in s.fields and "training_tokens_billion" in s.fields  # "a 350M model on 30B tokens"
    if task is None and ("_llm_family" in s.fields or s.fields.get("params_billion", 0) >= 1 or sized_lm
                         or "_alignment" in s.fields):   # DPO / GRPO train language models
        task = "llm"
    _negated_verbs(s, kw)
    if s.first(kw["inference"]):   # "部署微调后的 Qwen": how the served model was made, not the job
        for made in list(s.matches(kw["trained_model"])):
            s.claim(made)
            s.note_unused(made.group(0), "how the model was trained: the question is about serving it",
                          "模型是如何训练出来的：问题问的是部署它")
    pretrain, finetune = s.first(kw["pretrain"]), s.first(kw["finetune"])
    if pretrain and (PRETRAINED_STRICT.match(s.text, pretrain.end())
                     or (finetune and PRETRAINED_WEIGHTS.match(s.text, pretrain.end()))):
        # "在 ImageNet 预训练权重上微调", "train a pretrained ResNet-50 on 5k images": the weights a job starts from
        # (a fine-tune of them), not the stage
        finetune = finetune or (pretrain if s.first(kw["training"]) else None)
        pretrain = None
    if task == "llm":
        task = "llm_pretrain" if pretrain else "llm_finetune"
    infer, train = s.first(kw["inference"]), s.first(kw["training"])
    trained = bool(train or pretrain or finetune or TRAINING_FIELDS & set(s.fields))
    if not infer and not trained:
        # a serving word that is also said of training ("run", "跑"), a serving load, what the model is used for
        # ("做代码助手", "a chatbot for our team"), or an embedder / reranker named without a training word:
        # serving only when nothing in the question says training
        infer = (s.first(kw["inference_weak"]) or s.first(kw["serving_use"]) or _serving_load(s)
                 or (None if explicit else _served_encoder(s)))
    if not infer and not (train or pretrain or finetune or (TRAINING_FIELDS - {"num_samples"}) & set(s.fields)):
        infer = s.first(kw["offline_inference"])   # "classify 2M images": the count is the inputs of one pass
    if (not infer and not trained and task == "llm_finetune" and s.fields.get("model")
            and "_alignment" not in s.fields):
        # a named language model with no training word and no serving word ("DeepSeek-V3 FP8 需要几台 H20"): most such
        # questions ask what serves it, and serving is the smaller, more common job; said in the answer (parser)
        said = _implied_source(s)
        s.set("stage", "serve", said, claim=False)
        s.set("task", "inference", said, claim=False)
        s.fields["_task_unstated"] = "serve"
        _stage(s, lex, pretrain, finetune)
        return
    if infer and not train:
        s.set("stage", "serve", infer, claim=False)
        task, m = "inference", infer
        model_said = next((u.matched for u in s.understood if u.field == "model"), None)
        task_said = next((u.matched for u in s.understood if u.field == "task"), None)
        if s.fields.get("task") not in (None, "inference") and task_said is not None and task_said == model_said:
            # the task was only the named model's own ("Classify 2 million images with ResNet-50"): the job serves it
            s.fields["task"] = "inference"
            s.understood[:] = [Understood("task", "inference", infer.group(0).strip()) if u.field == "task" else u
                               for u in s.understood]
    if task:
        s.set("task", task, m or _implied_source(s), claim=False)
        if not trained and task not in ("preprocessing", "inference"):
            # no verb says training or serving: the training default is said in the answer (parser._assume); read
            # from the model alone (m None), the task itself is an assumption the terminal asks about
            s.fields["_task_unstated"] = "model" if m is None else "word"
    _stage(s, lex, pretrain, finetune)


# what follows "预训练" / "pre-trained" when it names the starting weights of a fine-tune, not the stage
PRETRAINED_STRICT = re.compile(r"ed\b|好的|过的|(?:的)?\s*(?:权重|checkpoints?|ckpt|weights?)", re.IGNORECASE)
PRETRAINED_WEIGHTS = re.compile(r"ed\b|好的|过的|(?:的)?\s*(?:权重|模型|参数|checkpoints?|ckpt|weights?|models?|backbones?)",
                                re.IGNORECASE)
STAGE_VERBS = ("pretrain", "finetune", "training", "inference")
NOT_WANT = re.compile(r"(?:don'?t|do not|doesn'?t|won'?t|not|no)\s+(?:want|need|plan|going)\s+to\s+$|(?:不想|不打算|不需要|不必|无需)\s*$",
                      re.IGNORECASE)


def _negated_verbs(s: Scanner, kw: dict[str, re.Pattern[str]]) -> None:
    """"不做微调，直接推理", "I don't want to fine-tune, just serve", "not training, only inference": a negated task verb
    is claimed (so it cannot decide the task) and said back."""
    for name in STAGE_VERBS:
        for m in list(s.matches(kw[name])):
            neg = negated(s, m.start())
            lo = max(0, m.start() - 24)
            wish = NOT_WANT.search(s.text, lo, m.start())
            if neg is None and wish is None:
                continue
            start = neg if neg is not None else wish.start()
            s.claim(m)
            s.note_unused(s.text[start:m.end()].strip() or m.group(0), f"negated: not {name}", f"否定：不是{ {'pretrain': '预训练', 'finetune': '微调', 'training': '训练', 'inference': '推理 / 部署'}[name]}")


# fields only a training job has: with one of them a serving word ("run", "跑") does not make the job serving
TRAINING_FIELDS = frozenset({"finetune_method", "lora_rank", "epochs", "training_tokens_billion", "num_samples",
                             "optimizer", "gradient_checkpointing", "deadline_hours", "dataset_size_gb", "_dataset",
                             "_iters"})


def _served_encoder(s: Scanner) -> str | None:
    """A text-embedding or reranker model named with no training word ("用 bge-large-zh-v1.5 做向量检索服务"): such a
    model is deployed to encode or score text, so the job is serving it (the profile's role); the name is the source."""
    pool, key = s.resolved.get("model", (None, None))
    if pool != "transformers" or key is None or knowledge().transformers[key].role is None:
        return None
    return next((u.matched for u in s.understood if u.field == "model"), None)


def _serving_load(s: Scanner) -> str | None:
    """The words of a serving load the question states (concurrent users, a request rate, the people a model is for:
    "给公司200名员工用", a weight quantization without a training word): a serving job."""
    for u in s.understood:
        if u.field in ("concurrent_users", "requests_per_second", "output_tokens"):
            return u.matched
        if u.field == "quantization" and u.value != "nf4":   # "不量化", "int8": a choice of weights to serve
            return u.matched
    others = s.fields.get("_other_models")   # two models put on one card / machine ("A 和 B 放在同一张 L20 上"): served
    if others and (m := load_lexicon().keywords["colocate"].search(s.text)):   # also over a claimed GPU count
        return m.group(0)
    population = s.fields.get("_population")   # a head count matters only to a service: people use a served model
    if population:
        return population[1]
    return s.fields.get("_serving_prompt")   # "2k prompts", "4k-token prompts": the prompts a service is sent


def _earliest_task(s: Scanner, lex: Lexicon) -> tuple[str, re.Match[str]] | None:
    for entry in lex.tasks:  # table order is priority order
        m = s.first(entry.pattern)
        if m:
            return entry.value, m
    return None


def _implied_source(s: Scanner) -> str:
    """The user's words the task was read from: the model, backbone or size they named (never a field name)."""
    for field in ("model", "backbone", "params_billion"):
        said = next((u.matched for u in s.understood if u.field == field), None)
        if said:
            return said
    return str(s.fields.get("model") or s.fields.get("_llm_match") or "params_billion")


def _stage(s: Scanner, lex: Lexicon, pretrain: re.Match[str] | None, finetune: re.Match[str] | None) -> None:
    if pretrain:
        s.set("stage", "pretrain", pretrain, claim=False)
    elif finetune or s.fields.get("finetune_method"):
        s.set("stage", "finetune", finetune or str(s.fields["finetune_method"]), claim=False)
    elif m := s.first(lex.keywords["prototype"]):
        s.set("stage", "prototype", m, claim=False)


def run_keywords(s: Scanner) -> str | None:
    """Names first (they claim "R-50", "Llama 3.1" before numbers can), then regions and enums.
    Returns the task implied by a named model."""
    lex = load_lexicon()
    implied = extract_names(s)
    extract_dataset(s, lex)
    extract_region(s, lex)
    extract_peft_other(s)
    extract_kv_dtype(s)
    extract_enums(s, lex)
    extract_flags(s, lex)
    return implied


# a name-shaped word: joined parts ("Zeta-LM", "my_model.v2"), letters with digits ("Foo7"), or inner capitals
# ("ZetaLM"); it must carry a capital or a digit, so that hyphenated English ("real-time") is not a name
NAME_SHAPED = re.compile(r"(?<![\w.\-/])(?=[A-Za-z0-9._\-]*[A-Z0-9])[A-Za-z][A-Za-z0-9]*(?:(?:[-_.][A-Za-z0-9]+)+|"
                         r"(?<=[a-z])[A-Z][A-Za-z0-9]*|\d[A-Za-z0-9]*)(?![\w\-])", re.ASCII)
# "classification" / "分类" alone is also a text task (BERT sentiment, intent): it does not make a name a vision model
VISION_WORDS = re.compile(r"图|image|picture|photo|video|视频|检测|分割|detect|segment|(?:图像|图片)分类", re.IGNORECASE)


def _vocabulary(lex: Lexicon) -> list[re.Pattern[str]]:
    out = [lex.gpus, *lex.keywords.values(), *(e.pattern for e in lex.regions), *(e.pattern for e in lex.tasks),
           *(e.pattern for e in lex.unsupported), *(f.pattern for f in lex.families)]
    out += [e.pattern for entries in lex.enums.values() for e in entries]
    return out


def _task_word(text: str) -> bool:
    """The text is a task word of the lexicon in full ("classification", "detector"), not a model's name."""
    return any(e.pattern.fullmatch(text.strip()) for e in load_lexicon().tasks)


def extract_generic_name(s: Scanner, lex: Lexicon) -> None:
    """A name-shaped word that is no known model, family, tool, GPU, region or unit, in a question that names no
    model the knowledge base knows ("serve Zeta-LM (70B)"): it is the model the user means. It is said back as the
    model and refused, or, with the size stated, sized with a generic shape of its own name (parser: unresolved);
    never dropped, so that the answer cannot read as one about another model."""
    generic = bool(s.fields.get("_generic_model")) and "backbone" not in s.fields
    if {"model", "backbone"} & set(s.fields) and not generic:
        return
    if any(e.pattern.search(s.text) for e in lex.unsupported):
        return  # "Whisper large-v3": a family without a profile, refused as such (parser._refuse_unsupported)
    candidates = [m for m in NAME_SHAPED.finditer(s.text) if s._free(m.start(), m.end())]
    if not candidates:
        return
    vocab = bytearray(len(s.text))        # one pass of each vocabulary pattern, then a lookup per candidate: linear
    for p in _vocabulary(lex):
        for v in p.finditer(s.text):
            vocab[v.start():v.end()] = b"\x01" * (v.end() - v.start())
    for m in candidates:
        # a word that starts with a known term ("A100-80G", "vLLM-0.6") is that term; a version or unit inside a
        # name ("deberta-v3-base", "MyNet-v2") does not make the name a tool
        if vocab[m.start()] or all(vocab[m.start():m.end()]):
            continue
        from gpu_advisor.ask.vocab import Unresolved

        surface = m.group(0)
        kind = "vision" if "params_billion" not in s.fields and VISION_WORDS.search(s.text) else "llm"
        if generic:  # "deberta-v3-base ... for classification": the name is the model, the task word is not one
            s.fields.pop("model", None)
            s.resolved.pop("model", None)
            s.understood[:] = [u for u in s.understood if u.field != "model"]
        s.claim(m)
        s.set("model", surface, surface)
        s.unresolved.append(Unresolved(m.start(), m.end(), surface, kind))
        if kind == "llm":
            s.fields["_llm_family"] = surface
        return


LOCAL_HARDWARE = re.compile(r"\bmac\s*(?:book|mini|studio)?(?:\s*(?:pro|air))?\b(?:\s*m[1-4](?:\s*(?:pro|max|ultra))?\b)?|"
                            r"\bapple\s*(?:silicon|m[1-4])\b|\bm[1-4]\s*(?:pro|max|ultra)\b|苹果电脑|苹果\s*m[1-4]|"
                            r"(?:我的|自己的|本地|家里的?)\s*(?:笔记本|电脑|台式机|主机)|\b(?:my|a|on (?:my|a))\s+(?:laptop|desktop|home pc|gaming pc)\b|"
                            r"\blaptop\b|笔记本电脑", re.IGNORECASE | re.ASCII)
CPU_ONLY = re.compile(r"\bcpu[\s-]*only\b|\bonly (?:on |use )?(?:the )?cpus?\b|\bwithout (?:a )?gpus?\b|\bno gpus?\b|"
                      r"(?:只用|仅用|纯|只有)\s*cpu|没有\s*(?:gpu|显卡)|不用\s*(?:gpu|显卡)", re.IGNORECASE | re.ASCII)


def _hardware_not_sized(s: Scanner) -> None:
    """A Mac / laptop, or CPU only, for a job gpu-advisor plans on Alibaba Cloud GPUs: said back as not checked,
    never dropped (a GPU plan is no answer about an M2)."""
    if m := s.first(LOCAL_HARDWARE):
        s.claim(m)
        s.note_unused(m.group(0), "local hardware: gpu-advisor sizes Alibaba Cloud GPU instances and does not check a Mac "
                      "or a PC; the memory estimate below is for a CUDA GPU (on Apple silicon the weights and KV cache must "
                      "fit in the unified memory that macOS lets the GPU use)",
                      "本地硬件：gpu-advisor 只估算阿里云 GPU 实例，不核对 Mac 或个人电脑；下面的显存估算针对 CUDA GPU（在 Apple "
                      "芯片上，权重与 KV cache 须放进 macOS 允许 GPU 使用的统一内存）")
    if s.fields.get("task") != "preprocessing" and (m := s.first(CPU_ONLY)):
        s.claim(m)
        s.note_unused(m.group(0), "CPU only: gpu-advisor sizes this job on GPUs (it sizes CPU instances only for data "
                      "preprocessing); the answer below is the GPU plan, not a CPU one",
                      "仅 CPU：gpu-advisor 按 GPU 估算此作业（只有数据预处理才按 CPU 实例估算）；下面是 GPU 方案，不是 CPU 方案")


def finish_task(s: Scanner, implied: str | None) -> None:
    lex = load_lexicon()
    extract_generic_name(s, lex)
    extract_task(s, lex, implied)
    _hardware_not_sized(s)

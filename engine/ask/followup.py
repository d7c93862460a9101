"""A question that only continues an earlier one ("那如果用 4 张卡呢？", "what about 8 GPUs?"): gpu-advisor answers each
question on its own and keeps no conversation, so a follow-up that names no job (no task, model or backbone of its own)
is refused with what to restate, never answered with the default image-classification plan."""

from __future__ import annotations

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.errors import WorkloadError

# what a question must state for the job to be its own (any one of them)
JOB_FIELDS = ("task", "model", "backbone", "method", "params_billion")


def follow_up_error(parsed: ParsedQuestion) -> WorkloadError | None:
    """The refusal for a follow-up with no job of its own (the lexicon's follow_up cue at the start, nothing of
    JOB_FIELDS stated), or None."""
    from gpu_advisor.ask.lexicon import load_lexicon

    cue = load_lexicon().keywords.get("follow_up")
    if cue is None or cue.search(parsed.text) is None or parsed.stated() & set(JOB_FIELDS):
        return None
    kept = sorted(parsed.stated())
    kept_en = f" (this question gave: {', '.join(kept)})" if kept else ""
    kept_zh = f"（本次问题给出的：{'、'.join(kept)}）" if kept else ""
    return WorkloadError(
        "question: this reads as a follow-up to an earlier question, but gpu-advisor answers each question on its own "
        f"and keeps no conversation{kept_en}. Say what to size, in one question: the model and whether to train or serve it, "
        "e.g. 'LoRA fine-tune Qwen2.5-7B on 4 A10s: how long?' or 'serve Llama-3.1-8B to 50 users on L20'.",
        "问题：这句话像是接着上一个问题问的，但 gpu-advisor 每次只看本次的问题，不保留对话"
        f"{kept_zh}。请说明要估算的作业，并一起写进问题：模型，以及训练还是部署，例如“用 4 张 A10 LoRA 微调 Qwen2.5-7B 要多久？”"
        "或“用 L20 部署 Llama-3.1-8B 给 50 个用户”。",
        field="question")

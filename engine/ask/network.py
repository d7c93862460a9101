""""没有RDMA" / "no RDMA": the question says the machines have no RDMA network. The answer's first lines say what
that means for the job, in the answer's own inter-node verdict (rules NET-MULTINODE / NET-TCP-OK, figures from
costing/internode.py): a job on one instance needs none; across instances the step over TCP against its compute,
and whether RDMA is required."""

from __future__ import annotations

import re
from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util.i18n import Text

NET_RULES = ("NET-MULTINODE", "NET-TCP-OK")


def _net_item(rec: Any) -> Any:
    """The answer's inter-node verdict (NET-MULTINODE / NET-TCP-OK item of the network section), or None."""
    return next((i for i in rec.sections if i.section == "network" and i.rule_id in NET_RULES), None)


def no_rdma_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    if not any(h.kind == "no_rdma" for h in parsed.hints) or getattr(rec, "instance", None) is None:
        return None
    inst = rec.instance
    if inst.nodes <= 1:
        return Text(en=f"No RDMA, as you said: {inst.total_gpus} GPU(s) on one instance need none (the network only "
                       "carries data reads and checkpoints).",
                    zh=f"你说没有 RDMA：{inst.total_gpus} 张卡在单台实例内训练，无需 RDMA（网络只用于读数据和上传检查点）。")
    item = _net_item(rec)
    if item is None:
        return None
    required = item.rule_id == "NET-MULTINODE"
    end_en = (" Over TCP the GPUs would mostly wait on the network: use instances with RDMA / eRDMA, or fewer machines."
              if required else "")
    end_zh = "走 TCP 时 GPU 大部分时间在等网络：请用带 RDMA / eRDMA 的实例，或减少机器数。" if required else ""
    return Text(en=f"No RDMA, as you said: {item.text.en}{end_en}", zh=f"你说没有 RDMA：{item.text.zh}{end_zh}")


def rdma_question_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """"需要 RDMA 吗" / "do we need RDMA?" (the lexicon's rdma_question, not said to be missing): yes when the answer's
    inter-node verdict requires it (NET-MULTINODE), recommended but not required (NET-TCP-OK), none on one instance."""
    from gpu_advisor.ask.lexicon import load_lexicon

    cue = load_lexicon().keywords.get("rdma_question")
    inst = getattr(rec, "instance", None)
    if cue is None or inst is None or not cue.search(parsed.text.lower()) or any(h.kind == "no_rdma" for h in parsed.hints):
        return None
    if inst.nodes <= 1:
        return Text(en=f"RDMA: not needed; {inst.total_gpus} GPU(s) on one instance talk over the machine's own links "
                       "(the network only carries data reads and checkpoints).",
                    zh=f"RDMA：不需要；{inst.total_gpus} 张卡在单台实例内通信（网络只用于读数据和上传检查点）。")
    item = _net_item(rec)
    if item is None:
        return None
    if item.rule_id == "NET-MULTINODE":
        return Text(en=f"RDMA: yes, required. {item.text.en}", zh=f"RDMA：需要，必须。{item.text.zh}")
    return Text(en=f"RDMA: recommended, not required. {item.text.en}", zh=f"RDMA：建议使用，但不是必需。{item.text.zh}")


def rdma_asked_first(parsed: ParsedQuestion) -> bool:
    """Whether the question's first clause asks about RDMA ("Is RDMA needed if I fine-tune … on one 8-GPU machine?"):
    its answer then leads, before the fit verdict."""
    from gpu_advisor.ask.lexicon import load_lexicon

    cue = load_lexicon().keywords.get("rdma_question")
    first = re.split(r"[，。；？！,;?!]", parsed.text.lower(), maxsplit=1)[0]
    return cue is not None and cue.search(first + "?") is not None

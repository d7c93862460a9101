"""The verdict a yes/no question gets first ("4张A10能全量微调7B模型吗？" -> "No: ..." / "Yes: ..."), read from the
recommendation against what the question stated (the GPU model, the GPU count, the machines).

A stated constraint the plan does not keep is a "no" for that constraint, with what holds the job instead; a plan that
keeps every stated constraint is a "yes", with the mitigations it needs (a yes that needs CPU offload is not a plain
yes) and the memory per GPU against the card. Nothing here sizes anything: the plan and its reasons are the advisor's.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util.i18n import Text


# a yes/no question about the job fitting (not "can I use spot?"): GPU words, memory words, "enough", "fit"
FIT_WORDS = re.compile(r"显存|内存|够|放得下|装得下|跑得动|单卡|一张卡|几张|\bfits?\b|\benough\b|\bmemory\b|\bvram\b|\boom\b",
                       re.IGNORECASE)


def _stated_gpus(fields: dict[str, Any]) -> int | None:
    n = fields.get("num_gpus")
    return int(n) if isinstance(n, int | float) and not isinstance(n, bool) else None


def _preference_kept(rec: Any, preference: str) -> bool:
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.preference import resolve_gpu_preference

    wanted = resolve_gpu_preference(load_catalog(), preference)
    return rec.instance is not None and rec.instance.gpu_id in wanted


def _host_ram_reason(rec: Any, preference: str | None) -> Text | None:
    """The planner's reason the asked GPU is no plan when it is the host RAM of its instance types (CPU offload),
    not the GPU's memory; None otherwise."""
    if preference is None or _preference_kept(rec, preference):
        return None
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.plan.preference import resolve_gpu_preference

    cat = load_catalog()
    names = [cat.gpus[g].display_name for g in resolve_gpu_preference(cat, preference) if g in cat.gpus]
    for r in rec.rejected:
        name = next((n for n in names if r.en.startswith(n + ":")), None)
        if name and "host RAM" in r.en:
            return Text(en=r.en, zh=r.zh.replace("：", " ", 1) if r.zh.startswith(name) else r.zh)
    return None


def _asks_oom(parsed: ParsedQuestion) -> bool:
    from gpu_advisor.ask.lexicon import load_lexicon

    pattern = load_lexicon().keywords.get("oom_question")
    return pattern is not None and pattern.search(parsed.text) is not None


def _off_catalog_gpu(parsed: ParsedQuestion) -> str | None:
    """A GPU the question names that the catalog does not sell by that name ("单张 4090 够吗", "one H20"), or None."""
    preference = parsed.workload_fields.get("gpu_preference")
    from gpu_advisor.ask.lexicon import load_lexicon

    if preference is not None and not re.fullmatch(r"\d+GB", str(preference)):
        # a catalog GPU; a memory size alone may stand for a card the catalog lacks ("4090 24G"). A card the user says
        # is theirs beside it ("我们有 4 张 4090，还是租 A10") is still the card the question is about
        from gpu_advisor.kb.owned_gpus import find_owned_gpu

        text = parsed.text.lower()
        for hint in parsed.hints:
            m = load_lexicon().gpus.search(hint.matched) if hint.kind == "gpu_preference" else None
            if m and find_owned_gpu(m.group("gpu")) is not None and owned_cue_before(text, text.find(m.group("gpu").lower())):
                return m.group("gpu").upper().replace(" ", "")
        return None

    for hint in parsed.hints:
        if hint.kind == "gpu_preference" and (m := load_lexicon().gpus.search(hint.matched)):
            return m.group("gpu").upper().replace(" ", "")
    return None


def verdict(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """The first line of the answer to a yes/no question, or None when the question is not one. A question about a
    GPU the catalog does not sell by name gets the verdict on the catalog's cards, said as such: a "yes" on an A10 is
    no answer about a 4090."""
    line = _verdict(parsed, rec)
    off = _off_catalog_gpu(parsed)
    mine = owned_card(parsed)   # "我家里的台式机有一张4090": the PC is checked by the card it holds
    local = next((u for u in parsed.unused if u.why.en.startswith(("local hardware", "CPU only"))), None)
    if line is not None and local is not None and mine is None:   # "Mac M2 上能跑吗": a yes on an A10 is no answer about the Mac
        return Text(en=f"'{local.matched}' cannot be checked: gpu-advisor sizes Alibaba Cloud GPU instances. On those: {line.en}",
                    zh=f"无法核对“{local.matched}”：gpu-advisor 只估算阿里云 GPU 实例。按阿里云 GPU：{line.zh}")
    if off is None and mine is None:
        return line
    if asks_figure(parsed) and mine is not None:
        return None   # "两张4090…多久": the time question's line (ask/asked.py) answers on the card, then the cloud
    # "我有4张4090能跑72B吗": the verdict on the 4090's memory first, then the cloud option; a question that is no
    # yes / no ("用一张4090部署…每秒能出多少token") gets the fit and the speed on the card all the same
    owned = _owned_verdict(parsed, rec, line)
    if owned is None and line is None and off is not None and mine is None and _availability_asked(parsed):
        return Text(en=f"{off}: Alibaba Cloud's catalog has no GPU sold under that name, in this region or any other; "
                       "the plan below uses the catalog's GPUs.",
                    zh=f"{off}：阿里云目录中没有以此命名的 GPU（任何地域都没有记录），下面按目录中的 GPU 给出方案。")
    if owned is not None or line is None or off is None:
        return owned or line
    return Text(en=f"{off} cannot be checked: it is not sold under that name in Alibaba Cloud's catalog. On the "
                   f"catalog's GPUs: {line.en}",
                zh=f"无法核对 {off}：阿里云目录中没有以此命名的 GPU。按目录中的 GPU：{line.zh}")


LEAD_BREAK = "\n"   # inside a verdict: the start of the answer's next line (ask/api.py splits there)


def asks_figure(parsed: ParsedQuestion) -> bool:
    """A "how long" / "how much" question (the lexicon's time_question / cost_question)."""
    from gpu_advisor.ask.lexicon import load_lexicon

    kw = load_lexicon().keywords
    return any(p is not None and p.search(parsed.text) for p in (kw.get("time_question"), kw.get("cost_question")))


def _hours(h: float) -> str:
    return f"{h * 60:.0f} min" if h < 1 else f"{h:.3g} h"


def _range(r: Any, fmt: Any) -> str:
    return fmt(r.low) if abs(r.high - r.low) < 1e-9 else f"{fmt(r.low)}–{fmt(r.high)}"


def _money(v: float) -> str:
    return f"{v:,.2f}" if v < 100 else f"{v:,.0f}"


def _limits_verdict(parsed: ParsedQuestion, rec: Any, bare: bool = False) -> Text | None:
    """The verdict of a yes/no question about a stated budget or deadline ("预算5000元以内…可以吗？", "3天能训完吗？",
    "每小时不超过20元能跑吗？"): the leading option's list price, job total and wall-clock time against each stated
    limit, or that it cannot be checked (no price or no time in the catalog) -- never a plain yes on an unchecked limit."""
    stated = parsed.stated() & {"budget_total", "budget_per_hour", "deadline_hours"}
    inst = rec.instance
    if not stated or inst is None:
        return None
    fields = parsed.workload_fields
    cost = getattr(rec, "cost", None)
    opt = cost.option(inst.instance_type) if cost is not None else None
    what_en = f"{inst.instance_type} ({inst.total_gpus} × {inst.gpu_display})"
    what_zh = f"{inst.instance_type}（{inst.total_gpus} 张 {inst.gpu_display}）"
    ok, bad, unknown = [], [], []  # (en, zh) per limit
    if "budget_per_hour" in stated:
        cap = float(fields["budget_per_hour"])
        hourly = opt.hourly_total if opt is not None else None
        cur = (opt.currency if opt is not None else None) or inst.currency or "CNY"
        if hourly is None:
            unknown.append((f"the catalog has no price for it in this region to check against {cap:g} {cur}/h",
                            f"目录中没有它在该地域的价格，无法核对每小时 {cap:g} {cur} 的预算"))
        else:
            if hourly <= cap:
                ok.append((f"{hourly:,.2f} {cur}/h, within {cap:g} {cur}/h", f"每小时 {hourly:,.2f} {cur}，在每小时 {cap:g} {cur} 预算内"))
            else:
                bad.append((f"{hourly:,.2f} {cur}/h, over {cap:g} {cur}/h", f"每小时 {hourly:,.2f} {cur}，超出每小时 {cap:g} {cur} 预算"))
    if "budget_total" in stated:
        cap = float(fields["budget_total"])
        line = opt.purchase("payg") if opt is not None else None
        cur = (opt.currency if opt is not None else None) or "CNY"
        if line is None or line.total is None:
            unknown.append((f"no job total to check against the {cap:,.0f} {cur} budget (no price or no time)",
                            f"没有整个作业的总价（缺少价格或时间），无法核对 {cap:,.0f} {cur} 的总预算"))
        else:
            r = line.total
            span = _range(r, _money)
            spot = opt.purchase("spot") if fields.get("interruptible") else None
            if spot is not None and spot.available and spot.total is not None and r.low > cap >= spot.total.low:
                unknown.append((f"about {span} {cur} pay-as-you-go for the job, over {cap:,.0f} {cur}; on spot "
                                f"{_range(spot.total, _money)} {cur} (the price floats), so it fits only at a deep spot discount",
                                f"按量付费整个作业约 {span} {cur}，超出 {cap:,.0f} {cur} 预算；抢占式约 "
                                f"{_range(spot.total, _money)} {cur}（价格浮动），只有抢占式折扣很深时才在预算内"))
            elif r.high <= cap:
                ok.append((f"about {span} {cur} pay-as-you-go for the job, within {cap:,.0f} {cur}",
                           f"按量付费整个作业约 {span} {cur}，在 {cap:,.0f} {cur} 预算内"))
            elif r.low > cap:
                bad.append((f"about {span} {cur} pay-as-you-go for the job, over {cap:,.0f} {cur}",
                            f"按量付费整个作业约 {span} {cur}，超出 {cap:,.0f} {cur} 预算"))
            else:
                unknown.append((f"about {span} {cur} for the job: the {cap:,.0f} {cur} budget falls inside the range",
                                f"整个作业约 {span} {cur}：{cap:,.0f} {cur} 的预算落在估计范围之内"))
    if "deadline_hours" in stated:
        cap = float(fields["deadline_hours"])
        wall = opt.time.wall_hours if opt is not None else None
        if wall is None:
            unknown.append((f"no time estimate to check against the {_hours(cap)} deadline",
                            f"没有时间估算，无法核对 {_hours(cap)} 的期限"))
        else:
            span = _range(wall, _hours)
            if wall.high <= cap:
                ok.append((f"about {span} wall-clock, within {_hours(cap)}", f"耗时约 {span}，在 {_hours(cap)} 期限内"))
            elif wall.low > cap:
                bad.append((f"about {span} wall-clock, more than {_hours(cap)}", f"耗时约 {span}，超过 {_hours(cap)} 期限"))
            else:
                unknown.append((f"about {span} wall-clock: the {_hours(cap)} deadline falls inside the range",
                                f"耗时约 {span}：{_hours(cap)} 的期限落在估计范围之内"))
    parts = bad + unknown + ok
    body_en = "; ".join(p[0] for p in parts)
    body_zh = "；".join(p[1] for p in parts)
    if stated & {"budget_total", "deadline_hours"} and (sized := _job_size_defaults(rec)):
        # the job total and the time rest on a job size the user did not state: the verdict says so
        body_en += f" (assumed, not stated: {', '.join(s[0] for s in sized)})"
        body_zh += f"（未说明，按假设：{'、'.join(s[1] for s in sized)}）"
    if bare:   # no yes / no asked: the limits said back, the option named by the recommendation below
        head = ("Over a stated limit", "超出所述限制") if bad else ("Against the stated limits", "对照所述限制") if unknown \
            else ("Within the stated limits", "在所述限制内")
        return Text(en=f"{head[0]}: {body_en}.", zh=f"{head[1]}：{body_zh}。")
    if bad:
        return Text(en=f"No: the leading option {what_en} misses a stated limit: {body_en}.",
                    zh=f"不行：首选方案 {what_zh} 不满足所述限制：{body_zh}。")
    if unknown:
        return Text(en=f"Cannot say yes or no: on {what_en}, {body_en}.", zh=f"无法确定：{what_zh}，{body_zh}。")
    return Text(en=f"Yes: {what_en}, {body_en}.", zh=f"可以：{what_zh}，{body_zh}。")


def limits_line(parsed: ParsedQuestion, rec: Any, said: list[Text]) -> Text | None:
    """A budget or deadline stated in a question that is no yes / no one ("预算每小时 100 元以内，推荐什么配置？"): the
    leading option's price, total and time against each limit, said back with the finding, unless a line already
    says every limit (``said``: the lead so far)."""
    if parsed.yes_no or rec is None:
        return None
    fields = parsed.workload_fields
    caps = [float(fields[k]) for k in ("budget_per_hour", "budget_total", "deadline_hours") if k in parsed.stated()]
    text = " ".join(t.en for t in said)
    if not caps or all(re.search(rf"(?<![\w.,])(?:{re.escape(f'{c:,.0f}')}|{re.escape(f'{c:g}')})(?![\w,]|\.\d)", text)
                       for c in caps):   # "100" said as a figure, not inside "A100"
        return None
    return _limits_verdict(parsed, rec, bare=True)


def _job_size_defaults(rec: Any) -> list[tuple[str, str]]:
    """The assumed job size (epochs, a typical dataset) behind a job's time and total, as (en, zh) phrases."""
    out = []
    assumed = getattr(rec, "assumptions", None) or []
    for a in assumed:
        if a.code == "default_epochs" and a.value is not None:
            out.append((f"{float(a.value):g} epochs", f"{float(a.value):g} 轮"))
        elif a.code == "default_dataset" and a.value is not None:
            wl = getattr(rec, "workload", None) or {}
            ep = wl.get("epochs") if isinstance(wl, dict) else getattr(wl, "epochs", None)
            out.append((f"{int(a.value):,} samples" + (f" x {float(ep):g} epochs" if ep else ""),
                        f"{int(a.value):,} 个样本" + (f" × {float(ep):g} 轮" if ep else "")))
    if any(a.code == "sample_tokens" and a.field == "seq_len" for a in assumed) \
            and any(a.code == "default" and a.field == "seq_len" for a in assumed):
        # the time counts every sample at the default seq_len: an upper bound the user never stated
        seq = next(a.value for a in assumed if a.code == "default" and a.field == "seq_len")
        out.append((f"{int(seq):,} tokens a sample, an upper bound", f"每个样本 {int(seq):,} token（上限）"))
    return out


SPOT_YES_EN = "Yes, if the job saves checkpoints and resumes from them"   # the spot verdict (ask/api.py: said once)
SPOT_YES_ZH = "可以，前提是作业定期保存检查点并能断点续训"


def _spot_verdict(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """"用抢占式实例可以吗？" for a training job: yes when it checkpoints and resumes, with the spot total for the job
    beside the pay-as-you-go one (the spot price floats: a range, never a promise)."""
    if not parsed.workload_fields.get("interruptible") or "interruptible" not in parsed.stated():
        return None
    inst, cost = rec.instance, getattr(rec, "cost", None)
    if inst is None:
        return None
    opt = cost.option(inst.instance_type) if cost is not None else None
    if opt is not None and cost.basis != "job":
        return None   # serving: the rules say what spot means for a service
    what_en = f"{inst.instance_type} ({inst.total_gpus} × {inst.gpu_display})"
    what_zh = f"{inst.instance_type}（{inst.total_gpus} 张 {inst.gpu_display}）"
    spot = opt.purchase("spot") if opt is not None else None
    payg = opt.purchase("payg") if opt is not None else None
    cur = (opt.currency if opt is not None else None) or "CNY"
    if spot is None or not spot.available or spot.total is None or payg is None or payg.total is None:
        # no job total (the data size not given, or no price here): the yes stands on checkpoints, said with what is known
        hourly = inst.price_per_hour if getattr(inst, "price_per_hour", None) is not None else None
        price_en = (f"{what_en} lists {hourly:,.2f} {cur}/h pay-as-you-go; spot floats between about 10 % and 100 % of it"
                    if hourly is not None else f"the catalog has no price for {what_en} in this region")
        price_zh = (f"{what_zh}按量 {hourly:,.2f} {cur}/小时，抢占式约为其 10%–100%（价格浮动）" if hourly is not None
                    else f"目录中没有 {what_zh}在该地域的价格")
        return Text(en=f"{SPOT_YES_EN} (the instance is released 5 minutes after the notice): {price_en}; state the "
                       "data size for the job's total.",
                    zh=f"{SPOT_YES_ZH}（中断通知后 5 分钟释放实例）：{price_zh}；"
                       "给出数据量可算出整个作业的费用。")
    return Text(
        en=f"{SPOT_YES_EN} (the instance is released 5 minutes after the "
           f"notice): on {what_en} spot costs about {_range(spot.total, _money)} {cur} for the job against "
           f"{_range(payg.total, _money)} {cur} pay-as-you-go; the spot price floats and is not guaranteed.",
        zh=f"{SPOT_YES_ZH}（中断通知后 5 分钟释放实例）：{what_zh}用抢占式整个作业约 "
           f"{_range(spot.total, _money)} {cur}，按量付费约 {_range(payg.total, _money)} {cur}；抢占式价格浮动、没有保证。")


def _verdict(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """The fit verdict, and, when the question also states a budget or a deadline ("2 天内要完成，最多 4 张卡，可以吗",
    "预算 1000 元够吗"), the limits verdict first: a job that fits the stated GPUs but misses the deadline is a no."""
    line = _fit_verdict(parsed, rec)
    if line is None or not line.en.startswith("Yes") or _asks_oom(parsed):
        return line
    limits = _limits_verdict(parsed, rec) if parsed.stated() & {"num_gpus", "gpu_preference", "num_nodes"} \
        or FIT_WORDS.search(parsed.text) or _off_catalog_gpu(parsed) else None
    if limits is None:
        return line
    return Text(en=f"{limits.en} Memory: {line.en.split(': ', 1)[-1]}", zh=f"{limits.zh}显存：{line.zh.split('：', 1)[-1]}")


def _fit_verdict(parsed: ParsedQuestion, rec: Any) -> Text | None:
    if not parsed.yes_no or rec is None:
        return None
    fields = parsed.workload_fields
    stated = parsed.stated()
    if not (stated & {"num_gpus", "gpu_preference", "num_nodes"} or FIT_WORDS.search(parsed.text)
            or _off_catalog_gpu(parsed)):
        # the yes/no is about a stated budget or deadline, or spot, or something else (a region, a platform): the
        # answer's rules say the latter
        limits, spot = _limits_verdict(parsed, rec), _spot_verdict(parsed, rec)
        if limits is not None and spot is not None:   # "抢占式能用吗？…3 天内要完成": both asked, both said, spot first
            return Text(en=f"{spot.en}{LEAD_BREAK}{limits.en}", zh=f"{spot.zh}{LEAD_BREAK}{limits.zh}")
        return limits or spot
    inst = rec.instance
    gpus = _stated_gpus(fields) if "num_gpus" in stated else None
    preference = fields.get("gpu_preference") if "gpu_preference" in stated else None
    want_en = " × ".join(x for x in (str(gpus) if gpus else "", preference or "") if x) or "it"
    want_zh = " ".join(x for x in (f"{gpus} 张" if gpus else "", preference or "") if x) or "它"
    if gpus and not preference:   # "8 does not hold": the count alone is said with its unit
        want_en, want_zh = f"{gpus} GPU{'s' if gpus > 1 else ''}", f"{gpus} 张卡"
    if inst is None:
        return Text(en="No: no GPU instance in the catalog holds this job as asked (see why below).",
                    zh="不行：目录中没有能按所述配置放下此作业的 GPU 实例（原因见下）。")
    what_en = f"{inst.total_gpus} × {inst.gpu_display}" + (f" on {inst.nodes} machines" if inst.nodes > 1 else "")
    what_zh = f"{inst.total_gpus} 张 {inst.gpu_display}" + (f"（{inst.nodes} 台机器）" if inst.nodes > 1 else "")
    kept_gpus = gpus is None or inst.total_gpus == gpus
    kept_model = preference is None or _preference_kept(rec, preference)
    if not (kept_gpus and kept_model) and _asks_oom(parsed):
        return Text(en=f"Yes: on {want_en} this job runs out of memory as asked; {what_en} holds it "
                       f"(about {inst.planned_mem_gib:.1f} GiB per GPU).",
                    zh=f"会：{want_zh} 按所述配置会爆显存；{what_zh} 放得下（每卡约 {inst.planned_mem_gib:.1f} GiB）。")
    if not (kept_gpus and kept_model) and (host := _host_ram_reason(rec, preference)) is not None:
        return Text(en=f"No: not for lack of GPU memory: {host.en}; {what_en} holds it "
                       f"(about {inst.planned_mem_gib:.1f} GiB per GPU).",
                    zh=f"不行：不是显存不够，而是 {host.zh}；{what_zh} 可以（每卡约 {inst.planned_mem_gib:.1f} GiB）。")
    if not (kept_gpus and kept_model):
        verb = "do" if gpus and gpus > 1 and not preference else "does"
        return Text(en=f"No: {want_en} {verb} not hold this job as asked; {what_en} does "
                       f"(about {inst.planned_mem_gib:.1f} GiB per GPU).",
                    zh=f"不行：{want_zh} 按所述配置放不下此作业；{what_zh} 可以（每卡约 {inst.planned_mem_gib:.1f} GiB）。")
    needs = inst.mitigations
    if fields.get("task") == "inference" and inst.total_gpus > 1:
        # serving over several GPUs is the layout (tensor parallelism), not a mitigation to warn about
        needs = [m for m in needs if m.en != "tensor parallelism"]
        what_en += " with tensor parallelism"
        what_zh += "（张量并行）"
    card = f"about {inst.planned_mem_gib:.1f} GiB per GPU of {inst.gpu_memory_gib:g} GB"
    card_zh = f"每卡约 {inst.planned_mem_gib:.1f} GiB / {inst.gpu_memory_gib:g} GB"
    if _asks_oom(parsed):  # "will it OOM?": the answer is the other way round
        if needs:
            return Text(en=f"Yes, as configured it runs out of memory; it fits only with {', '.join(m.en for m in needs)}: "
                           f"{what_en}, {card}.",
                        zh=f"会：按所述配置会爆显存；必须采取{'、'.join(m.zh for m in needs)}才放得下：{what_zh}，{card_zh}。")
        return Text(en=f"No: {what_en} holds it as asked, {card}.", zh=f"不会：{what_zh} 按所述配置放得下，{card_zh}。")
    changed = _stated_changed(fields, stated, needs)
    if needs and changed:   # a mitigation undoes what the question stated: not a yes to the job as stated
        return Text(en=f"No as stated ({', '.join(c.en for c in changed)}); it fits only with "
                       f"{', '.join(m.en for m in needs)}: {what_en}, {card}.",
                    zh=f"按所述（{'、'.join(c.zh for c in changed)}）不行；必须采取{'、'.join(m.zh for m in needs)}"
                       f"才放得下：{what_zh}，{card_zh}。")
    if needs:
        return Text(en=f"Yes, but only with {', '.join(m.en for m in needs)}: {what_en}, {card}.",
                    zh=f"可以，但必须采取：{'、'.join(m.zh for m in needs)}：{what_zh}，{card_zh}。")
    return Text(en=f"Yes: {what_en} holds it as asked, {card}.", zh=f"可以：{what_zh} 按所述配置放得下，{card_zh}。")


def _stated_changed(fields: dict[str, Any], stated: set[str], needs: list[Any]) -> list[Text]:
    """The stated values the plan's mitigations change: gradient checkpointing said to be off and turned on, a stated
    micro-batch made smaller (the ladder's STEP_CKPT / STEP_MICROBATCH, in the answer's words)."""
    from gpu_advisor.answer.assemble import STEP_TEXT
    from gpu_advisor.plan.ladder import STEP_CKPT, STEP_MICROBATCH

    said = {m.en for m in needs}
    out = []
    if "gradient_checkpointing" in stated and fields.get("gradient_checkpointing") is False \
            and STEP_TEXT[STEP_CKPT].en in said:
        out.append(Text(en="gradient checkpointing off", zh="不开梯度检查点"))
    batch = fields.get("batch_size_per_gpu")
    if "batch_size_per_gpu" in stated and batch and int(batch) > 1 and STEP_TEXT[STEP_MICROBATCH].en in said:
        out.append(Text(en=f"micro-batch {int(batch)} per GPU", zh=f"每卡微批 {int(batch)}"))
    return out


# --- a card the user owns or names that the catalog does not sell (knowledge/owned_gpus.yaml) ---------------------

_ALT_TEXT = {
    "int4": Text(en="4-bit weights (an AWQ / GPTQ int4 checkpoint)", zh="4-bit 权重（AWQ / GPTQ int4 量化版）"),
    "lora": Text(en="LoRA instead of a full fine-tune", zh="改用 LoRA 而不是全参微调"),
    "qlora": Text(en="QLoRA (4-bit NF4 base + LoRA adapters)", zh="QLoRA（4-bit NF4 基座 + LoRA 适配器）"),
}


def owned_cue_before(text: str, at: int) -> bool:
    """The lexicon's ownership cue ("我有", "our", "I have") in the clause just before position ``at``."""
    from gpu_advisor.ask.lexicon import load_lexicon
    from gpu_advisor.ask.on_card import OWNED_CUE_WINDOW

    cue = load_lexicon().keywords.get("owned_hardware")
    before = re.split(r"[，。；！？：,;!?:]", text[max(0, at - OWNED_CUE_WINDOW):max(0, at)])[-1]
    return cue is not None and cue.search(before) is not None


def owned_card(parsed: ParsedQuestion) -> tuple[Any, str] | None:
    """(the card of knowledge/owned_gpus.yaml, the name as the question wrote it) for a GPU the question names that
    the catalog does not resolve ("4张4090", "my RTX 3090", "单张 H20"), or None. A catalog GPU's name always wins."""
    name = _off_catalog_gpu(parsed)
    if name is None:   # "我们有8张A100…": a GPU the catalog sells, said to be the user's own (ask/on_card.py)
        from gpu_advisor.ask.on_card import owned_catalog_gpu

        return owned_catalog_gpu(parsed)
    from gpu_advisor.kb.owned_gpus import find_owned_gpu

    text = parsed.text.lower()
    for hint in parsed.hints:
        if hint.kind == "gpu_preference" and (card := find_owned_gpu(hint.matched)) is not None:
            at = text.find(hint.matched.lower())
            if _asks_availability(text, at, len(hint.matched)):
                return None   # "北京地域有没有 H20": whether the cloud has the card, not a card the user has
            if "region" in parsed.stated() and not owned_cue_before(text, at):
                return None   # "上海地域有 H20 吗": a card asked for in a cloud region, not one the user has
            # the card's own name where the question wrote it, with what follows ("4090 laptop" is another card)
            if at < 0 or any(card.pattern.match(text, i) for i in range(at, at + len(hint.matched))):
                return card, name
    return None


OWNED_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)   # counts tried for "需要几张 H20" (cards, then 8-GPU machines)


def _count_asked(parsed: ParsedQuestion) -> bool:
    """"需要几张H20", "how many H800 nodes": the lexicon's count_question."""
    from gpu_advisor.ask.lexicon import load_lexicon

    cue = load_lexicon().keywords.get("count_question")
    return cue is not None and cue.search(parsed.text.lower()) is not None


def _fewest_owned(fields: dict[str, Any], card: Any, one: Any) -> Any:
    """The fit on the fewest cards (OWNED_COUNTS) that hold the job at the planning estimate without CPU offload or
    another method, for a question that asks the count: a verdict on one card with offload answers no count
    ("可以，但必须采取 ZeRO-3 offload：1 张 H20" under "需要 2 台 …16 张 A100"). ``one``: the fit on one card, kept when
    no count of OWNED_COUNTS does."""
    from gpu_advisor.plan.owned import fit_owned
    from gpu_advisor.validation import workload_from_dict

    held = None
    for n in OWNED_COUNTS:
        fit = one if n == 1 else fit_owned(workload_from_dict({**fields, "num_gpus": n}), card)
        v = fit.variant
        if held is None and v is not None and not fit.tight and fit.alternative is None and not v.workload.cpu_offload:
            held = fit
        if held is not None and not _misses_deadline(fit, card, fields):
            return fit
    return held or one


def _count_head(head: Text, card: Any, deadline: Any, fit: Any) -> Text:
    """The verdict of a count question said as the count ("所需最少 H20：…"), not as a yes to a question never asked."""
    met = deadline is not None and not _misses_deadline(fit, card, {"deadline_hours": deadline})
    why_en = f"hold the job and meet the {float(deadline):g} h deadline at the mid estimate" if met else "hold the job"
    why_zh = f"放得下此作业且按中间估计在 {float(deadline):g} 小时内完成" if met else "放得下此作业"
    en, zh = head.en, head.zh
    count_en = f"{fit.gpus} × {card.display_name}, the fewest that {why_en}; "   # the count before the first clause end
    count_zh = f"{fit.gpus} 张 {card.display_name}，是{why_zh}的最少卡数；"
    for yes in ("Yes, but only with ", "Yes: "):
        if en.startswith(yes):
            en = count_en + ("with " if yes != "Yes: " else "") + en[len(yes):]
    for yes in ("可以，但必须采取：", "可以："):
        if zh.startswith(yes):
            zh = count_zh + ("需采取" if yes != "可以：" else "") + zh[len(yes):]
    return Text(en=en, zh=zh)


def _misses_deadline(fit: Any, card: Any, fields: dict[str, Any]) -> bool:
    """Whether a stated deadline is missed on the fit's cards at the mid estimate of their time (plan/owned_speed.py):
    "how many H800 nodes to pretrain … in 2 weeks" asks the count that meets it, not the fewest that hold the job."""
    deadline = fields.get("deadline_hours")
    if deadline is None or fit.variant is None or fit.tight or fit.alternative is not None \
            or fit.variant.workload.cpu_offload:
        return deadline is not None
    from gpu_advisor.plan.owned_speed import owned_time

    t = owned_time(fit, card)
    return t is not None and t.wall_hours is not None and t.wall_hours.mid > float(deadline)


def _availability_asked(parsed: ParsedQuestion) -> bool:
    """Whether the question asks if the cloud offers a GPU it names (the clause of a gpu_preference hint)."""
    text = parsed.text.lower()
    return any(_asks_availability(text, text.find(h.matched.lower()), len(h.matched))
               for h in parsed.hints if h.kind == "gpu_preference")


def _asks_availability(text: str, at: int, length: int) -> bool:
    """The parser's availability reading (ask/numeric.asks_availability), for a card named at ``at``."""
    from gpu_advisor.ask.numeric import asks_availability

    return asks_availability(text, at, length)


def _steps_taken(v: Any, base: Any) -> list[Text]:
    """The ladder's steps a variant applies to the job as asked, in the answer's own words (answer/assemble.py)."""
    from gpu_advisor.answer.assemble import SERVING_STEP_TEXT, STAGE_TEXT, STEP_TEXT
    from gpu_advisor.plan.ladder import STEP_AMP, STEP_CKPT, STEP_MICROBATCH, STEP_OFFLOAD, STEP_SHARD
    from gpu_advisor.workload import Task

    w = v.workload
    if w.task == Task.inference:
        # serving's ladder changes only the weights (8-bit at its AMP step); tensor parallelism is the layout
        int8 = getattr(w.quantization, "value", w.quantization) == "int8"
        return [SERVING_STEP_TEXT[STEP_AMP]] if int8 and w.quantization != base.quantization else []
    texts = STAGE_TEXT.get(getattr(w.distributed, "value", None), STEP_TEXT)
    applied = {
        STEP_AMP: w.precision != base.precision,
        STEP_CKPT: bool(w.gradient_checkpointing) and not base.gradient_checkpointing,
        STEP_MICROBATCH: v.accum_steps > 1 and v.step >= STEP_MICROBATCH,
        STEP_SHARD: w.distributed != base.distributed and w.distributed not in (None, "none", "ddp") and not w.cpu_offload,
        STEP_OFFLOAD: bool(w.cpu_offload) and not base.cpu_offload,
    }
    return [texts[s] for s in sorted(applied) if applied[s]]


def _with_batch(parsed: ParsedQuestion, fit: Any, card: Any, head: Text) -> Text:
    """"What batch size can I use on my 3090?": the largest micro-batch per GPU that fits the card (plan/owned.py)."""
    from gpu_advisor.ask.lexicon import load_lexicon
    from gpu_advisor.plan.owned import largest_batch, planning_gib

    asked = load_lexicon().keywords.get("batch_question")
    got = largest_batch(fit, card) if asked is not None and asked.search(parsed.text) else None
    if got is None:
        return head
    b, e = got
    return Text(en=f"{head.en} Largest micro-batch per GPU that fits this way: {b} (about {e.device_total_gib:.1f} GiB, "
                   f"planning estimate {planning_gib(e):.1f} GiB); a larger effective batch comes from gradient accumulation.",
                zh=f"{head.zh}按此方式每卡最大微批为 {b}（每卡约 {e.device_total_gib:.1f} GiB，规划估计 {planning_gib(e):.1f} GiB）；"
                   f"更大的有效 batch 用梯度累积。")


def _owned_verdict(parsed: ParsedQuestion, rec: Any, cloud: Text | None, cloud_last: bool = False) -> Text | None:
    """The memory verdict on the card the user named (not sold by Alibaba), then the catalog's verdict labelled as
    the cloud option (``cloud_last``: on a line of its own after the time / speed on the card). None when the card is
    not in knowledge/owned_gpus.yaml or the job cannot be rebuilt."""
    found = owned_card(parsed)
    if found is None or rec is None or getattr(rec, "workload", None) is None:
        return None
    card, name = found
    from gpu_advisor.errors import WorkloadError
    from gpu_advisor.plan.owned import fit_owned, planning_gib
    from gpu_advisor.validation import workload_from_dict

    fields = {k: v for k, v in parsed.workload_fields.items() if k != "gpu_preference"}  # the card is the owned one
    try:
        asked = workload_from_dict(fields)
        fit = fit_owned(asked, card)
        counted = _count_asked(parsed) and fields.get("num_gpus") is None
        if counted:
            fit = _fewest_owned(fields, card, fit)
    except (WorkloadError, ValueError, TypeError):
        return None
    w = fit.workload
    n = fit.gpus
    on_en = f"{n} × {card.display_name}"
    on_zh = f"{n} 张 {card.display_name}"
    mem = card.memory_gb
    asked = fit.as_asked
    weights = asked.breakdown.get("weights")
    asked_en = f"about {asked.device_total_gib:.1f} GiB per GPU as asked" + (
        f" ({weights:.1f} GiB of it weights)" if weights else "")
    asked_zh = f"按所述配置每卡约 {asked.device_total_gib:.1f} GiB" + (f"（其中权重 {weights:.1f} GiB）" if weights else "")
    if fit.variant is None:
        head = Text(en=f"No: {on_en} ({mem:g} GB each) does not hold this job: {asked_en}, and no mitigation "
                       f"(nor 4-bit weights / QLoRA) brings it under {mem:g} GB.",
                    zh=f"不行：{on_zh}（每张 {mem:g} GB）放不下此作业：{asked_zh}，任何缓解手段（包括 4-bit 权重 / QLoRA）"
                       f"都无法降到 {mem:g} GB 以内。")
    else:
        e = fit.estimate
        got_en = f"about {e.device_total_gib:.1f} GiB per GPU (planning estimate {planning_gib(e):.1f} GiB) of {mem:g} GB"
        got_zh = f"每卡约 {e.device_total_gib:.1f} GiB（规划估计 {planning_gib(e):.1f} GiB）/ {mem:g} GB"
        tight_en = "; tight: only the central estimate fits, the planning estimate does not" if fit.tight else ""
        tight_zh = "；偏紧：只有中心估计放得下，规划估计放不下" if fit.tight else ""
        steps = _steps_taken(fit.variant, w)
        if fit.alternative is not None:
            alt = _ALT_TEXT[fit.alternative]
            extra_en = f" and {', '.join(s.en for s in steps)}" if steps else ""
            extra_zh = f"，并采取{'、'.join(s.zh for s in steps)}" if steps else ""
            tv = fit.tight_variant
            near = _steps_taken(tv, w) if tv is not None else []
            near_en = (f"; with {', '.join(s.en for s in near)} it fits only at the central estimate, not the planning "
                       f"one" if near else "; no mitigation of the job as asked fits at the planning estimate")
            near_zh = (f"；采取{'、'.join(s.zh for s in near)}只有中心估计放得下，规划估计放不下" if near
                       else "；按所述方式任何缓解手段在规划估计下都放不下")
            head = Text(en=f"No as asked: {on_en} does not hold it ({asked_en} of {mem:g} GB{near_en}); "
                           f"yes with {alt.en}{extra_en}: {got_en}.",
                        zh=f"按所述配置不行：{on_zh} 放不下（{asked_zh} / {mem:g} GB{near_zh}）；"
                           f"{alt.zh}{extra_zh}则可以：{got_zh}。")
        elif steps:
            lighter_en = lighter_zh = ""
            if fit.lighter is not None:
                lname, _, le = fit.lighter
                lighter_en = (f"; or with {_ALT_TEXT[lname].en}, without sharding or offload: about "
                              f"{le.device_total_gib:.1f} GiB per GPU (planning estimate {planning_gib(le):.1f} GiB)")
                lighter_zh = (f"；或者{_ALT_TEXT[lname].zh}，无需分片或卸载：每卡约 {le.device_total_gib:.1f} GiB"
                              f"（规划估计 {planning_gib(le):.1f} GiB）")
            head = Text(en=f"Yes, but only with {', '.join(s.en for s in steps)}: {on_en}, {got_en}{tight_en} "
                           f"({asked_en}){lighter_en}.",
                        zh=f"可以，但必须采取：{'、'.join(s.zh for s in steps)}：{on_zh}，{got_zh}{tight_zh}"
                           f"（{asked_zh}）{lighter_zh}。")
        else:
            tp_en = " with tensor parallelism" if n > 1 and w.task.value == "inference" else ""
            tp_zh = "（张量并行）" if n > 1 and w.task.value == "inference" else ""
            lighter_en = lighter_zh = ""
            if fit.lighter is not None and fit.tight:   # tight as asked: the lighter method that leaves room
                lname, _, le = fit.lighter
                lighter_en = (f"; {_ALT_TEXT[lname].en} leave room: about {le.device_total_gib:.1f} GiB per GPU "
                              f"(planning estimate {planning_gib(le):.1f} GiB)")
                lighter_zh = (f"；{_ALT_TEXT[lname].zh}则有余量：每卡约 {le.device_total_gib:.1f} GiB"
                              f"（规划估计 {planning_gib(le):.1f} GiB）")
            head = Text(en=f"Yes: {on_en}{tp_en} holds it as asked, {got_en}{tight_en}{lighter_en}.",
                        zh=f"可以：{on_zh}{tp_zh} 按所述配置放得下，{got_zh}{tight_zh}{lighter_zh}。")
    head = _with_batch(parsed, fit, card, head)
    if counted and fit.variant is not None:
        head = _count_head(head, card, fields.get("deadline_hours"), fit)
    if fit.variant is not None and fit.variant.workload.cpu_offload:   # offload: the states live in the machine's RAM
        from gpu_advisor.memory import estimate_host
        from gpu_advisor.plan.owned import MAX_GPUS_PER_MACHINE

        per_machine = min(n, MAX_GPUS_PER_MACHINE)
        ram = estimate_host(fit.variant.workload, per_machine, fit.estimate).ram_gib
        head = Text(en=f"{head.en} CPU offload needs about {ram:,.0f} GiB of host RAM in each machine of {per_machine} "
                       "GPUs (the offloaded states, plus the data pipeline).",
                    zh=f"{head.zh}CPU 卸载需要每台 {per_machine} 卡机器约 {ram:,.0f} GiB 主机内存（卸载的状态加数据流水线）。")
    if fit.shorter is not None:   # the verdict rests on the assumed seq_len: what a shorter one gives
        seq, sv, se, tight_at = fit.shorter
        how = _steps_taken(sv, w)
        how_en = f" with {', '.join(x.en for x in how)}" if how else " as asked"
        how_zh = f"采取 {'、'.join(x.zh for x in how)} 后" if how else "按所述方式"
        only_en = " only at the central estimate" if tight_at else ""
        only_zh = "只有中心估计" if tight_at else ""
        head = Text(en=f"{head.en} At {seq:,} tokens a sample (the {w.seq_len:,} above is assumed, not stated) it fits"
                       f"{how_en}{only_en}: about {se.device_total_gib:.1f} GiB per GPU (planning estimate "
                       f"{planning_gib(se):.1f} GiB).",
                    zh=f"{head.zh}若每个样本 {seq:,} token（上面的 {w.seq_len:,} 为假设，未说明），{how_zh}{only_zh}可以放下：每卡约 "
                       f"{se.device_total_gib:.1f} GiB（规划估计 {planning_gib(se):.1f} GiB）。")
    if fit.longer is not None and fit.shorter is None and w.seq_len:
        # the yes rests on the assumed seq_len: the common longer length at which it no longer holds
        head = Text(en=f"{head.en} This rests on {w.seq_len:,} tokens a sample (assumed, not stated): at "
                       f"{fit.longer:,} it no longer fits these cards.",
                    zh=f"{head.zh}这一结论基于每个样本 {w.seq_len:,} token（假设，未说明）：若为 {fit.longer:,} token，这些卡就放不下了。")
    if fit.tight and fit.alternative is None and head.en.startswith("Yes"):
        # only the central estimate fits: not a yes at the planning estimate the planner holds the catalog to
        head = Text(en="Borderline" + head.en[3:], zh="勉强" + head.zh)
    if w.task.value == "llm_finetune" and "finetune_method" not in parsed.stated():
        method = getattr(w.finetune_method, "value", w.finetune_method) or "full"
        head = Text(en=f"{head.en} (Method not stated: sized as a {method} fine-tune.)",
                    zh=f"{head.zh}（未说明微调方式：按{ {'full': '全参', 'lora': 'LoRA', 'qlora': 'QLoRA'}.get(method, method)}微调估算。）")
    extra = None
    if fit.variant is not None:   # the time or the serving speed on the card, for the step that fits it
        from gpu_advisor.ask.on_card import speed_text, time_text

        sized_job = parsed.stated() & {"num_samples", "dataset_size_gb", "epochs", "training_tokens_billion"} \
            or asks_figure(parsed)
        extra = speed_text(fit, card) if w.task.value == "inference" else (
            time_text(fit, card, _job_size_defaults(rec), any(h.kind == "no_rdma" for h in parsed.hints))
            if sized_job else None)
    cite = next(iter(re.findall(r"(?:https?://)?[\w.-]+\.(?:com|io|org)/[\w./-]*", card.source)), "knowledge/owned_gpus.yaml")
    sold = getattr(card, "named_by_alibaba", None) is not None   # a catalog GPU the user has: Alibaba sells it too
    src = Text(en=f" ({card.display_name}: {mem:g} GB, {cite}, as of {card.as_of}; your card, not an Alibaba Cloud "
                  f"offering.)",
               zh=f"（{card.display_name}：{mem:g} GB，{cite}，截至 {card.as_of}；这是您的卡，不是阿里云的产品。）")
    if sold:
        src = Text(en=f" (Sized on your own {n} × {card.display_name}.)",
                   zh=f"（按您自有的 {n} 张 {card.display_name} 估算。）")
    label = Text(en=f"Cloud option on Alibaba ({name} is not in its catalog)", zh=f"阿里云上的方案（阿里云目录中没有 {name}）")
    if sold:
        label = Text(en="Cloud option on Alibaba", zh="阿里云上的方案")
    # the time / speed on the card is a line of its own (LEAD_BREAK: the answer's next line), so that a brief that
    # shortens each line keeps its figure
    more_en, more_zh = (LEAD_BREAK + extra.en.strip(), LEAD_BREAK + extra.zh) if extra is not None else ("", "")
    if cloud is None:   # not a yes / no question: the recommendation below is the cloud's
        return Text(en=f"{head.en}{src.en} Below: the {label.en[0].lower()}{label.en[1:]}.{more_en}",
                    zh=f"{head.zh}{src.zh}下面是{label.zh}。{more_zh}")
    if cloud_last and extra is not None:   # "多久": the fit, the time on the card, then the cloud's figure, one line each
        return Text(en=f"{head.en}{src.en}{more_en}{LEAD_BREAK}{label.en}: {cloud.en}",
                    zh=f"{head.zh}{src.zh}{more_zh}{LEAD_BREAK}{label.zh}：{cloud.zh}")
    return Text(en=f"{head.en}{src.en} {label.en}: {cloud.en}{more_en}", zh=f"{head.zh}{src.zh}{label.zh}：{cloud.zh}{more_zh}")

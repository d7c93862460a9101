"""Extractors for quantities with units: GPU counts, money, deadlines, sizes, counts.

Each extractor is a (pattern, handler) pair in EXTRACTORS, run in that order; order is part of the
design (money before plain numbers, GPU counts before image counts, "4k tokens" before "4K" resolution).
"""

from __future__ import annotations

import math
from functools import lru_cache
import re
from typing import Callable

from gpu_advisor.ask.lexicon import CN_NUMERALS, MULT, MULTIPLIERS, NUM, load_lexicon, to_number
from gpu_advisor.ask.parsed import Scanner

N = rf"(?<![\w.{CN_NUMERALS}])(?P<num>{NUM})(?![\d{CN_NUMERALS}])"            # a number that does not continue a word ("a100" is not 100)
NM = rf"{N}\s*(?P<mult>{MULT})?"
EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "dual": 2, "three": 3, "four": 4,
              "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16,
              "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100}
EN_N = r"(?P<word>a|an|one|single|two|dual|three|four|five|six|seven|eight|nine|ten|twelve|sixteen|twenty|thirty|fifty|hundred)"
CUR = r"(?P<cur>元|块钱|块|rmb|cny|yuan|人民币|usd|美元|美金|dollars?)"
CUR1 = r"(?P<cur1>¥|\$|￥)?"
MONEY_WORD = re.compile(r"预算|budget|费用|花费", re.IGNORECASE)
USD_TO_CNY = 7.2
HOURS = {"小时": 1, "个小时": 1, "h": 1, "hr": 1, "hrs": 1, "hour": 1, "hours": 1, "天": 24, "日": 24,
         "day": 24, "days": 24, "周": 168, "个星期": 168, "星期": 168, "week": 168, "weeks": 168,
         "个月": 720, "month": 720, "months": 720}
TIME_UNIT = r"(?P<unit>个小时|小时|天|日|周|个星期|星期|个月|hours?|hrs?|h|days?|weeks?|months?)"
COUNT_NOUNS = r"(?:张|条|个|样本|图|images?|samples?|pictures?|photos?|steps?|iters?|tokens?|context|上下文)"


def _num(m: re.Match[str]) -> float | None:
    groups = m.groupdict()
    if groups.get("word"):
        return float(EN_NUMBERS[groups["word"].lower()])
    if groups.get("num") is None:
        return None
    return to_number(groups["num"], groups.get("mult"))


def _int(m: re.Match[str]) -> int | None:
    value = _num(m)
    if value is None:
        return None
    if math.isfinite(value):
        return int(round(value))
    # more digits than a float holds (a 400-digit GPU count): the exact integer, which validation then refuses
    # with the field named, instead of OverflowError (issue 21)
    digits = re.sub(r"\D", "", m.group("num") or "")
    mult = MULTIPLIERS.get((m.groupdict().get("mult") or "").lower(), 1.0)
    return (int(digits) if 0 < len(digits) <= 4000 else 10**4000) * int(mult)


def _family_pattern() -> str:
    from gpu_advisor.ask.families import family_pattern

    return family_pattern().pattern


def _family_named(s: Scanner, m: re.Match[str]) -> None:
    from gpu_advisor.ask.families import family_named

    family_named(s, m, _prefer)


def _gpus_pattern() -> str:
    return load_lexicon().gpus.pattern


# --- handlers ------------------------------------------------------------------------------------------

_GPU_OK: dict[str, bool] = {}
_GPU_OK_OF: list[object] = [None]     # the catalog the answers above are about (an override reloads it)


def _catalog_gpu(gpu: str) -> bool:
    """Whether the catalog resolves this GPU name; remembered per catalog (a question may name a GPU many times)."""
    from gpu_advisor.kb.catalog_loader import load_catalog
    from gpu_advisor.errors import WorkloadError
    from gpu_advisor.plan.preference import resolve_gpu_preference

    catalog = load_catalog()
    if _GPU_OK_OF[0] is not catalog:
        _GPU_OK.clear()
        _GPU_OK_OF[0] = catalog
    if gpu not in _GPU_OK:
        try:
            _GPU_OK[gpu] = bool(resolve_gpu_preference(catalog, gpu))
        except WorkloadError:
            _GPU_OK[gpu] = False
    return _GPU_OK[gpu]


def _prefer(s: Scanner, m: re.Match[str], gpu: str, claim: bool) -> None:
    from gpu_advisor.ask.exclude import exclude, excluded_cue

    if excluded_cue(s, m):   # "不要用 A100", "除了 H100 之外", "not A100": ruled out, never the preference
        exclude(s, m, gpu, _catalog_gpu(gpu))
        return
    if _catalog_gpu(gpu):
        s.set("gpu_preference", gpu, m)
        s.hint("gpu_preference", m, f"You mentioned {gpu}: the advisor checks whether it holds the job and uses it if so.",
               f"您提到了 {gpu}：顾问会核对它能否放下此作业，能放下就按它推荐。", claim=False)
    else:
        mem = re.search(r"(\d{2,3})\s*GB?\b", gpu, re.IGNORECASE | re.ASCII)
        if mem and "gpu_preference" not in s.fields and _catalog_gpu(f"{mem.group(1)}GB"):
            # "4090 24G": the card the user has is not sold here; its memory is, so the fit is checked on a card of the
            # same memory, and the answer says it is not that card (verdict._off_catalog_gpu)
            s.set("gpu_preference", f"{mem.group(1)}GB", m, claim=False)
            s.hint("gpu_preference", m, f"You mentioned {gpu}: Alibaba's catalog names no such GPU; the fit is checked on "
                   f"its {mem.group(1)} GB cards (the same memory; speed and price differ).",
                   f"您提到了 {gpu}：阿里云目录中没有这一型号；按目录中 {mem.group(1)} GB 显存的卡核对能否放下（显存相同；速度与价格不同）。",
                   claim=claim)
            return
        s.hint("gpu_preference", m, f"You mentioned {gpu}: Alibaba's catalog names no such GPU, so it is only a note.",
               f"您提到了 {gpu}：阿里云目录中没有这一型号，仅作记录。", claim=claim)


def gpu_count_named(s: Scanner, m: re.Match[str]) -> None:
    gpu = m.group("gpu").upper().replace(" ", "")
    if m.groupdict().get("mem"):
        gpu = f"{gpu} {m.group('mem').strip(' -').upper()}"
    if _machines_asked(s, m):
        # "需要几台 8 卡 A100": 8 GPUs a machine, the machines are what is asked; the plan picks 8-GPU machines itself
        s.hint("gpus_per_machine", m, f"'{m.group(0).strip()}' read as the GPUs of one machine; the number of machines "
               "is what the answer gives.", f"“{m.group(0).strip()}”理解为每台机器的卡数；台数由答案给出。")
        _prefer(s, m, gpu, claim=True)
        return
    s.set("num_gpus", _int(m), m)
    _prefer(s, m, gpu, claim=False)


def _machines_asked(s: Scanner, m: re.Match[str]) -> bool:
    """The GPU count is of one machine and the number of machines is asked (lexicon machines_asked_before /
    machine_noun_after): "需要几台 8 卡 A100", "how many 8x A100 80GB machines"."""
    kw = load_lexicon().keywords
    before, after = kw.get("machines_asked_before"), kw.get("machine_noun_after")
    if before is None or not before.search(s.text[max(0, m.start() - 16):m.start()]):
        return False
    return after is None or not s.text[m.end():].strip() or bool(after.match(s.text[m.end():])) or "台" in s.text[max(0, m.start() - 16):m.start()]


def gpu_named_memory(s: Scanner, m: re.Match[str]) -> None:
    """"A100 80GB", "V100-32G": the GPU with its memory size, a preference like "A100" but of that size."""
    _prefer(s, m, f"{m.group('gpu').upper().replace(' ', '')} {m.group('mem')}GB", claim=True)


def gpu_named(s: Scanner, m: re.Match[str]) -> None:
    _prefer(s, m, m.group("gpu").upper().replace(" ", ""), claim=True)


def memory_note(kind: str) -> Callable[[Scanner, re.Match[str]], None]:
    def handler(s: Scanner, m: re.Match[str]) -> None:
        what_en, what_zh = ("GPU memory", "显存") if kind == "gpu_memory" else ("host RAM", "内存")
        if kind == "gpu_memory" and m.groupdict().get("gpu") and "gpu_preference" not in s.fields:
            # "单卡 A10 24G": the GPU named with its memory is still the GPU the user asked about
            mem = re.search(r"\d{1,6}\s*(?:gb|g)\b", m.group(0)[m.end("gpu") - m.start():], re.IGNORECASE)
            gpu = m.group("gpu").upper().replace(" ", "")
            _prefer(s, m, f"{gpu} {mem.group(0).upper().replace(' ', '')}" if mem else gpu, claim=False)
        if kind == "gpu_memory" and m.groupdict().get("one") and not _asks_availability(s, m):
            s.set("num_gpus", 1, m, claim=False)   # "a single 24GB card": one GPU of that memory
        if kind == "gpu_memory" and not m.groupdict().get("gpu") and "gpu_preference" not in s.fields:
            # "a 16GB GPU", "24G显存": the card the user has or means, asked for by its memory (every catalog GPU of that
            # size), so that a yes / no is about that card and not about a bigger one
            mem = re.search(r"(\d{1,3})\s*(?:gb|g)\b", m.group(0), re.IGNORECASE | re.ASCII)
            if mem and _catalog_gpu(f"{mem.group(1)}GB"):
                if _owned_or_asked(s, m):
                    # "24G显存够吗", "I only have 24GB of VRAM": the memory of the user's card, checked as the card
                    s.set("gpu_preference", f"{mem.group(1)}GB", m)
                    if "num_gpus" not in s.fields:   # "24G显存": one card of that memory, unless a count was said
                        s.set("num_gpus", 1, m, claim=False)
                    s.hint("gpu_preference", m, f"'{m.group(0).strip()}' read as the GPU's memory: the advisor checks "
                           f"whether a {mem.group(1)} GB card holds the job and uses it if so.",
                           f"“{m.group(0).strip()}”理解为显卡的显存：顾问会核对 {mem.group(1)} GB 的卡能否放下此作业，能放下就按它推荐。",
                           claim=False)
                    return
                s.set("gpu_preference", f"{mem.group(1)}GB", m, claim=False)
        s.hint(kind, m, f"'{m.group(0).strip()}' read as {what_en}: the advisor sizes it itself and will compare.",
               f"“{m.group(0).strip()}”理解为{what_zh}：顾问会自行估算并与之比较。")
    return handler


_OWNED_BEFORE = re.compile(r"(?:有|只有|仅有|我的|手上|手里|\bhave|\bhas|\bonly|\bwith|\bmy|\bour)\s*(?:一张|一块|单卡|a|an|one)?\s*$",
                           re.IGNORECASE)
_ASKED_AFTER = re.compile(r"^\s*(?:的)?\s*(?:显卡|卡|gpu|card)?\s*(?:能|可以|够|行|跑得|装得|放得|\bis\b|\benough|\bsuffic|\bok\b)",
                          re.IGNORECASE)


def asks_availability(text: str, at: int, length: int) -> bool:
    """Whether the clause that names a card (or a card's memory) at ``at`` asks if (or where) the cloud offers it (the
    lexicon's gpu_availability: "有没有 80G 显存的卡", "is there a 96GB GPU", "北京地域有没有 H20"), with no ownership
    cue (owned_hardware) anywhere in the question: no card of the user's and no count of one."""
    kw = load_lexicon().keywords
    cue, mine = kw.get("gpu_availability"), kw.get("owned_hardware")
    if at < 0 or cue is None or (mine is not None and mine.search(text)):
        return False
    marks = r"[，。；！？,;!?]"
    start = max((x.end() for x in re.finditer(marks, text[:at])), default=0)
    after = re.search(marks, text[at + length:])
    return cue.search(text[start:at + length + after.start() if after else len(text)]) is not None


def _asks_availability(s: Scanner, m: re.Match[str]) -> bool:
    return asks_availability(s.text, m.start(), m.end() - m.start())


def _owned_or_asked(s: Scanner, m: re.Match[str]) -> bool:
    """A stated GPU memory that is the user's card ("我只有24G显存", "24G显存够吗", "is 24GB VRAM enough"), not a
    figure the user read somewhere ("显存占用 20G")."""
    if _asks_availability(s, m):
        return False   # "有没有 80G 显存的卡", "do you have 80GB cards": whether such a card exists, not the user's card
    before = s.text[max(0, m.start() - 12):m.start()]
    return bool(_OWNED_BEFORE.search(before)
                or _ASKED_AFTER.match(s.text[m.end():m.end() + 16]))


def card_memory(s: Scanner, m: re.Match[str]) -> None:
    """"on a 24 GB card", "24G 的显卡", "a GPU with 24 GB": the memory of the card the user means, never a dataset size.
    With no GPU named it is the preference (every catalog GPU of that memory); else a note."""
    mem = m.group("mem") or m.group("mem2")
    if m.group("num") and "num_gpus" not in s.fields:   # "一张 24G 的显卡": the count of those cards
        s.set("num_gpus", _int(m), m)
    if "gpu_preference" not in s.fields and _catalog_gpu(f"{mem}GB"):
        s.set("gpu_preference", f"{mem}GB", m)
        s.hint("gpu_preference", m, f"'{m.group(0).strip()}' read as the GPU's memory: the advisor checks whether a "
               f"{mem} GB card holds the job and uses it if so.",
               f"“{m.group(0).strip()}”理解为显卡的显存：顾问会核对 {mem} GB 的卡能否放下此作业，能放下就按它推荐。", claim=False)
        return
    s.hint("gpu_memory", m, f"'{m.group(0).strip()}' read as GPU memory: the advisor sizes it itself and will compare.",
           f"“{m.group(0).strip()}”理解为显存：顾问会自行估算并与之比较。")


def money(field: str) -> Callable[[Scanner, re.Match[str]], None]:
    def handler(s: Scanner, m: re.Match[str]) -> None:
        value = _num(m)
        cur = (m.groupdict().get("cur") or "") + (m.groupdict().get("cur1") or "")
        if value is None or value <= 0:
            return
        if re.search(r"usd|美元|美金|dollar|\$", cur, re.IGNORECASE):
            s.hint("currency", m, f"Converted USD to CNY at {USD_TO_CNY} CNY/USD.",
                   f"美元已按 {USD_TO_CNY} 元/美元 换算为人民币。", claim=False)
            value *= USD_TO_CNY
        s.set(field, round(value, 2), m)
    return handler


def per_period(s: Scanner, m: re.Match[str]) -> None:
    """A monthly or daily budget becomes an hourly cap (720 h a month, 24 h a day), said in a hint."""
    if not (m.group("cur") or m.group("cur1") or MONEY_WORD.search(m.group(0))):
        return  # "每天大概5000次对话": a count per day, not money (no currency and no budget word)
    per = m.group("per").lower()
    hours = 24 if any(w in per for w in ("天", "日", "day", "daily")) else 720
    before = dict(s.fields)
    money("budget_per_hour")(s, m)
    if s.fields.get("budget_per_hour") and "budget_per_hour" not in before:
        s.fields["budget_per_hour"] = round(s.fields["budget_per_hour"] / hours, 2)
        s.understood[-1] = s.understood[-1]._replace(value=s.fields["budget_per_hour"])
        s.hint("budget_period", m, f"A budget per {'day' if hours == 24 else 'month'} read as an hourly cap "
               f"(÷{hours} hours of running).", f"按{'天' if hours == 24 else '月'}的预算换算为每小时上限（÷{hours} 小时）。",
               claim=False)


def _by_tomorrow(s: Scanner, m: re.Match[str]) -> None:
    """"by tomorrow" / "明天之前完成": a 24-hour deadline, said back in a hint."""
    s.set("deadline_hours", 24.0, m)
    s.hint("deadline", m, f"'{m.group(0).strip()}' read as a 24-hour deadline.", f"“{m.group(0).strip()}”按 24 小时期限理解。",
           claim=False)


def deadline(s: Scanner, m: re.Match[str]) -> None:
    value = _num(m)
    if value:
        s.set("deadline_hours", value * HOURS[m.group("unit").lower()], m)


TOKEN_MULT = {"万": 1e4, "亿": 1e8, "k": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
              "t": 1e12, "trillion": 1e12, "千亿": 1e11, "万亿": 1e12}


def training_tokens(s: Scanner, m: re.Match[str]) -> None:
    value = to_number(m.group("num"))
    if value:
        s.set("training_tokens_billion", value * TOKEN_MULT[m.group("mult").lower()] / 1e9, m)


def per_day(s: Scanner, m: re.Match[str]) -> None:
    value = _num(m)
    if not value:
        return
    s.claim(m)
    avg = value / 86400
    if s.fields.get("requests_per_second") is None and s.fields.get("concurrent_users") is None and avg >= 0.001:
        # the average rate sizes the replicas (a floor, said so): sizing at one concurrent sequence would serve less
        s.set("requests_per_second", float(f"{avg:.3g}"), m, claim=False)
        s.hint("daily_average", m, f"{value:,.0f} requests a day = {avg:.3g} a second on average (/ 86,400 s): the replicas "
               "below are sized at this average, a floor; a service is sized for its peak, so state the peak requests "
               "per second or concurrency (e.g. 'peak 5 requests/s')",
               f"每天 {value:,.0f} 次请求 = 平均每秒 {avg:.3g} 个（÷ 86,400 秒）：下面的副本数按这一平均值估算，是下限；服务应按高峰"
               "估算，请给出高峰每秒请求数或并发（如“高峰每秒 5 个请求”）", claim=False)
        return
    s.note_unused(m.group(0), f"requests a day: {value:,.0f} / 86,400 s = {avg:.3g} a second on average; a service is sized "
                  "for its peak (state the peak concurrency or requests per second, e.g. 'peak 20 concurrent')",
                  f"每天的请求数：{value:,.0f} ÷ 86,400 秒 = 平均每秒 {avg:.3g} 个；服务按高峰估算（请给出高峰并发或每秒请求数，如“高峰并发 20”）")


def request_rate(s: Scanner, m: re.Match[str]) -> None:
    """"每秒 200 张" / "200 QPS" is a rate (requests_per_second), not a dataset size."""
    value = _num(m)
    if value:
        s.set("requests_per_second", value, m)


def video_streams(s: Scanner, m: re.Match[str]) -> None:
    """"10路视频流", "16 camera streams": a count of streams, a rate only with their frame rate (combine_streams)."""
    value = _int(m)
    if value and "_streams" not in s.fields:
        s.claim(m)
        s.fields["_streams"] = (value, m.group(0).strip())


def frame_rate(s: Scanner, m: re.Match[str]) -> None:
    value = _num(m)
    if value and "_fps" not in s.fields:
        s.claim(m)
        s.fields["_fps"] = (value, m.group(0).strip())


def combine_streams(s: Scanner) -> None:
    """Streams x frames per second = the images per second the service must take (requests_per_second), said back;
    either one alone is said back as not used, with what is missing (never dropped)."""
    streams, fps = s.fields.pop("_streams", None), s.fields.pop("_fps", None)
    if streams and fps and "requests_per_second" not in s.fields:
        rate = streams[0] * fps[0]
        s.set("requests_per_second", rate, f"{streams[1]} × {fps[1]}", claim=False)
        return
    if streams:
        s.note_unused(streams[1], "a number of video streams: give the frames per second each one is processed at "
                      "(streams × fps = images per second to size the service)",
                      "视频路数：请说明每路每秒处理多少帧（路数 × 帧率 = 每秒图像数，才能估算服务规模）")
    if fps and not streams:
        s.note_unused(fps[1], "a frame rate without the number of streams (streams × fps = images per second)",
                      "只有帧率、没有路数（路数 × 帧率 = 每秒图像数）")


def concurrent_users(s: Scanner, m: re.Match[str]) -> None:
    """"200 concurrent users" / "32并发": requests in flight; for serving also the batch one replica holds."""
    value = _int(m)
    if value and s.set("concurrent_users", value, m):
        # the sequences one replica holds at once: a field of the job, not a second thing the user said (a "Batch per
        # GPU" row would misread under tensor parallelism, where every GPU of the replica serves all of them)
        s.fields.setdefault("batch_size_per_gpu", value)


def users_at_once(s: Scanner, m: re.Match[str]) -> None:
    """"for 100 users", "支持200人": read as users served at once (the KV cache and batch are sized for them), and said
    so, since the words also fit everyone who uses the service (a population: gpu_advisor.ask.population)."""
    concurrent_users(s, m)
    after = s.text[m.end():m.end() + 16]
    if re.match(r"同时|在线", m.group(0)) or re.match(r"\s*(?:同时|在线|并发|concurrent|at once|at the same time|simultaneous)",
                                                    after, re.IGNORECASE) or s.fields.get("concurrent_users") != _int(m):
        return
    from gpu_advisor.ask.population import share

    n = _int(m) or 0
    part = float(share()["active_share"])
    peak = max(1, math.ceil(n * part))
    s.hint("users_at_once", m, f"'{m.group(0).strip()}' read as {n:,} users served at the same moment; if {n:,} is "
           f"everyone who uses it, about {part:.0%} are active at once (public capacity-planning guidance): say 'peak "
           f"{peak:,} concurrent'.", f"“{m.group(0).strip()}”按同时在用的 {n:,} 个用户估算；如果 {n:,} 是总用户数，同时在用的约为 "
           f"{part:.0%}（公开的容量规划经验）：请写“高峰并发 {peak:,}”。", claim=False)


def active_users(s: Scanner, m: re.Match[str]) -> None:
    s.claim(m)
    s.note_unused(m.group(0), "daily / monthly active users: not a concurrency; the KV cache and the batch are sized "
                  "from the users served at the same moment (state the peak concurrency, e.g. '50 concurrent')",
                  "日活 / 月活不是并发数：KV cache 与批大小按同一时刻在处理的请求数估算（请给出高峰并发，如“并发 50”）")


def seq_len(s: Scanner, m: re.Match[str]) -> None:
    value = _num(m)
    if value:
        count = int(value * (1024 if m.groupdict().get("k") else 1)) if math.isfinite(value) else _int(m)
        s.set("seq_len", count, m)


def prompt_output(s: Scanner, m: re.Match[str]) -> None:
    """Serving: the sequence is the prompt plus the output (Workload.seq_len); the output is kept as its own value."""
    a = int(m.group("a")) * (1024 if m.group("ka") else 1)
    b = int(m.group("b")) * (1024 if m.group("kb") else 1)
    s.set("seq_len", a + b, m)
    s.set("output_tokens", b, m, claim=False)


def output_only(s: Scanner, m: re.Match[str]) -> None:
    """Serving: an output length stated without the prompt ("每个回答 1000 token"): the output; the sequence (prompt +
    output) stays the stated or default context, which must be longer than the output."""
    if s.fields.get("output_tokens") is not None:
        return
    for g in ("", "2", "3"):
        if m.group("b" + g):
            b = int(m.group("b" + g)) * (1024 if m.group("kb" + g) else 1)
            break
    else:
        return
    if _TRAINING_WORDS.search(s.text):
        return   # "fine-tune on 500-token answers": sample lengths of a training set, not a serving output
    seq = s.fields.get("seq_len")
    if seq is not None and b >= seq:
        s.note_unused(m.group(0).strip(), f"an output of {b} tokens is not shorter than the context of {seq} tokens "
                      "(the context holds prompt + output)", f"输出 {b} token 不短于上下文 {seq} token（上下文包含输入和输出）")
        return
    s.set("output_tokens", b, m)


@lru_cache(maxsize=1)
def text_units() -> dict:
    """knowledge/ask/lexicon.yaml `text_units`: tokens per Chinese character and per English word, with sources."""
    from importlib.resources import files

    from gpu_advisor.util import yamlio

    raw = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath("ask/lexicon.yaml").read_text(encoding="utf-8"))
    return dict(raw["text_units"])


def _unit_words(unit: str) -> str:
    return "|".join(sorted(text_units()[unit]["words"], key=len, reverse=True))


def output_text(s: Scanner, m: re.Match[str]) -> None:
    """Serving: an output length in characters or words ("回答平均 300 字", "answers of about 200 words"): tokens by
    the lexicon's ratio (text_units, cited), said back with the ratio and its source."""
    if s.fields.get("output_tokens") is not None or _TRAINING_WORDS.search(s.text):
        return
    zh = m.group("b") is not None
    count = int(m.group("b") if zh else m.group("b2"))
    unit = text_units()["zh_chars" if zh else "en_words"]
    ratio = float(unit["tokens_per_unit"])
    tokens = max(1, math.ceil(count * ratio))
    seq = s.fields.get("seq_len")
    if seq is not None and tokens >= seq:
        return
    if s.set("output_tokens", tokens, m):
        what_en, what_zh = ("Chinese characters", "个汉字") if zh else ("words", "个英文词")
        s.hint("text_length", m, f"{count} {what_en} ≈ {tokens} tokens at {ratio:g} tokens a "
               f"{'character' if zh else 'word'} ({unit['source']}); the model's own tokenizer gives the exact count.",
               f"{count} {what_zh} ≈ {tokens} 个 token（按每{'字' if zh else '词'} {ratio:g} 个 token，{unit['source']}）；"
               "确切数字以模型自己的分词器为准。", claim=False)


def prompt_output_short(s: Scanner, m: re.Match[str]) -> None:
    """Serving: "1k in / 300 out" (or "in 1k / out 300"): prompt and output tokens, as prompt_output."""
    g = "" if m.group("a") else "2"
    a = int(m.group("a" + g)) * (1024 if m.group("ka" + g) else 1)
    b = int(m.group("b" + g)) * (1024 if m.group("kb" + g) else 1)
    s.set("seq_len", a + b, m)
    s.set("output_tokens", b, m, claim=False)


_TRAINING_WORDS = re.compile(r"train|fine[\s-]*tun|\bsft\b|lora|微调|训练|精调", re.IGNORECASE)


def prompt_only(s: Scanner, m: re.Match[str]) -> None:
    """"2k prompts": the prompt is the sequence's length (the output, not stated, adds to it)."""
    num, k = (m.group("num"), m.group("k")) if m.group("num") else (m.group("num2"), m.group("k2"))
    if m.group("num") and "token" not in m.group(0).lower() and _TRAINING_WORDS.search(s.text):
        return   # "fine-tune on 10k prompts": a count of training samples, not a length
    s.set("seq_len", int(num) * (1024 if k else 1), m)
    s.fields["_serving_prompt"] = m.group(0).strip()   # a prompt is a serving load (keywords._serving_load)


def resolution_pair(s: Scanner, m: re.Match[str]) -> None:
    s.set("input_size", [int(m.group("a")), int(m.group("b"))], m)


RES_NAMES = {"2": [1440, 2560], "4": [2160, 3840], "8": [4320, 7680],
             "720": [720, 1280], "1080": [1080, 1920], "1440": [1440, 2560], "2160": [2160, 3840]}


def resolution_named(s: Scanner, m: re.Match[str]) -> None:
    """"4K images" is a resolution, "4k images" a count: lower-case k before a count noun is left alone."""
    after = s.text[m.end():m.end() + 12]
    if m.groupdict().get("k") == "k" and re.match(rf"\s*{COUNT_NOUNS}", after, re.IGNORECASE):
        return
    s.set("input_size", RES_NAMES[m.group("res")], m)


def resolution_square(s: Scanner, m: re.Match[str]) -> None:
    side = _int(m)
    if side:
        s.set("input_size", [side, side], m)


def _other_size(s: Scanner, m: re.Match[str], billions: float) -> bool:
    """A size beside a model the knowledge base knows ("Qwen2.5 7B or 14B"): not the named model's parameter count, so
    never a field that would size the named model at another size; said back (True) unless it is the model's own."""
    resolved = s.resolved.get("model")
    if not resolved or resolved[0] != "transformers":
        return False
    from gpu_advisor.kb.models import knowledge

    own = float(knowledge().transformers[resolved[1]].params_billion or 0)
    if own and abs(billions - own) <= 0.15 * own:
        return False          # the named model's own size, restated ("DeepSeek-V3 (671B MoE)")
    s.claim(m)
    s.note_unused(m.group(0), f"another size beside the named model {s.fields.get('model')}: only the named model is "
                  "sized; ask again for the other size", f"所述模型 {s.fields.get('model')} 之外的另一个参数量：只按所述模型估算；"
                  "另一个请再问一次")
    return True


SIZE_SEP = r"(?:到|至|~|-|–|to|or|and|和|或|或者|还是|、|/)"


def params_range(s: Scanner, m: re.Match[str]) -> None:
    """"7B到14B的模型", "7-14B", "7B or 14B", "7B、14B、32B": sized at the largest (the one that has to fit), said back."""
    sizes = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", m.group(0))]
    a, b = min(sizes), max(sizes)
    if a == b:
        return
    if "model" in s.resolved:
        s.claim(m)
        s.note_unused(m.group(0), "sizes beside a named model: the named model is sized", "已指定模型：按该模型估算，不按这些参数量")
        return
    hi = max(a, b)
    s.set("params_billion", round(hi, 4), m)
    others = ", ".join(f"{x:g}B" for x in sorted(set(sizes)) if x != hi)
    s.hint("params_range", m, f"'{m.group(0).strip()}': several sizes, sized at the largest, {hi:g}B (a plan for it holds "
           f"the smaller too); ask again with {others} for a plan of its own.",
           f"“{m.group(0).strip()}”：多个参数量，按最大的 {hi:g}B 估算（放得下它也就放得下较小的）；{others} 的单独方案请再问一次。",
           claim=False)


def params(s: Scanner, m: re.Match[str]) -> None:
    value = _num(m)
    unit = (m.groupdict().get("unit") or "b").lower()
    if value:
        billions = value if unit in ("b", "billion", "bn") else value / 1e9
        if _other_size(s, m, billions):
            return
        s.set("params_billion", round(billions, 4), m)


def dataset_size(s: Scanner, m: re.Match[str]) -> None:
    value = float(m.group("num"))
    factor = {"t": 1000, "tb": 1000, "pb": 1e6, "p": 1e6, "g": 1, "gb": 1, "m": 1e-3, "mb": 1e-3}
    s.set("dataset_size_gb", round(value * factor[m.group("unit").lower()], 3), m)


def detection_schedule(s: Scanner, m: re.Match[str]) -> None:
    """"1x schedule": 12 epochs per x (MMDetection schedule_1x.py max_epochs=12; Detectron2 1x = 90k iters x 16)."""
    n = _int(m)
    if n and s.set("epochs", float(12 * n), m):
        s.hint("epochs", m, f"'{m.group(0).strip()}' read as {12 * n} epochs (the 1x detection schedule is 12 epochs: "
               "MMDetection schedule_1x.py, Detectron2 90k iterations x 16 images on COCO).",
               f"“{m.group(0).strip()}”理解为 {12 * n} 轮（检测的 1x 训练计划为 12 轮：MMDetection schedule_1x.py，"
               "Detectron2 在 COCO 上 9 万次迭代 × 16 张）。", claim=False)


def int_field(field: str, mult: int = 1) -> Callable[[Scanner, re.Match[str]], None]:
    def handler(s: Scanner, m: re.Match[str]) -> None:
        value = _int(m)
        if value is not None:
            s.set(field, value * mult, m)
    return handler


def float_field(field: str) -> Callable[[Scanner, re.Match[str]], None]:
    def handler(s: Scanner, m: re.Match[str]) -> None:
        value = _num(m)
        if value is not None:
            s.set(field, value, m)
    return handler


def per_machine_asked(s: Scanner, m: re.Match[str]) -> None:
    """"几台8卡机器": 8 is the size of a machine, not the job's GPU count (that is what is asked): said back; the GPU
    named with it is the preference."""
    s.claim(m)
    per = m.group("per") or m.group("per_en")
    s.note_unused(m.group(0), f"{per} GPUs per machine: the machine count is what is asked, so the GPU count is left to "
                  "the plan (instance types of up to that many GPUs, then more machines)",
                  f"每台 {per} 卡：问的是机器数，因此总卡数由方案决定（单机最多 {per} 卡，不够再加机器）")
    if m.groupdict().get("gpu"):
        _prefer(s, m, m.group("gpu").upper().replace(" ", ""), claim=False)


def gpus_nodes(s: Scanner, m: re.Match[str]) -> None:
    nodes = EN_NUMBERS.get((m.group("nodes") or "").lower()) or to_number(m.group("nodes"))
    per = EN_NUMBERS.get((m.group("per") or "").lower()) or to_number(m.group("per"))
    if nodes and per:
        s.set("num_nodes", int(nodes), m, claim=False)
        s.set("num_gpus", int(nodes * per), m)
        if m.groupdict().get("gpu"):
            gpu = m.group("gpu").upper().replace(" ", "")
            if m.groupdict().get("mem"):  # "2 nodes of 8x A100 80GB": the card's memory, not a dataset size
                gpu = f"{gpu} {m.group('mem').strip(' -').upper()}"
            _prefer(s, m, gpu, claim=False)


def gpus_by_images(s: Scanner, m: re.Match[str]) -> None:
    s.set("num_gpus", int(m.group("gpus")), m)
    s.set("batch_size_per_gpu", int(m.group("per")), m, claim=False)


def nodes_total(s: Scanner, m: re.Match[str]) -> None:
    """"两机十六卡" / "单机八卡": nodes and the total GPUs."""
    nodes = 1 if m.group("nodes") == "单" else (EN_NUMBERS.get(m.group("nodes").lower()) or to_number(m.group("nodes")))
    total = EN_NUMBERS.get(m.group("total").lower()) or to_number(m.group("total"))
    if nodes and total:
        s.set("num_nodes", int(nodes), m, claim=False)
        s.set("num_gpus", int(total), m)


def latency_target(s: Scanner, m: re.Match[str]) -> None:
    s.claim(m)
    s.note_unused(m.group(0), "a latency target: it does not size the plan; compare it with the answer's serving-speed "
                  "line (time to first token from the prompt and output lengths, prefill alone when no output length is "
                  "given), then measure on one replica at your concurrency (vLLM benchmark_serving reports TTFT and TPOT) "
                  "and add replicas if it is missed",
                  "延迟目标：不参与配置选择；请与答案中的服务速度一行对照（给出提示与输出长度时含首 token 延迟，"
                  "未给输出长度时为单条提示的预填充时间），再在单副本、按你的并发实测（vLLM benchmark_serving 会给出 "
                  "TTFT 和 TPOT），达不到就增加副本")


def throughput(s: Scanner, m: re.Match[str]) -> None:
    s.claim(m)
    from gpu_advisor.ask.latency import USER_SPEED

    said = USER_SPEED.search(s.text, max(0, m.start() - 12))
    if said is not None and said.start() <= m.start() < said.end():   # "每个用户 30 token/s": a per-user speed
        s.note_unused(m.group(0), "a per-user speed target: it does not size the plan; the answer compares it with the "
                      "per-user speed of the recommended replica", "每用户速度目标：不参与配置选择；答案把它与推荐副本的每用户速度对照")
        return
    s.note_unused(m.group(0), "a token-throughput target: gpu-advisor sizes the memory of a replica and does not turn "
                  "tokens per second into replicas; measure one replica's tokens/s under load",
                  "token 吞吐目标：gpu-advisor 估算单个副本的显存，不把每秒 token 数换算成副本数；请压测单副本的吞吐")


def nodes_only(s: Scanner, m: re.Match[str]) -> None:
    nodes = EN_NUMBERS.get((m.group("nodes") or "").lower()) or to_number(m.group("nodes"))
    if nodes:
        s.set("num_nodes", int(nodes), m)


def multi_node(s: Scanner, m: re.Match[str]) -> None:
    if any(h.kind == "single_node" for h in s.hints):   # "不用多机", "no multi-node": one machine, no multi-node note
        s.claim(m)
        return
    s.hint("multi_node", m, "Multi-node training: whether the nodes need RDMA / eRDMA depends on the gradient "
           "traffic per step against its compute; say how many nodes to size it.",
           "多机训练：节点之间是否必须 RDMA / eRDMA 取决于每步梯度通信量与计算时间之比；请说明几台机器以便估算。")


def iterations(s: Scanner, m: re.Match[str]) -> None:
    """Optimizer steps: kept until the batch and the dataset are known (parser._iterations), never dropped."""
    value = _int(m)
    before = s.text[max(0, m.start() - 24):m.start()]
    if re.search(r"(?:warm[\s_-]*up|预热|every|each|每隔?|save|eval|log)\w*\s*(?:=|:|为|of)?\s*$", before, re.IGNORECASE):
        s.claim(m)   # "warmup 100 steps", "每 500 步保存": a schedule's detail, not the length of training
        s.note_unused(before.split(",")[-1].strip() + " " + m.group(0).strip() if before.strip() else m.group(0),
                      "a step count of the schedule (warm-up, evaluation, saving), not the training length: it sizes nothing",
                      "调度中的步数（预热、评估、保存），不是训练总步数：不影响估算")
        return
    if value and value >= 1 and "_iters" not in s.fields:
        s.claim(m)
        s.fields["_iters"] = (value, m.group(0).strip())


def hyper_parameter(s: Scanner, m: re.Match[str]) -> None:
    s.claim(m)
    if re.match(r"gpu", m.group(0), re.IGNORECASE):   # vLLM --gpu-memory-utilization
        s.note_unused(m.group(0), "vLLM's share of GPU memory it may take: the plan keeps its own headroom (5 %) and sizes "
                      "the KV cache for the load stated", "vLLM 可占用的显存比例：方案自留 5 % 余量，并按所述负载估算 KV cache")
        return
    s.note_unused(m.group(0), "a training or sampling hyper-parameter: it changes neither the memory nor the GPUs the job needs",
                  "训练或采样超参数：不影响作业所需的显存与 GPU")


def grad_accumulation(s: Scanner, m: re.Match[str]) -> None:
    """"gradient accumulation 8", "梯度累积 8 步", "gradient_accumulation_steps=8": said back, it sizes nothing. Memory is
    per micro-batch and the time counts the samples, not the optimizer steps; the global batch is micro-batch x this
    x GPUs."""
    s.claim(m)
    k = _int(m)
    s.note_unused(m.group(0), f"gradient accumulation over {k} micro-steps: it sets the global batch (micro-batch x {k} x "
                  "GPUs), not the memory per GPU (one micro-batch at a time) nor the time (the same samples are "
                  "processed); a plan that lowers the micro-batch keeps the global batch by accumulating more",
                  f"梯度累积 {k} 步：决定全局 batch（微批 × {k} × GPU 数），不影响每卡显存（每次只有一个微批）与耗时"
                  "（处理的样本数不变）；方案若减小微批，会相应增加累积步数以保持全局 batch")


def global_batch(s: Scanner, m: re.Match[str]) -> None:
    s.fields["_global_batch"] = _int(m)
    s.hint("global_batch", m, "Global batch noted; it is divided by the number of GPUs.",
           "已记录全局 batch；会按 GPU 数换算为每卡 batch。")


def pytorch(s: Scanner, m: re.Match[str]) -> None:
    s.set("pytorch_version", m.group("ver"), m)


def months_named(value: float) -> Callable[[Scanner, re.Match[str]], None]:
    def handler(s: Scanner, m: re.Match[str]) -> None:
        s.set("expected_months_of_use", value, m)
    return handler


def region_id(s: Scanner, m: re.Match[str]) -> None:
    s.set("region", m.group(0).lower(), m)


def _params_cn(s: Scanner, m: re.Match[str]) -> None:
    value = to_number(m.group("num"))
    scale = {"亿": 1e8, "万": 1e4, "百万": 1e6, "千万": 1e7, "billion": 1e9, "bn": 1e9, "b": 1e9,
             "million": 1e6, "m": 1e6}[m.group("unit").lower()]
    if value:
        s.set("params_billion", round(value * scale / 1e9, 4), m)


def _gpus_word(s: Scanner, m: re.Match[str]) -> None:
    s.set("num_gpus", 1 if m.group("word") == "单" else 2, m)


def lora_rank(s: Scanner, m: re.Match[str]) -> None:
    s.set("lora_rank", int(m.group("num") or m.group("num2") or m.group("num3")), m)


def _workers(s: Scanner, m: re.Match[str]) -> None:
    s.set("data_loader_workers", int(m.group("num") or m.group("num2")), m)


EXTRACTORS: list[tuple[Callable[[], str], Callable[[Scanner, re.Match[str]], None]]] = [
    (lambda: r"\b(?:cn|ap|eu|us|me|na)-[a-z]+(?:-\d+[a-z]?)?\b", region_id),
    # "需要几台8卡机器", "how many 8-GPU machines": the GPUs of one machine, asked with the machine count free
    (lambda: rf"(?:几|多少)\s*台\s*(?P<per>\d{{1,2}}|[一二两四八]|十六)\s*(?:张)?\s*卡\s*(?:的)?\s*(?:{_gpus_pattern()}\s*)?(?:机器|服务器|节点|实例|主机)"
             rf"|\bhow\s+many\s+(?P<per_en>\d{{1,2}})\s*-?\s*(?:x\s*)?(?:gpus?|cards?)\s*(?:{_gpus_pattern().replace('(?P<gpu>', '(?:')}\s*)?(?:machines|nodes|servers|instances|boxes)\b", per_machine_asked),
    # serving shorthand for prompt and output tokens: "1k in / 300 out", "2k tokens in, 500 out", "in 1k / out 300"
    (lambda: r"(?<![\w.])(?P<a>\d{1,7})\s*(?P<ka>k)?\s*(?:tokens?\s*)?in\s*(?:/|,|，|、|and|\+)\s*(?P<b>\d{1,7})\s*(?P<kb>k)?\s*(?:tokens?\s*)?out\b"
             r"|\bin\s*(?P<a2>\d{1,7})\s*(?P<ka2>k)?\s*(?:tokens?)?\s*(?:/|,|，|、|and|\+)\s*out\s*(?P<b2>\d{1,7})\s*(?P<kb2>k)?(?![\w.])", prompt_output_short),
    (lambda: rf"(?<![\w.])(?P<nodes>(?:\d{{1,4}}|[一二两三四五六七八九十]{{1,3}}|two|three|four|five|six|eight|sixteen))\s*(?:台|个节点|节点|nodes?|machines?|servers?|instances?|hosts?)\s*(?:机器|服务器)?\s*(?:x|\*|,|，|、|of|with|each with|each having|,? each)?\s*(?:每台|每个节点|每台机器|每个|each)?\s*(?:机器)?\s*(?:有|带|配|装)?\s*(?P<per>(?:\d{{1,4}}|[一二两三四五六七八九十]{{1,3}}|two|three|four|five|six|eight|sixteen))\s*(?:张|块)?\s*(?:卡|gpus?|cards?|x?\s*(?:nvidia\s*)?{_gpus_pattern()}(?P<mem>\s*-?\s*\d{{2,3}}\s*gb?\b(?!\s*(?:的)?\s*(?:数据|dataset|data)))?)", gpus_nodes),
    # "4x8 A100", "4 x 8 卡 A100", "2x8 GPUs": machines x GPUs per machine (a per-machine count of 1, 2, 4, 8 or 16,
    # followed by GPUs or a GPU's name), before a resolution ("640x640") or "8 GPUs x 2 images" can take the pair
    (lambda: rf"(?<![\w.])(?P<nodes>\d{{1,3}})\s*(?:x|\*)\s*(?P<per>1|2|4|8|16)(?=\s*(?:张|块)?\s*(?:卡|gpus?\b|cards?\b|(?:nvidia\s*)?{_gpus_pattern().replace('(?P<gpu>', '(?:')}))\s*(?:(?:张|块)?\s*(?:卡|gpus?\b|cards?\b))?\s*(?:(?:nvidia\s*)?{_gpus_pattern()}(?P<mem>\s*-?\s*\d{{2,3}}\s*gb?\b(?!\s*(?:的)?\s*(?:数据|dataset|data)))?)?", gpus_nodes),
    (lambda: r"(?<![\w.])(?P<nodes>(?:\d{1,4}|[一二两三四五六七八九十]{1,3}|two|three|four|five|six|eight|sixteen))\s*(?:台机器|台服务器|个节点|nodes\b|machines\b|servers\b)", nodes_only),
    # MMSeg / MMDet schedules: "8 GPUs x 2 images", "8 卡 x 2 张图": GPUs and the batch of each
    (lambda: r"(?<![\w.])(?P<gpus>\d{1,4})\s*(?:gpus?|卡|cards?)\s*(?:x|\*)\s*(?P<per>\d{1,4})\s*(?:images?|imgs?|samples?|张图|张)(?![a-z])", gpus_by_images),
    # "two 8-GPU nodes", "two 8-GPU A100 nodes", "2 8-GPU H20 80GB machines": the GPU named between is the preference
    # "two 8-GPU machines", "one 8-GPU machine", "a single 8-GPU node": machines x GPUs per machine
    (lambda: rf"(?<![\w.])(?:a\s+)?(?P<nodes>(?:\d{{1,4}}|[一二两三四五六七八九十]{{1,3}}|one|a|an|single|two|three|four|five|six|eight|sixteen))\s*(?P<per>(?:\d{{1,4}}|[一二两三四五六七八九十]{{1,3}}|two|three|four|five|six|eight|sixteen))\s*-?\s*gpus?\s*(?:(?:nvidia\s*)?{_gpus_pattern()}(?P<mem>\s*-?\s*\d{{2,3}}\s*gb?\b)?\s*)?(?:nodes?|machines?|servers?|instances?|box(?:es)?)\b", gpus_nodes),
    (lambda: r"(?P<nodes>单|(?:\d{1,4}|[一二两三四五六七八九十]{1,3}|two|three|four|five|six|eight|sixteen))\s*机\s*(?P<total>(?:\d{1,4}|[一二两三四五六七八九十]{1,3}|two|three|four|five|six|eight|sixteen))\s*卡", nodes_total),
    # "expert parallel 8", "EP=8", "专家并行 8": the routed experts split over that many GPUs (Workload.expert_parallel)
    (lambda: r"(?:expert[\s_-]*parallel(?:ism)?(?:[\s_-]*size)?|\bep(?=\s*[=:])|专家并行(?:度|数)?)\s*(?:=|:|size|degree|of|为|是|设为)?\s*(?P<num>\d{1,4})\b", int_field("expert_parallel")),
    (lambda: r"(?:tensor[\s_-]*parallel(?:ism)?(?:[\s_-]*size)?|\btp(?:[\s_-]*size)?|张量并行(?:度|数)?)\s*(?:=|:|size|degree|of|为|是|设为)?\s*(?P<num>\d{1,3})\b", int_field("num_gpus")),
    # latency targets ("首token延迟要低于1秒", "TTFT under 500 ms", "p99 latency < 2s"): said back, not sized
    (lambda: r"(?:(?<![\w.])p\d{2}\s*)?(?:首\s*token|首字|ttft|time[\s-]*to[\s-]*first[\s-]*token|tpot|(?:p\d{2}\s*)?latency|延迟|时延|响应时间)\s*(?:延迟|时间)?\s*(?:要|需要|必须)?\s*(?:低于|小于|不超过|控制在|在|<=?|under|below|within|of|less than|at most)?\s*(?P<num>\d{1,6}(?:\.\d{1,3})?)\s*(?:ms|毫秒|s\b|秒|sec\w*)(?:\s*(?:以内|以下|内))?", latency_target),
    (lambda: rf"{NM}\s*tokens?\s*(?:/\s*(?:s|sec|秒)\b|per\s+second|每秒)", throughput),
    (lambda: rf"(?:吞吐|throughput)\s*(?:量)?\s*(?:为|是|of|约|大概)?\s*{NM}\s*(?:tokens?)?\s*(?:/\s*(?:s|秒)|per\s+second)?", throughput),
    (lambda: r"多机|多节点|multi[\s-]*node|multiple (?:nodes|machines)|across nodes|分布式多机", multi_node),
    # instance families and types of the catalog ("gn7i", "ecs.gn8is-2x.8xlarge"): read as the GPU they carry
    (lambda: _family_pattern(), _family_named),
    # GPU counts with a model: "两张A10", "8x A100", "8卡A100", "A100 x 8", "two A10s"
    (lambda: rf"(?:{N}|\b{EN_N})\s*(?:张|块|个|台|x|\*)?\s*(?:卡)?\s*(?:nvidia\s*)?{_gpus_pattern()}s?\b(?P<mem>\s*-?\s*\d{{2,3}}\s*gb?\b(?!\s*(?:的)?\s*(?:数据|dataset|data)))?", gpu_count_named),
    (lambda: rf"{_gpus_pattern()}(?P<mem>\s*-?\s*\d{{2,3}}\s*gb?\b)?\s*(?:gpus?|显卡|卡)?\s*(?:x|\*|×)\s*(?P<num>\d{{1,12}})\b",
     gpu_count_named),   # "A100 x 8", "H100 80GB x 8"
    # "3090 两张", "A10 4张卡", "L20 两块": the count after the GPU name
    (lambda: rf"{_gpus_pattern()}\s*(?:gpus?|显卡|卡)?\s*{N}\s*(?:张|块)\s*(?:卡|显卡)?", gpu_count_named),
    # GPU memory and host RAM are notes, not fields
    (lambda: rf"(?:{_gpus_pattern()}\s*-?\s*)?(?<![\w.])\d{{1,6}}\s*(?:gb|g)\b\s*(?:的)?\s*(?:显存|vram|gpu memory)", memory_note("gpu_memory")),
    # "a 16GB GPU", "单张 24G 显卡", "one 24GB card": the memory of the card, never a dataset size
    (lambda: r"(?P<one>\b(?:a single|single|one|a)\s+|单张|一张|单卡|1\s*张)?(?<![\w.])\d{1,3}\s*(?:gb|g)\b\s*(?:的)?\s*(?:gpus?\b|cards?\b|graphics cards?|显卡|卡|vram\b|of vram)", memory_note("gpu_memory")),
    (lambda: r"(?:显存|vram|gpu memory)\s*(?:为|是|有|:)?\s*\d{1,6}\s*(?:gb|g)\b", memory_note("gpu_memory")),
    (lambda: rf"{_gpus_pattern()}\s*-?\s*(?P<mem>\d{{2,3}})\s*(?:gb|g)\b", gpu_named_memory),
    (lambda: rf"(?:{N}\s*(?:张|块)\s*)?(?<![\w.])(?P<mem>\d{{1,3}})\s*-?\s*(?:gb|g)\b\s*(?:的)?\s*(?:显卡|卡(?!时)|(?:graphics\s+)?cards?\b|gpus?\b)"
             r"|(?:(?<=gpu)|(?<=card)|(?<=显卡))\s*(?:with|of|that has|having)\s*(?P<mem2>\d{1,3})\s*(?:gb|g)\b(?!\s*(?:of\s+)?(?:的)?\s*(?:数据|dataset|data|内存|ram|host))",
     card_memory),
    (lambda: r"(?:内存|ram|system memory)\s*(?:为|是|有|:)?\s*\d{1,6}\s*(?:gb|g|tb)\b|(?<![\w.])\d{1,6}\s*(?:gb|g|tb)\b\s*(?:的)?\s*(?:内存|ram)", memory_note("ram")),
    (lambda: _gpus_pattern() + r"s?\b", gpu_named),
    # money: per hour first, then totals
    (lambda: rf"(?:每小时|每个小时|一小时|每时)\s*(?:的)?\s*(?:费用|花费|成本|预算|价格)?\s*(?:不超过|不高于|低于|小于|最多|以内|在|控制在)?\s*{CUR1}\s*{NM}\s*{CUR}?", money("budget_per_hour")),
    (lambda: rf"{CUR1}\s*{NM}\s*{CUR}?\s*(?:/|每|per|an|a)\s*(?:个)?(?:小时|hours?|hr|h)(?![a-z])", money("budget_per_hour")),
    (lambda: rf"(?:预算|budget|费用|花费)?\s*(?P<per>每月|每个月|每天|每日|per month|a month|per day|a day|monthly|daily)\s*(?:预算|费用|budget|spend(?:ing)?|cap)?\s*(?:不超过|最多|约|大概|控制在|of|is|:|=|up to|under|around|about)?\s*\s*{CUR1}\s*{NM}\s*{CUR}?", per_period),
    (lambda: rf"{CUR1}\s*{NM}\s*{CUR}?\s*(?P<per>/\s*月|/\s*month|每月|per month|a month|/\s*天|/\s*day|每天|per day|a day)", per_period),
    (lambda: rf"(?:总预算|预算|budget|总费用|总成本|总花费|花费|费用|cost)\s*(?:是|为|:|of|大概|约|在|控制在|不超过|最多|within|under|up to|<=?)?\s*(?:约|大概)?\s*{CUR1}\s*{NM}\s*{CUR}?", money("budget_total")),
    (lambda: rf"{CUR1}\s*{NM}\s*{CUR}(?!\s*(?:/|每|per))", money("budget_total")),
    (lambda: rf"(?P<cur1>¥|\$|￥)\s*{NM}", money("budget_total")),
    # deadline: "3天内", "48小时内", "within 48 hours", "一周之内", "deadline 2 days"
    (lambda: rf"{NM}\s*{TIME_UNIT}\s*(?:能|可以|能否|可否|要|需要)?\s*(?:之内|以内|内|完成|跑完|训完|训练完|搞定)", deadline),
    (lambda: rf"(?:within|in|under|by|less than|deadline(?: of)?:?|期限)\s*(?:{N}|{EN_N})\s*{TIME_UNIT}(?![a-z])", deadline),
    # a deadline written as an adjective: "we have a 6-week deadline", "a two-week timeline", "3 天的期限"
    (lambda: rf"(?:{N}|{EN_N})\s*-?\s*{TIME_UNIT}(?![a-z])\s+(?:deadline|timeline|time\s*limit|time\s*frame|timeframe|window)\b", deadline),
    (lambda: rf"{NM}\s*{TIME_UNIT}\s*的\s*(?:期限|工期|时限|截止时间)", deadline),
    # the time the user has: "我有3天时间", "只有两周的时间", "I have 3 days", "we've got 48 hours to finish it"
    (lambda: rf"(?:有|只有|还有|给|剩|剩下)\s*{NM}\s*{TIME_UNIT}\s*(?:的)?\s*(?:时间|工期)", deadline),
    (lambda: rf"(?:\bhave|\bhas|\bgot|\bgive|\bgiven)\s+(?:only\s+|just\s+)?(?:{N}|{EN_N})\s*{TIME_UNIT}(?![a-z])\s*(?:to|for|left|until)\b", deadline),
    # "by tomorrow morning (12 hours)": the hours said in brackets are the deadline, not the 24 of "tomorrow"
    (lambda: rf"(?:\bby tomorrow(?:\s+(?:morning|noon|evening|night))?|\bovernight|明天(?:早上|上午|中午|晚上)?(?:之前|前)?|明早(?:之前|前)?)\s*[(（]\s*(?:{N}|{EN_N})\s*{TIME_UNIT}\s*[)）]", deadline),
    (lambda: r"\bby tomorrow\b|\bovernight\b|明天(?:之前|前|早上前)?(?:要|得|必须)?(?:完成|训完|跑完|出结果)|明早(?:之前|前)", _by_tomorrow),
    # token counts ("1亿 tokens", "100B tokens") are not sequence lengths
    # serving prompt + output: "平均输入 3000 token，输出 500 token", "input 2k tokens and output 512 tokens"
    # ("输入 1000 输出 300": the words 输入 / 输出 name token lengths without the word token, unless a unit follows)
    (lambda: r"(?:平均)?(?:输入|input|prompts?)\s*(?:长度)?\s*(?:约|大概|is|of)?\s*(?P<a>\d{1,7})\s*(?P<ka>k)?\s*(?:个)?\s*(?:tokens?)?\s*(?:,|，|、|and|\+|加)?\s*(?:平均)?(?:输出|output|completions?|生成)\s*(?:长度)?\s*(?:约|大概|is|of)?\s*(?P<b>\d{1,7})(?![\d.])\s*(?P<kb>k)?(?:\s*(?:个)?\s*tokens?|(?!\s*(?:x|\*|×|张|幅|px|像素|类|帧|fps|images?|classes|元|小时|hours?|秒|s\b|ms|gb?\b)))", prompt_output),
    (lambda: r"(?<![\w.])(?P<a>\d{1,7})\s*(?P<ka>k)?\s*(?:个)?\s*(?:input|prompt|输入)\s*(?:tokens?)?\s*(?:,|、|and|\+|/|加)?\s*(?P<b>\d{1,7})\s*(?P<kb>k)?\s*(?:个)?\s*(?:output|completion|输出|生成)\s*(?:tokens?)?", prompt_output),
    # an output length alone: "每个回答 1000 token", "回复约 500 个 token", "answers of 800 tokens", "300 output tokens"
    (lambda: r"(?:每个|每次|每条|平均)?\s*(?:回答|回复|答案|输出|生成)\s*(?:长度)?\s*(?:约|大概|大约|平均|为|是|在)?\s*(?P<b>\d{1,7})\s*(?P<kb>k)?\s*(?:个)?\s*tokens?"
             r"|\b(?:outputs?|responses?|answers?|replies|completions?|generations?)\s*(?:of|length|len|are|is|about|around|~|=|:)?\s*(?:about|around|~)?\s*(?P<b2>\d{1,7})\s*(?P<kb2>k)?\s*-?\s*tokens?"
             r"|(?<![\w.])(?P<b3>\d{1,7})\s*(?P<kb3>k)?\s*-?\s*(?:(?:output|generated|completion)\s*tokens?|tokens?\s+(?:of\s+)?(?:output|outputs|responses?|answers?|replies|completions?))\b", output_only),
    # an output length in characters or words: "回答平均 300 字", "每个回复约 500 个汉字", "answers of about 200 words"
    (lambda: rf"(?:每个|每次|每条|平均)?\s*(?:回答|回复|答案|输出|生成)(?:的)?\s*(?:长度|字数)?\s*(?:约|大概|大约|平均|为|是|在)?\s*(?:约|大概|大约)?\s*(?P<b>\d{{1,7}})\s*(?:{_unit_words('zh_chars')})(?![\w])"
             rf"|\b(?:outputs?|responses?|answers?|replies|completions?)\s*(?:of|are|is|about|around|~|=|:)?\s*(?:about|around|~)?\s*(?P<b2>\d{{1,7}})\s*(?:{_unit_words('en_words')})\b", output_text),
    (lambda: rf"{N}\s*(?P<mult>千亿|万亿|万|亿|b|t|m|bn|billion|million|trillion)\s*(?:个)?\s*(?:training\s+)?tokens?", training_tokens),
    (lambda: r"(?:\bseq(?:uence)?(?:[\s_-]*len(?:gth)?)?|max[\s_-]*seq(?:uence)?[\s_-]*len(?:gth)?|max[\s_-]*model[\s_-]*len(?:gth)?|最大(?:序列|文本|输入)?长度|序列长度|序列|上下文(?:长度|窗口)?|context(?:[\s_-]*(?:length|window|len))?|max[\s_-]*len(?:gth)?|文本长度|\bctx(?:[\s_-]*(?:len|size))?|(?<![视频音])长度(?=\s*(?:为|是|=|:)?\s*\d{3}))\s*(?:为|是|of|=|:)?\s*(?P<num>\d{1,12})\s*(?P<k>k)?", seq_len),
    (lambda: r"(?<![\w.])(?P<num>\d{1,12})\s*(?P<k>k)?\s*(?:个)?\s*(?:tokens?|的上下文|上下文|context|ctx\b)", seq_len),
    # "长上下文微调到 128K", "上下文扩展到 32K", "extend the context to 128k", "long-context fine-tuning to 64k"
    (lambda: r"(?:上下文|context|ctx)[^,，。；;\d]{0,12}?(?:扩展|扩充|拓展|延长|提升|增加|微调|训练|extend(?:ed|ing)?|fine[\s-]*tun(?:e|ed|ing)|train(?:ed|ing)?)?\s*(?:到|至|为|\bto\b)\s*(?P<num>\d{1,7})\s*(?P<k>k)\b", seq_len),
    # a serving prompt length without an output: "2k prompts", "4k-token prompts", "prompts of 2k tokens"
    (lambda: r"(?<![\w.])(?P<num>\d{1,7})\s*(?P<k>k)?\s*(?:-?\s*tokens?)?\s*(?:-|\s)?\s*prompts?\b"
             r"|\bprompts?\s*(?:of|length|len|长度)\s*(?:is|of|=|:)?\s*(?P<num2>\d{1,7})\s*(?P<k2>k)?", prompt_only),
    # resolution
    (lambda: r"(?<![\w.])(?P<a>\d{2,5})\s*(?:x|\*|by|乘)\s*(?P<b>\d{2,5})(?![\w.])", resolution_pair),
    (lambda: r"(?<![\w.])(?P<res>[248])\s*(?P<k>k)\b(?!\s*(?:张|条|个|样本|steps?|iters?|tokens?|context|上下文|元|块|prompts?|提示))", resolution_named),
    (lambda: r"(?<![\w.])(?P<res>720|1080|1440|2160)\s*p\b", resolution_named),
    # Ultralytics' own spellings: imgsz=640 (yolo CLI / model.train), --img 640 / --img-size (yolov5 train.py)
    (lambda: r"(?:分辨率|resolution|输入尺寸|输入大小|input size|crop size|crop|图像大小|图片大小|image size|imgsz|--img(?:[\s_-]*size)?|img[\s_-]*size)\s*(?:为|是|of|=|:)?\s*(?P<num>\d{2,5})(?![\d.])", resolution_square),
    (lambda: r"(?<![\w.])(?P<num>\d{2,5})\s*(?:px|像素|pixels?|的分辨率|分辨率|resolution)(?![a-z])", resolution_square),
    # "1024 输入", "1024 input", "1024 的输入": the side of a square input image
    (lambda: r"(?<![\w.])(?P<num>\d{3,4})\s*(?:的)?\s*(?:输入|input\b(?!\s*tokens?))", resolution_square),
    # parameters: "70亿参数", "350M parameters", "7B"
    # several sizes ("7B到14B", "7-14B", "between 7B and 13B parameters", "7B、14B、32B", "7b/14b"): sized at the largest
    (lambda: rf"(?:between\s+|from\s+)?{N}\s*(?:b|billion)?(?:\s*{SIZE_SEP}\s*\d{{1,4}}(?:\.\d{{1,3}})?\s*(?:b|billion)?){{0,4}}"
             rf"\s*{SIZE_SEP}\s*\d{{1,4}}(?:\.\d{{1,3}})?\s*(?:b|billion)\b(?!\s*tokens?)(?:\s*(?:参数|params|parameters))?", params_range),
    (lambda: rf"{N}\s*(?P<unit>亿|万|百万|千万|billion|million|bn|b|m)\s*(?:个)?\s*(?:参数|params|parameters)", _params_cn),
    (lambda: rf"{N}\s*(?P<unit>b|billion)\b(?!\s*tokens?)", params),
    # "a 350M GPT", "125M-parameter LLM": millions of parameters named by the model word that follows
    (lambda: rf"{N}\s*(?P<unit>m|million)\b\s*-?\s*(?:param(?:eter)?s?\s*)?(?:gpt|llm|language[\s-]+model|lm\b|"
             r"transformer|decoder|llama|model|模型|语言模型)", _params_cn),
    # dataset size on disk
    (lambda: r"(?<![\w.])(?P<num>\d{1,12}(?:\.\d{1,6})?)\s*(?P<unit>tb|t|gb|g|mb|pb)\b", dataset_size),
    # batch (before image counts: "每张卡 2 张图")
    (lambda: r"(?:global|total|总)\s*(?:batch[\s_-]*size|batch|bs|批大小)\s*(?:为|是|=|:|of)?\s*(?P<num>\d{1,12})", global_batch),
    (lambda: r"(?:grad(?:ient)?[\s_-]*accum(?:ulation|ulate)?(?:[\s_-]*steps)?|梯度累(?:积|加)(?:步数)?|\bga\b)\s*(?:为|是|=|:|of|设为|over)?\s*(?P<num>\d{1,5})\s*(?:步|次|steps?\b|micro[\s-]*steps?\b)?", grad_accumulation),
    (lambda: r"(?:batch[\s_-]*size|batch|\bbs|批大小|批量大小|批次大小|批量|批次)\s*(?:per gpu|每卡|每张卡)?\s*(?:为|是|设为|设置为|=|:|of)?\s*(?P<num>\d{1,12})", int_field("batch_size_per_gpu")),
    (lambda: r"(?:并发|concurrency|concurrent requests|concurrent users|并发数|同时请求|同时在线)\s*(?:用户)?\s*(?:为|是|=|:|of|达到|约)?\s*(?P<num>\d{1,12})", concurrent_users),
    # vLLM's --max-num-seqs: the sequences one replica serves at once
    (lambda: r"max[\s_-]*num[\s_-]*seqs\s*(?:=|:|为|是)?\s*(?P<num>\d{1,6})", concurrent_users),
    # daily / monthly active users are not a concurrency: said back as not used
    (lambda: rf"(?:日活|月活|\bdau\b|\bmau\b|daily active users|monthly active users)\s*(?:用户)?\s*(?:为|是|约|大概|有|of|:)?\s*{NM}\s*(?:人|个用户|用户|users)?", active_users),
    (lambda: rf"{NM}\s*(?:人|个用户|用户)?\s*(?:日活|\bdau\b|daily active users|(?:daily|monthly)\s+(?:active\s+)?users)", active_users),
    (lambda: rf"(?:\bfor|\bwith|\bserving|\bserve|\bsupport|支持|同时|在线)\s*{NM}\s*(?:个|位|名)?\s*(?:users|用户|人|clients|people)", users_at_once),
    (lambda: rf"{NM}\s*(?:路|个)?\s*(?:并发|concurrent(?:\s+(?:requests|users|chats|sessions|connections))?|simultaneous users|users at once|人同时在线|人同时(?:使用|用|访问|提问)|用户同时)", concurrent_users),
    (lambda: rf"每(?:张|块)?(?:卡|gpu)\s*(?:放|跑)?\s*{N}\s*(?:张图|张|个样本|条|images?)", int_field("batch_size_per_gpu")),
    # "2 images per GPU", "4 samples/GPU": the batch of one GPU
    (lambda: rf"{N}\s*(?:images?|imgs?|samples?|sequences?|pictures?)\s*(?:per|/|each|an?)\s*gpu\b", int_field("batch_size_per_gpu")),
    # GPUs without a model name
    # "do I need a GPU?" asks whether one is needed at all: not a count of one
    (lambda: rf"(?:{N}|\b(?<!need )(?<!needs )(?<!require )(?<!requires ){EN_N})\s*(?:张|块|个)?\s*(?:gpu卡|显卡|gpus?|卡|cards?)(?![a-z])(?!\s*(?:显存|内存))", int_field("num_gpus")),
    (lambda: r"(?P<word>单|双)\s*(?:张|块)?\s*(?:卡|gpu|显卡|(?=(?:nvidia\s*)?" + _gpus_pattern() + r"))", _gpus_word),
    # video streams and their frame rate ("10路1080p视频流，每路25帧", "16 camera streams at 25 fps"): a rate together
    (lambda: rf"{NM}\s*(?:路|个|条)\s*(?=(?:\d{{3,4}}\s*p|[248]\s*k)?\s*(?:的)?\s*(?:高清|实时)?\s*(?:视频|摄像头|监控|rtsp|流))", video_streams),
    (lambda: rf"(?:{N}|\b{EN_N})\s*(?:(?:live|camera|video|rtsp|cctv|ip[\s-]*camera)\s+)?(?:video\s+)?(?:streams|cameras|feeds|channels)\b", video_streams),
    (lambda: rf"{N}\s*(?:fps|帧\s*/\s*秒|帧每秒|frames?\s*(?:per|/|a)\s*(?:second|s)\b)", frame_rate),
    (lambda: rf"每秒\s*{N}\s*帧", frame_rate),
    (lambda: rf"(?:每路|每个摄像头|每路视频|每个通道|per (?:stream|camera|feed|channel))\s*(?:每秒)?\s*(?:at\s+)?{N}\s*(?:帧|fps\b|frames?)", frame_rate),
    # requests a day ("日均1万次调用", "每天大概5000次对话", "10k requests a day"): an average, not the peak the service is
    # sized for; said back with the average rate
    (lambda: rf"(?:每天|每日|日均|一天|平均每天|per day|a day|daily)\s*(?:大概|约|大约|有)?\s*{NM}\s*(?:多)?\s*(?:次|个|条|轮)?\s*(?:调用|请求|对话|问答|查询|提问|requests?|queries|calls|conversations|chats|questions)", per_day),
    (lambda: rf"{NM}\s*(?:次|个|条)?\s*(?:调用|请求|对话|问答|查询|提问|requests?|queries|calls|conversations|chats|questions)\s*(?:每天|/\s*天|一天|per day|a day|/\s*day|daily)", per_day),
    # request rates ("每秒 200 张", "200 张/秒", "200 QPS", "200 images/s"): before the counts of images
    (lambda: rf"每秒(?:钟)?\s*{NM}\s*(?:张|个|次|条|路)?\s*(?:图片|图像|照片|请求|查询|调用)?", request_rate),
    (lambda: rf"{NM}\s*(?:张|个|次|条)?\s*(?:图片|图像|照片|请求|查询|调用)?\s*(?:/|每)\s*(?:秒|s\b|sec\b|second\b)", request_rate),
    (lambda: rf"(?:\bqps|\brps|每秒请求数|每秒查询数|峰值\s*qps)\s*(?:大概|约|为|是|=|:|达到|峰值|around|about|of)?\s*{NM}", request_rate),
    (lambda: rf"{NM}\s*(?:qps|rps|tps|req/s|(?:requests?|images?|queries|calls)\s*(?:per|/|a)\s*(?:s|sec|second)\b)", request_rate),
    # counts of images / samples
    (lambda: rf"{NM}\s*(?:多)?\s*(?:张|幅|个样本|条|份|组|轮对话|段对话|个对话|句|篇|个文档|份文档|段文本)\s*(?:图片|图像|照片|样本|数据|标注|文档|文章|文本|论文|网页)?", int_field("num_samples")),
    # preference pairs ("10万对", "5万对偏好数据"): a pair is one sample (the chosen and rejected of it, ask/alignment.py)
    (lambda: rf"{NM}\s*(?:多)?\s*对(?![比于应齐照称接话])", int_field("num_samples")),
    (lambda: rf"{NM}\s*\+?\s*(?:training\s+|labell?ed\s+|annotated\s+)?(?:sentence\s+|text\s+|qa\s+|question[\s-]+answer\s+|instruction\s+|chat\s+|preference\s+|dpo\s+|image[\s/-]*(?:text|caption)\s+|text[\s/-]*image\s+|multimodal\s+|vqa\s+)?(?:images|samples|pictures|photos|examples|sequences|records|documents|sentences|texts|conversations|dialogues|dialogs|instructions|rows|pairs|prompts|tiles|patches|crops|scans|slides)\b", int_field("num_samples")),
    # "my 20k-image dataset", "a 5,000 sample set": a count written as an adjective of the dataset
    (lambda: rf"{NM}\s*[-\s]\s*(?:image|sample|picture|photo|example|sentence|record|document)\s+(?:dataset|data[\s-]*set|corpus|set|collection)\b",
     int_field("num_samples")),
    (lambda: rf"(?:样本数|样本量|图片数|图像数|数据量|num[_\s]samples)\s*(?:为|是|=|:|约|大概|有)?\s*{NM}", int_field("num_samples")),
    # iterations / steps ("160k iterations", "训练16万次迭代", "迭代 8 万次", "max_iters=160000"): epochs once the batch and
    # the dataset are known (parser._iterations)
    (lambda: rf"{NM}\s*(?:次|个)?\s*(?:迭代|iterations?\b|iters?\b|(?:training\s+|optimi[sz]er\s+)?steps?\b|步(?!骤))", iterations),
    (lambda: rf"(?:迭代|iterations?|\biters?|max[_\s-]*iters?|max[_\s-]*steps|total[_\s-]*steps|训练步数|总步数|步数)\s*(?:数|次数)?\s*"
             rf"(?:为|是|=|:|of|约|大概)?\s*{NM}\s*(?:次|步)?", iterations),
    # optimiser hyper-parameters ("学习率1e-4", "lr=2e-5", "weight decay 0.1", "warmup 3%"): said back, they size nothing
    (lambda: r"(?:学习率|learning[\s_-]*rate|\blr|权重衰减|weight[\s_-]*decay|\bwd|warm[\s_-]*up(?:[\s_-]*(?:ratio|steps))?|预热(?:步数|比例)?|dropout|"
             r"梯度裁剪|grad(?:ient)?[\s_-]*clip(?:ping)?|max[\s_-]*grad[\s_-]*norm|lora[\s_-]*alpha|\balpha|"
             r"gpu[\s_-]*memory[\s_-]*utili[sz]ation|temperature|top[\s_-]*p)\s*(?:=|:|为|是|of|设为)?\s*"
             r"\d{1,6}(?:\.\d{1,8})?(?:\s*[eE]\s*-?\s*\d{1,3})?\s*%?", hyper_parameter),
    # detection schedules: "1x schedule" = 12 epochs, "3x" = 36 (MMDetection configs/_base_/schedules/schedule_1x.py
    # max_epochs=12; Detectron2's 1x = 90k iterations x 16 images = 12.2 epochs of COCO train2017)
    (lambda: r"(?<![\w.])(?P<num>[1-9])\s*x\s*(?:schedule|sched\b|训练计划|的训练计划|计划|lr\s*schedule)", detection_schedule),
    (lambda: r"(?:schedule|训练计划)\s*(?:为|是|=|:)?\s*(?P<num>[1-9])\s*x(?![\w.])", detection_schedule),
    # epochs, classes, LoRA rank, workers, PyTorch, months
    (lambda: rf"(?:{N}|\b{EN_N})\s*(?:个)?\s*(?:epochs?|轮|个轮次|遍|个周期)", float_field("epochs")),
    (lambda: r"(?:epochs?|轮数|训练轮数)\s*(?:为|是|=|:)?\s*(?P<num>\d{1,12}(?:\.\d{1,6})?)", float_field("epochs")),
    (lambda: rf"{N}\s*(?:个)?\s*(?:类别|类|classes|categories)", int_field("num_classes")),
    # "my 3-class problem", "a 10-class dataset": the class count as an adjective
    (lambda: rf"{N}\s*-\s*(?:class|category)\b", int_field("num_classes")),
    (lambda: r"(?:类别数|num[_\s]classes)\s*(?:为|是|=|:)?\s*(?P<num>\d{1,12})", int_field("num_classes")),
    (lambda: r"(?:lora\s*)?(?:rank|秩)\s*(?:=|:|为|是)?\s*(?P<num>\d{1,5})\b|\blora\s*r\s*(?:=|:)?\s*(?P<num2>\d{1,5})\b|\br\s*=\s*(?P<num3>\d{1,5})\b", lora_rank),
    (lambda: r"(?:num[\s_-]*workers|workers|worker数)\s*(?:=|:|为|是)?\s*(?P<num>\d{1,12})|(?<![\w.])(?P<num2>\d{1,4})\s*个?\s*(?:workers|worker)", _workers),
    (lambda: r"(?:pytorch|torch)\s*(?:版本)?\s*v?(?P<ver>[12]\.\d{1,2})", pytorch),
    (lambda: rf"{N}\s*(?:个)?\s*(?:月|months?)", float_field("expected_months_of_use")),
    (lambda: r"半年|half a year|six months", months_named(6)),
    (lambda: r"(?<![\d])(?:一|1)\s*年|\ba year\b|one year", months_named(12)),
]


_COMPILED: list[tuple[re.Pattern[str], Callable[[Scanner, re.Match[str]], None]]] = []


def run_numeric(s: Scanner) -> None:
    """Run every extractor in order over the scanner's text."""
    from gpu_advisor.ask.lexicon import FLAGS

    if not _COMPILED:
        compiled = [(re.compile(build(), FLAGS), handler) for build, handler in EXTRACTORS]  # all or nothing
        _COMPILED.extend(compiled)
    for regex, handler in _COMPILED:
        for m in list(s.matches(regex)):
            if s._free(m.start(), m.end()):
                handler(s, m)
    combine_streams(s)

"""A team or user count is a population, not a concurrency ("我们团队30个工程师", "for 200 employees", "a team of 30
engineers"). Serving sizes the KV cache and the batch from the requests in flight at one moment, so a population is
turned into concurrent users only with the share active at once that knowledge/ask/lexicon.yaml `population` states
with its sources, and that assumption is said with the answer; a stated concurrency wins, and a training job says the
count back as not used. Nothing is dropped silently."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from importlib.resources import files
from typing import Any

from gpu_advisor.ask.lexicon import CN_NUMERALS, FLAGS, NUM
from gpu_advisor.ask.parsed import Assumed, Scanner
from gpu_advisor.util import yamlio
from gpu_advisor.util.i18n import Text

# a number that does not continue a word or a run of numerals (numeric.N: linear on "一" x 4000)
_N = rf"(?<![\w.{CN_NUMERALS}])(?P<num>{NUM})(?![\d{CN_NUMERALS}])\s*(?P<mult>万|千|k)?"
_ABOUT = r"(?:有|共|一共|总共|约|大概|大约|差不多)?\s*"
_TEAM_ZH = (r"(?:(?:(?:我们|咱们|我司|本)\s*(?:的)?\s*)?(?:团队|公司|部门|小组|组里|组|全公司|全员|实验室|课题组|工作室|学校|全校|"
            r"医院|研发部|技术部)|我们|咱们|我司)")
_PEOPLE_ZH = (r"(?:工程师|员工|开发者|开发人员|开发|程序员|同事|研发人员|研发|研究员|成员|学生|老师|医生|律师|客服人员|客服|坐席|"
              r"销售|运营|用户|人)")
_PEOPLE_EN = (r"(?:engineers|developers|devs|employees|staff|programmers|coders|researchers|analysts|agents|students|"
              r"team members|colleagues|members|people|users)")
# the shapes of a head count (each one is also a serving cue when nothing says training: keywords._serving_load)
PATTERNS: tuple[str, ...] = (
    rf"(?:给|供|面向|服务于?)\s*{_TEAM_ZH}?\s*{_ABOUT}{_N}\s*(?:多)?\s*(?:个|名|位)?\s*{_PEOPLE_ZH}",
    rf"{_TEAM_ZH}\s*{_ABOUT}{_N}\s*(?:多)?\s*(?:个|名|位)?\s*{_PEOPLE_ZH}",
    rf"{_N}\s*(?:多)?\s*(?:个|名|位)?\s*(?:人|工程师|员工|成员)\s*(?:的)?\s*(?:团队|公司|部门|小组|实验室)",
    rf"{_N}\s*(?:多)?\s*(?:个|名|位)?\s*人\s*(?:在|会|要|来|一起|日常)?\s*(?:用|使用)",   # "50个人用"
    (rf"{_N}\s*(?:多)?\s*(?:个|名|位)\s*(?:工程师|员工|开发者|开发人员|开发|程序员|同事|研发人员|研究员|成员|学生|老师|医生|律师|"
     r"客服人员|客服|坐席|销售|运营|用户)"),
    # "50 people will use it", "200 users are going to use": a count of people only with the verb of use after it
    rf"(?<![\w.]){_N}\s+(?:people|persons|users)(?=\s*(?:will|would|are going to|need to|want to)?\s*(?:use|using)\b)",
    (rf"\b(?:team|company|org(?:anization)?|department|group|lab|startup)\s+of\s+(?:about\s+|around\s+|~\s*)?{_N}"
     rf"(?:\s*{_PEOPLE_EN})?"),
    rf"{_N}\s*-?\s*(?:person|people|member|engineer|developer|strong)\s+(?:team|company|org|startup|department|group|lab)\b",
    (rf"\b(?:for|to serve|used by|serving)\s+(?:our\s+|the\s+|about\s+|around\s+|~\s*)?{_N}\s+(?:internal\s+)?"
     r"(?:engineers|developers|devs|employees|staff|programmers|coders|researchers|analysts|agents|students|team members|"
     r"colleagues)\b"),
    (rf"(?<![\w.]){_N}\s+(?:internal\s+)?(?:engineers|developers|devs|employees|staff|programmers|researchers|analysts|"
     r"students|team members|colleagues)\b"),
    rf"{_N}\s+(?:registered|total|named|internal)\s+users\b",
    # "a small team (10 people)", "团队（30人）"
    rf"(?:team|company|group|org|startup|团队|公司|部门|小组)\s*[(（]\s*(?:about\s+|约)?{_N}\s*(?:people|persons|members|engineers|"
    r"developers|employees|users|人|名|位)?\s*[)）]",
    rf"\buser\s*base\s+of\s+(?:about\s+|around\s+|~\s*)?{_N}",
)


@lru_cache(maxsize=1)
def _compiled() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, FLAGS) for p in PATTERNS)


@lru_cache(maxsize=1)
def share() -> dict[str, Any]:
    raw = yamlio.safe_load(files("gpu_advisor.knowledge").joinpath("ask/lexicon.yaml").read_text(encoding="utf-8"))
    return dict(raw["population"])


def _count(m: re.Match[str]) -> int | None:
    from gpu_advisor.ask.lexicon import to_number

    groups = m.groupdict()
    num = groups.get("num") or next((v for k, v in groups.items() if k.startswith("num") and v), None)
    value = to_number(num, groups.get("mult")) if num else None
    return int(value) if value and math.isfinite(value) and value >= 1 else None


def find_population(s: Scanner) -> None:
    """The first population the question states: kept as _population (count, words) until the task is
    known (resolve_population). Runs after the concurrency extractors, so "支持200人同时在线" stays a concurrency."""
    for pattern in _compiled():
        for m in s.matches(pattern):
            count = _count(m)
            if count is None:
                continue
            s.claim(m)
            if "_population" in s.fields:
                s.note_unused(m.group(0), "a second team / user count; only the first is used",
                              "第二个团队 / 用户人数；只按第一个")
                continue
            s.fields["_population"] = (count, m.group(0).strip())


def resolve_population(s: Scanner) -> list[Assumed]:
    """After the task: a serving job's concurrency from the population at the stated share; otherwise said back."""
    found = s.fields.pop("_population", None)
    if not found:
        return []
    count, said = found
    if s.fields.get("task") != "inference":
        s.note_unused(said, "a team / user count: it does not size a training job (the GPUs are sized by the model, the "
                      "data and the deadline)", "团队 / 用户人数：不影响训练作业的配置（训练按模型、数据和期限估算）")
        return []
    if "concurrent_users" in s.fields:
        s.note_unused(said, f"a team / user count (a population); the stated concurrency, {s.fields['concurrent_users']}, "
                      "sizes the service", f"团队 / 用户人数（总人数）；服务按问题中给出的并发 {s.fields['concurrent_users']} 估算")
        return []
    info = share()
    active = float(info["active_share"])
    lo, hi = (float(x) for x in info.get("range", (active, active)))
    users = max(1, math.ceil(count * active))
    s.fields["concurrent_users"] = users
    s.fields.setdefault("batch_size_per_gpu", users)  # the sequences one replica holds at once (numeric.concurrent_users)
    s.hints.append(_hint(said))
    source = str(info["source"])
    return [Assumed("concurrent_users", users, Text(
        en=f"'{said}' is a population, not a concurrency: sized for {users} requests at once ({active:.0%} of {count:,} "
           f"active at the same moment, the upper end of the {lo:.0%}-{hi:.0%} concurrent-to-named-user share in public "
           f"capacity-planning guidance: {source}). State the peak concurrency (e.g. '{users * 2} concurrent') to change it.",
        zh=f"“{said}”是总人数，不是并发数：按同时 {users} 个请求估算（{count:,} 人中 {active:.0%} 同时在用，取公开容量规划经验中"
           f"并发 / 总用户 {lo:.0%}–{hi:.0%} 的上限：{source}）。请给出高峰并发（如“并发 {users * 2}”）以修改。"))]


def _hint(said: str) -> Any:
    from gpu_advisor.ask.parsed import Hint

    return Hint("population", said, Text(en=f"'{said}': a team / user count, read as a population (see Assumed).",
                                         zh=f"“{said}”：团队 / 用户人数，按总人数理解（见“假设”）。"))


__all__ = ["find_population", "resolve_population"]

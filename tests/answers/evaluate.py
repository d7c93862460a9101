"""Evaluate one case of tests/answers/cases.yaml through the library path of `gpu-advisor ask --no-input`
(gpu_advisor.ask.answer_question). Shared by tests/answers/test_answers.py and bench/answers.py.

Each check returns (ok, detail). Checks are grouped: understood (fields, the model sized, every stated number
accounted for, refusals and their language), sized (memory and the leading option), priced (a list price within the
stated budget)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CASES_FILE = Path(__file__).with_name("cases.yaml")
UNDERSTOOD = ("fields", "model", "numbers", "refuse", "hint", "hint_unused", "llm_profile", "says", "not_says", "lead")
SIZED = ("plan_gib", "gpu_gib", "total_gib", "holds", "rdma", "min_gpus", "max_gpus", "cpu_only", "replicas", "hours")
PRICED = ("priced", "price_per_hour")
CJK = re.compile(r"[\u3400-\u9fff]")
NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)*")


def load_cases() -> list[dict[str, Any]]:
    cases = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))["cases"]
    for case in cases:
        if "q_repeat" in case:
            case["q"] = case["q_repeat"]["text"] * int(case["q_repeat"]["times"])
    return cases


@dataclass
class Result:
    case: dict[str, Any]
    checks: dict[str, tuple[bool, str]] = field(default_factory=dict)
    error: str | None = None

    def group_ok(self, names: tuple[str, ...], honour_xfail: bool = False) -> bool | None:
        """All checks of the group pass (None when the case has none of them)."""
        relevant = {k: v for k, v in self.checks.items() if k in names}
        if not relevant:
            return None
        return all(ok for ok, _ in relevant.values())


def _close(a: Any, b: Any) -> bool:
    if isinstance(b, bool) or isinstance(a, bool):
        return a == b
    if isinstance(b, (int, float)) and isinstance(a, (int, float)):
        return abs(a - b) <= 1e-3 * max(1.0, abs(b))
    if isinstance(b, list) and isinstance(a, (list, tuple)):
        return list(a) == b
    return str(a) == str(b)


def _lang_ok(message: str, lang: str) -> bool:
    cjk = len(CJK.findall(message))
    return cjk >= 6 if lang == "zh" else cjk <= 20 and len(re.findall(r"[A-Za-z]+", message)) >= 10


def _method_matches(expected: str, got: str | None) -> bool:
    from gpu_advisor.kb.models import knowledge

    if got is None:
        return False
    spec = knowledge().methods.get(expected)
    variants = {expected} | ({spec.mask_variant, spec.detection_variant} - {None} if spec else set())
    return got in variants


def evaluate(case: dict[str, Any]) -> Result:
    """Run the question; never raises for an answer's content (a traceback is recorded as the `error`)."""
    from gpu_advisor.ask.api import recommend_fields
    from gpu_advisor.ask.parser import detect_lang, parse_question
    from gpu_advisor.errors import WorkloadError

    res = Result(case)
    q = case["q"]
    parsed = None
    try:
        parsed = parse_question(q)
        rec = recommend_fields(parsed, parsed.workload_fields, parsed.lang)
    except WorkloadError as exc:
        _refusal(res, exc, detect_lang(q))
        if parsed is not None:
            _fields(res, parsed)
            res.checks["numbers"] = numbers_accounted(parsed)
        return res
    except Exception as exc:  # noqa: BLE001 - any other exception is a defect the set reports
        res.error = f"{type(exc).__name__}: {exc}"
        return res
    if case.get("refuse"):
        res.checks["refuse"] = (False, "answered instead of refusing")
    if str(case.get("model_any", "")).startswith("refuse-or:"):
        word = case["model_any"].split(":", 1)[1]
        key = rec.memory.profile.key if rec.memory else ""
        res.checks["model"] = (word in key, f"sized as {key!r}; must refuse or be a {word} profile")
    _understood(res, parsed, rec)
    _sized(res, rec)
    _priced(res, parsed, rec)
    return res


def _refusal(res: Result, exc: Any, lang: str) -> None:
    case = res.case
    message = exc.message(lang)
    wanted = case.get("refuse") or str(case.get("model_any", "")).startswith("refuse-or:")
    helpful = bool(getattr(exc, "suggestions", None)) or re.search(r"params|参数|say what|请说明|name a model|请换用|请改用|shorten|请精简",
                                                                  message, re.IGNORECASE)
    ok = bool(wanted) and bool(helpful)
    res.checks["refuse"] = (ok, f"refused: {message[:160]}" + ("" if wanted else " (an answer was expected)"))
    if case.get("refuse_lang"):
        res.checks["refuse"] = (ok and _lang_ok(message, case["refuse_lang"]),
                                f"refusal in {case['refuse_lang']}: {message[:120]}")
    if "model_any" in case:
        res.checks["model"] = (ok, "refused with suggestions" if ok else message[:120])
    # a refusal says back the name it refuses and the known names it offers (`says` on a refusal case)
    if case.get("refuse") and case.get("says"):
        missing = [p for p in case["says"] if not re.search(p, message)]
        res.checks["says"] = (not missing, f"refusal lacks {missing}: {message[:160]}")
    if case.get("refuse") and case.get("not_says"):   # a name offered twice under other spellings, say
        present = [p for p in case["not_says"] if re.search(p, message)]
        res.checks["not_says"] = (not present, f"refusal says {present}: {message[:160]}")


def _understood(res: Result, parsed: Any, rec: Any) -> None:
    case = res.case
    _fields(res, parsed)
    if "model" in case:
        prof = rec.memory.profile if rec.memory else None
        want = case["model"]
        got_key = prof.key if prof else None
        ok = prof is not None and (got_key == want or _method_matches(want, prof.method))
        res.checks["model"] = (ok, f"sized as {got_key!r}, want {want!r}")
    if case.get("llm_profile"):
        prof = rec.memory.profile if rec.memory else None
        res.checks["llm_profile"] = (bool(prof and prof.is_llm), f"profile {prof.key if prof else None!r} is_llm={prof.is_llm if prof else None}")
    if "hint" in case:
        kinds = [h.kind for h in parsed.hints]
        res.checks["hint"] = (case["hint"] in kinds, f"hints {kinds}")
    if "hint_unused" in case:
        said = [u.matched for u in getattr(parsed, "unused", [])]
        res.checks["hint_unused"] = (case["hint_unused"] in said, f"not-used entries {said}")
    res.checks["numbers"] = numbers_accounted(parsed)
    if "lead" in case:  # the answer's first line (the verdict of a yes/no question) in the question's language
        first = rec.lead[0].get(parsed.lang) if rec.lead else ""
        res.checks["lead"] = (re.search(case["lead"], first, re.IGNORECASE) is not None, f"first line: {first[:160]!r}")
    _wording(res, parsed, rec)


def _wording(res: Result, parsed: Any, rec: Any) -> None:
    """`says`: regular expressions the answer (rendered in the question's language) must match; `not_says`: ones it
    must not (a name said back, a verdict, serving words instead of training ones)."""
    if "says" not in res.case and "not_says" not in res.case:
        return
    text = rec.render(parsed.lang) if hasattr(rec, "render") else ""
    missing = [p for p in res.case.get("says", []) if not re.search(p, text)]
    res.checks["says"] = (not missing, f"answer lacks {missing}" if missing else "")
    present = [p for p in res.case.get("not_says", []) if re.search(p, text)]
    res.checks["not_says"] = (not present, f"answer says {present}" if present else "")


def _fields(res: Result, parsed: Any) -> None:
    fields = parsed.workload_fields
    if "fields" in res.case:
        wrong = {k: (fields.get(k), v) for k, v in res.case["fields"].items() if not _close(fields.get(k), v)}
        res.checks["fields"] = (not wrong, "; ".join(f"{k}: got {g!r}, want {w!r}" for k, (g, w) in wrong.items()))


def numbers_accounted(parsed: Any) -> tuple[bool, str]:
    """Every number written in the question is in the words of an understood field, a note, a not-used entry, or a
    model / backbone name."""
    from gpu_advisor.ask.parsed import normalise

    covered = [u.matched for u in parsed.understood] + [h.matched for h in parsed.hints]
    covered += [u.matched for u in getattr(parsed, "unused", [])]
    covered += [str(parsed.workload_fields.get(k, "")) for k in ("model", "backbone", "gpu_preference")]
    blob = "\n".join(normalise(c) for c in covered)
    missing = [n for n in NUMBER.findall(normalise(parsed.text)) if n not in blob]
    return (not missing, f"numbers not accounted for: {missing}" if missing else "")


def _sized(res: Result, rec: Any) -> None:
    case = res.case
    inst = rec.instance
    if case.get("cpu_only"):
        res.checks["cpu_only"] = (inst is None and rec.cpu_instance is not None, "a CPU instance and no GPU")
        return
    needs = [k for k in SIZED if k in case]
    if not needs:
        return
    if inst is None:
        for k in needs:
            res.checks[k] = (False, "no instance recommended")
        return
    per_gpu = inst.planned_mem_gib
    if "plan_gib" in case:
        lo, hi = case["plan_gib"]
        res.checks["plan_gib"] = (lo <= per_gpu <= hi, f"plan {per_gpu} GiB a GPU, want {lo}-{hi}")
    if "gpu_gib" in case:
        lo, hi = case["gpu_gib"]
        res.checks["gpu_gib"] = (lo <= inst.gpu_memory_gib <= hi, f"{inst.instance_type}: {inst.gpu_memory_gib} GB cards, want {lo}-{hi}")
    total = inst.gpu_memory_gib * inst.total_gpus
    if "total_gib" in case:
        lo, hi = case["total_gib"]
        res.checks["total_gib"] = (lo <= total <= hi, f"{inst.total_gpus} x {inst.gpu_memory_gib} = {total}, want {lo}-{hi}")
    if case.get("holds"):
        upper = rec.planned_memory.allocated_upper_gib if rec.planned_memory else per_gpu
        res.checks["holds"] = (upper <= inst.gpu_memory_gib, f"upper estimate {upper} GiB on {inst.gpu_memory_gib} GB cards")
    if "rdma" in case:  # true: RDMA required (and on the leading option); false: multi-node, recommended, not required
        fired = {e.rule_id for e in rec.trace}
        verdict = ("NET-MULTINODE" in fired or "NET-RDMA-UNSIZED" in fired) and "NET-TCP-OK" not in fired
        ok = inst.nodes > 1 and (verdict and inst.rdma not in (None, "none") if case["rdma"] else
                                 "NET-TCP-OK" in fired and not verdict)
        res.checks["rdma"] = (ok, f"{inst.nodes} node(s), rdma {inst.rdma}, network rules "
                                  f"{sorted(r for r in fired if r.startswith('NET-'))}")
    if "min_gpus" in case:
        res.checks["min_gpus"] = (inst.total_gpus >= case["min_gpus"], f"{inst.total_gpus} GPUs, want >= {case['min_gpus']}")
    if "max_gpus" in case:
        res.checks["max_gpus"] = (inst.total_gpus <= case["max_gpus"], f"{inst.total_gpus} GPUs, want <= {case['max_gpus']}")
    if "hours" in case:
        lo, hi = case["hours"]
        option = rec.cost.option(inst.instance_type) if rec.cost else None
        wall = option.time.wall_hours if option is not None else None
        mid = None if wall is None else round(wall.mid, 2)
        res.checks["hours"] = (mid is not None and lo <= mid <= hi, f"{inst.instance_type}: {mid} h (mid), want {lo}-{hi}")
    if case.get("replicas"):
        text = rec.render("en") if hasattr(rec, "render") else ""
        res.checks["replicas"] = (bool(re.search(r"\b\d+\s+replicas?\b", text)), "a replica count in the answer")


def _priced(res: Result, parsed: Any, rec: Any) -> None:
    if not res.case.get("priced"):
        return
    inst = rec.instance
    if inst is None or inst.price_per_hour is None:
        res.checks["priced"] = (False, "leading option has no list price")
        return
    cap = parsed.workload_fields.get("budget_per_hour")
    ok = cap is None or inst.price_per_hour <= cap
    res.checks["priced"] = (ok, f"{inst.price_per_hour} {inst.currency}/h" + (f" vs cap {cap}" if cap else ""))
    if "price_per_hour" in res.case:
        lo, hi = res.case["price_per_hour"]
        hourly = inst.price_per_hour * inst.nodes
        res.checks["price_per_hour"] = (lo <= hourly <= hi, f"{inst.nodes} x {inst.instance_type}: {hourly:.2f} "
                                                             f"{inst.currency}/h, want {lo}-{hi}")

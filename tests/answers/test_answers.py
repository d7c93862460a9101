"""The end-to-end evaluation set (tests/answers/cases.yaml): each question answered through the library path of
`gpu-advisor ask --no-input`, each check a test. A check whose failure belongs to the planning half of issue 22 is
xfail(strict=True) with its reason, so it turns into a failure once the planner is fixed."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from evaluate import PRICED, SIZED, UNDERSTOOD, Result, evaluate, load_cases  # noqa: E402

CASES = load_cases()
BY_ID = {c["id"]: c for c in CASES}


@lru_cache(maxsize=None)
def result(case_id: str) -> Result:
    return evaluate(BY_ID[case_id])


def _params() -> list:
    out = []
    for case in CASES:
        checks = [k for k in (*UNDERSTOOD, *SIZED, *PRICED) if _declares(case, k)]
        for check in checks:
            marks = []
            if check in case.get("xfail", {}):
                marks.append(pytest.mark.xfail(strict=True, reason=case["xfail"][check]))
            out.append(pytest.param(case["id"], check, marks=marks, id=f"{case['id']}-{check}"))
    return out


def _declares(case: dict, check: str) -> bool:
    if check == "numbers":
        return not case.get("refuse")
    if check == "model":
        return "model" in case or "model_any" in case
    return check in case


def test_the_set_is_large_and_bilingual() -> None:
    from gpu_advisor.ask.parser import detect_lang

    assert len(CASES) >= 60
    langs = [detect_lang(c["q"]) for c in CASES]
    assert langs.count("zh") >= 20 and langs.count("en") >= 20
    starts = sorted(c["start"] for c in CASES if "start" in c)
    assert starts == list(range(1, 21)), "each of issue 22's twenty starting cases is in the set"
    assert all(c.get("defect") for c in CASES if "start" in c)
    assert len({c["cat"] for c in CASES}) >= 10


@pytest.mark.parametrize("case_id", [c["id"] for c in CASES])
def test_no_traceback(case_id: str) -> None:
    assert result(case_id).error is None, result(case_id).error


@pytest.mark.parametrize("case_id, check", _params())
def test_check(case_id: str, check: str) -> None:
    res = result(case_id)
    assert res.error is None, res.error
    ok, detail = res.checks.get(check, (False, f"check {check} was not evaluated (the answer took another path)"))
    assert ok, detail

"""Performance work must not change any answer: recommend() against stored golden answers.

tests/golden/answers.json holds 300 seeded random workloads from bench/latency.py's ``mixed_workloads(300,
seed=0)`` plus the end-to-end scenarios of tests/test_scenarios.py, each with the SHA-256 of the canonical JSON
of ``recommend(w, "en").model_dump(mode="json")``; tests/golden/answers_full.json.gz holds the full answers of
~20 of them, so a difference there is shown field by field.

The workloads themselves are stored in the golden file, so a change to the bench does not move the test.

Regenerating: only when the *answers are meant to change* (e.g. new memory-model coefficients or knowledge
committed by someone else), never to paper over a difference a performance change caused. Regenerate from a
clean checkout of the commit *before* your own change, then carry the golden files over::

    git worktree add /tmp/golden-base <commit-before-your-change>
    cd /tmp/golden-base && GPU_ADVISOR_REGENERATE_GOLDEN=1 python -m pytest -q tests/test_golden_answers.py
    cp /tmp/golden-base/tests/golden/answers*.json* <your-checkout>/tests/golden/
    git worktree remove /tmp/golden-base

(copy this test file into the worktree first if that commit predates it). With
``GPU_ADVISOR_REGENERATE_GOLDEN=1`` the test writes the files instead of comparing, and is skipped.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden" / "answers.json"
FULL = Path(__file__).parent / "golden" / "answers_full.json.gz"
N_RANDOM, SEED, N_FULL_RANDOM = 300, 0, 11
REGENERATE = os.environ.get("GPU_ADVISOR_REGENERATE_GOLDEN") == "1"


def canonical(answer: dict[str, Any]) -> str:
    return json.dumps(answer, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(answer: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(answer).encode("utf-8")).hexdigest()


def answer(workload: dict[str, Any]) -> dict[str, Any]:
    from gpu_advisor import recommend

    return recommend(workload, "en").model_dump(mode="json")


def _scenario_workloads() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("_test_scenarios", Path(__file__).parent / "test_scenarios.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [dict(w) for w in module.ALL]


def _random_workloads() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("_bench_latency", ROOT / "bench" / "latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.mixed_workloads(N_RANDOM, SEED)


def _full_indices(n_random: int, n_total: int) -> list[int]:
    """Every scenario workload plus N_FULL_RANDOM random ones spread over the list."""
    step = max(1, n_random // N_FULL_RANDOM)
    return [i * step for i in range(N_FULL_RANDOM)] + list(range(n_random, n_total))


def _regenerate() -> None:
    workloads = _random_workloads() + _scenario_workloads()
    answers = [answer(w) for w in workloads]
    again = [digest(answer(w)) for w in reversed(workloads)][::-1]  # other order: no hidden state in answers
    assert again == [digest(a) for a in answers], "recommend() is not deterministic; cannot write a golden file"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps({"generated_at_commit": commit, "lang": "en", "random": {"n": N_RANDOM, "seed": SEED}})
    cases = ",\n".join(json.dumps({"workload": w, "sha256": digest(a)}, ensure_ascii=False)
                        for w, a in zip(workloads, answers))
    GOLDEN.write_text(head[:-1] + ', "cases": [\n' + cases + "\n]}\n", encoding="utf-8")
    full = {str(i): answers[i] for i in _full_indices(N_RANDOM, len(workloads))}
    FULL.write_bytes(gzip.compress(canonical(full).encode("utf-8"), compresslevel=9, mtime=0))


def _first_difference(expected: Any, got: Any, path: str = "$") -> str | None:
    if type(expected) is not type(got):
        return f"{path}: {expected!r} -> {got!r}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(got)):
            if key not in expected or key not in got:
                return f"{path}.{key}: only in {'answer' if key in got else 'golden'}"
            diff = _first_difference(expected[key], got[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(expected, list):
        if len(expected) != len(got):
            return f"{path}: {len(expected)} items -> {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            diff = _first_difference(e, g, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if expected == got else f"{path}: {expected!r} -> {got!r}"


@pytest.mark.skipif(not REGENERATE, reason="set GPU_ADVISOR_REGENERATE_GOLDEN=1 to rewrite the golden answers")
def test_regenerate_golden_answers() -> None:
    _regenerate()


@pytest.mark.skipif(REGENERATE, reason="regenerating the golden answers")
def test_answers_match_the_golden_file() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    full = json.loads(gzip.decompress(FULL.read_bytes()).decode("utf-8"))
    differences = []
    for index, case in enumerate(golden["cases"]):
        got = answer(case["workload"])
        if digest(got) == case["sha256"]:
            continue
        where = _first_difference(full[str(index)], got) if str(index) in full else "(hash only)"
        differences.append(f"#{index} {json.dumps(case['workload'], sort_keys=True)}: {where}")
    assert not differences, (f"{len(differences)} of {len(golden['cases'])} answers differ from the golden file "
                             f"(generated at {golden['generated_at_commit']}):\n" + "\n".join(differences[:20]))


@pytest.mark.skipif(REGENERATE, reason="regenerating the golden answers")
def test_golden_file_covers_the_bench_and_the_scenarios() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    stored = [case["workload"] for case in golden["cases"]]
    assert len(stored) == N_RANDOM + len(_scenario_workloads())
    assert {canonical(w) for w in _scenario_workloads()} <= {canonical(w) for w in stored}

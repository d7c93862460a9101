"""A small stand-in for gpu_advisor.recommend with the Recommendation interface `ask` uses, so the
question-and-answer layer can be tested on its own (and in a pseudo-terminal) whatever the advisor's state.

`install()` swaps it in; `REAL` tells whether the real advisor answers the seed question."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpu_advisor.util.i18n import Note, Text


@dataclass
class FakeOption:
    instance_type: str
    gpu_display: str
    gpu_count: int
    vcpu: int
    memory_gib: float
    price_per_hour: float | None
    currency: str = "CNY"
    reason: Text = field(default_factory=lambda: Text(en="cheaper", zh="更便宜"))


@dataclass
class FakeMemory:
    allocated_peak_gib: float
    device_total_gib: float
    breakdown: dict[str, float]


@dataclass
class FakeItem:
    section: str
    rule_id: str
    text: Text


@dataclass
class FakeTrace:
    rule_id: str
    title: Text
    why: Text
    matched: dict[str, Any]
    sources: list[str]


@dataclass
class FakeRecommendation:
    workload: dict[str, Any]
    instance: FakeOption | None
    memory: FakeMemory
    gpu_memory_gib: float | None
    alternatives: list[FakeOption]
    sections: list[FakeItem]
    trace: list[FakeTrace]
    assumptions: list[Note]
    warnings: list[Note]

    def render(self, lang: str) -> str:
        inst = self.instance.instance_type if self.instance else "-"
        return f"## {'推荐' if lang == 'zh' else 'Recommendation'}\n\n- {inst}\n"

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {"instance": self.instance.instance_type if self.instance else None, "workload": self.workload}


A10 = FakeOption("ecs.gn7i-c8g1.2xlarge", "NVIDIA A10", 1, 8, 30, 11.6)
A100 = FakeOption("ecs.gn7-c13g1.3xlarge", "NVIDIA A100 80GB", 1, 12, 94, 34.0)
CALLS: list[dict[str, Any]] = []


def fake_recommend(workload: Any, lang: str = "zh") -> FakeRecommendation:
    w = workload.model_dump(mode="json")
    CALLS.append(w)
    side = (w.get("input_size") or [512, 1024])
    batch = w.get("batch_size_per_gpu") or 2
    act = side[0] * side[1] * batch / 500_000
    breakdown = {"weights": 0.2, "optimizer": 0.4, "activations": round(act, 1), "workspace": 1.0}
    total = sum(breakdown.values())
    inst, card = (A10, 24.0) if total < 20 else (A100, 80.0)
    alt = A100 if inst is A10 else A10
    sections = [FakeItem("gpu", "gpu.fit", Text(en=f"{inst.gpu_display}: {total:.1f} GiB of {card:g}",
                                                zh=f"{inst.gpu_display}：{total:.1f} GiB / {card:g}")),
                FakeItem("cpu", "cpu.loader", Text(en="8 vCPU feed one GPU", zh="8 个 vCPU 喂一张卡"))]
    trace = [FakeTrace("gpu.fit", Text(en="Smallest card that fits", zh="放得下的最小卡"),
                       Text(en="Peak memory under 90% of the card", zh="峰值显存低于单卡的 90%"),
                       {"peak_gib": round(total, 1)}, ["mmseg logs"]),
             FakeTrace("cpu.loader", Text(en="Loader workers", zh="数据加载进程"),
                       Text(en="4 workers per GPU", zh="每卡 4 个 worker"), {}, [])]
    notes = [Note(code="assumed.model", field="model", value="DeepLabV3+",
                  text=Text(en="Model assumed: DeepLabV3+", zh="假设模型：DeepLabV3+"))]
    return FakeRecommendation(w, inst, FakeMemory(total, total + 0.5, breakdown), card, [alt], sections, trace,
                              notes, [])


def install() -> None:
    """Make `ask` use the fake advisor (for subprocess runs, where monkeypatch cannot reach)."""
    from gpu_advisor.ask import api

    api._recommend = fake_recommend  # type: ignore[assignment]


def real_advisor_works() -> bool:
    try:
        from gpu_advisor.ask import answer_question

        answer_question("在阿里云上训练语义分割模型需要多大的GPU和内存？")
        return True
    except Exception:
        return False


def test_fake_has_the_interface() -> None:
    from gpu_advisor.workload import Workload

    rec = fake_recommend(Workload(task="semantic_segmentation", input_size=(2048, 2048), batch_size_per_gpu=8))
    assert rec.instance is not None and rec.gpu_memory_gib == 80.0
    assert rec.sections[0].rule_id == rec.trace[0].rule_id

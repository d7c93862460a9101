"""How `ask` reads the model names users write: resolved to the right profile / refused / answered for another model.

Each line of bench/data/model_names_asked.txt is `name | expected key` (alternatives with /; keys a same_shape name is
estimated with count as right). The name is asked as "部署 <name> 需要几张卡"; a name the parser drops (a bare size or
the task default answered instead) counts as wrong, like a name resolved to another key.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpu_advisor.ask.parser import parse_question
from gpu_advisor.errors import AdvisorError
from gpu_advisor.kb.models import resolve_transformer

LIST = Path(__file__).resolve().parent / "data" / "model_names_asked.txt"


def classify(name: str, expected: set[str]) -> tuple[str, str | None]:
    try:
        p = parse_question(f"部署 {name} 需要几张卡")
    except AdvisorError:
        return "refused", None
    model = p.workload_fields.get("model")
    if model is None:
        return ("refused", None) if p.unresolved else ("wrong", None)
    if any(u[0] == model for u in p.unresolved):
        return "refused", None
    key = resolve_transformer(model)
    return ("right" if key in expected else "wrong"), key


def main() -> int:
    counts = {"right": 0, "refused": 0, "wrong": 0}
    for line in LIST.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, expected = (part.strip() for part in line.partition("|"))
        verdict, key = classify(name, set(expected.split("/")))
        counts[verdict] += 1
        if verdict != "right" or "-v" in sys.argv:
            print(f"{verdict:8} {name!r} -> {key or '-'} (expected {expected})")
    print(f"right {counts['right']}, refused {counts['refused']}, wrong {counts['wrong']} of {sum(counts.values())}")
    return 1 if counts["wrong"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

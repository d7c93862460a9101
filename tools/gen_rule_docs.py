"""Generate the rule reference (docs/rules.zh.md, docs/rules.en.md) from knowledge/rules.

`--check` exits 1 when the checked-in files differ from what the rules say (CI runs it through a test).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HEAD = {
    "zh": ("# 规则参考", "本文件由 `tools/gen_rule_docs.py` 从 `knowledge/rules/` 生成，请勿手工编辑。",
           "条件", "推导事实", "断言", "设定", "建议", "原因", "来源", "自版本"),
    "en": ("# Rule reference", "Generated from `knowledge/rules/` by `tools/gen_rule_docs.py`; do not edit by hand.",
           "When", "Needs derived facts", "Asserts", "Sets", "Advice", "Why", "Sources", "Since"),
}
OPS = {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "in": "in", "not_in": "not in", "is": "is"}


def render(lang: str) -> str:
    from gpu_advisor.rules.loader import load_rules

    rules = load_rules(ROOT / "knowledge" / "rules")
    title, note, when, derived, asserts, sets, advice, why, sources, since = HEAD[lang]
    out = [title, "", note, "", f"{len(rules.active)} rules.", ""]
    for rule in rules.rules:
        out += [f"## {rule.id} — {rule.title.get(lang)}", ""]
        conds = ", ".join(f"`{c.field} {OPS[c.op]} {c.value}`" for c in rule.when.all)
        out.append(f"- **{when}**: {conds}")
        if rule.when.derived:
            out.append(f"- **{derived}**: " + ", ".join(f"`{d}`" for d in rule.when.derived))
        if rule.then.assert_:
            out.append(f"- **{asserts}**: " + ", ".join(f"`{a}`" for a in rule.then.assert_))
        if rule.then.set:
            out.append(f"- **{sets}**: " + ", ".join(f"`{k}={v}`" for k, v in rule.then.set.items()))
        if rule.then.advice:
            out.append(f"- **{advice}**: {rule.then.advice.get(lang)}")
        out.append(f"- **{why}**: {rule.why.get(lang)}")
        out.append(f"- **{sources}**: " + "; ".join(rule.sources))
        out += [f"- **{since}**: {rule.since}", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    for lang in ("zh", "en"):
        path = ROOT / "docs" / f"rules.{lang}.md"
        text = render(lang)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale rule reference: " + ", ".join(stale) + " (run `make docs`)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

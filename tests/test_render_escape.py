"""md_escape: the fast path (nothing to escape) gives exactly what the full escaping gives, on any text."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_advisor.util.textsafe import visible
from gpu_advisor.answer.render import _LINE_START, _MD_SPECIAL, _plain, md_escape

ALPHABET = st.sampled_from(list("ab9 .-_#>+\\`*[]|&<>\n\t\r\x00\x01\x0b\x1f\x7f\x85\u202e\u200b中文"))


def _full(value: object) -> str:
    """The escaping without the shortcut (hidden characters first: textsafe.visible)."""
    return _LINE_START.sub(r"\1\2\\\3", _MD_SPECIAL.sub(r"\\\1", _plain(visible(str(value)))))


@settings(max_examples=1500, deadline=None)
@given(st.text(ALPHABET, max_size=16) | st.text(max_size=16))
def test_md_escape_equals_the_full_escaping(text: str) -> None:
    assert md_escape(text) == _full(text)


@settings(max_examples=500, deadline=None)
@given(st.text(ALPHABET, max_size=24))
def test_no_markup_survives(text: str) -> None:
    out = md_escape(text)
    assert not re.search(r"[<>\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u200b]", out)
    assert not re.search(r"(?<!\\)[`*\[\]|]", out.replace("\\\\", ""))


def test_plain_values_are_unchanged() -> None:
    for value in ("ecs.gn7i-c8g1.2xlarge", "DeepLabV3+ R-50-D8", 1.5, None, "NVIDIA A10 24 GB", "通义千问 7B"):
        assert md_escape(value) == str(value)


def test_comparisons_read_as_text_not_entities() -> None:
    # issue 22: "PyTorch &gt;= 2.0" reached the Markdown; a terminal shows entities as they are
    out = md_escape("PyTorch >= 2.0; 8 vCPU < 20 needed; a -> b; R&D team, &amp;")
    assert "&gt;" not in out and "&lt;" not in out
    assert "PyTorch ≥ 2.0" in out and "8 vCPU ‹ 20" in out and "a → b" in out and "R&D" in out
    assert "&amp;amp;" in out  # an entity the text spells is shown as written, not interpreted

"""Plain-text building blocks for the terminal: display width (CJK counts double), box-drawn tables,
horizontal bar charts, and ANSI styles that are applied only when the output is a terminal."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Style:
    """Applies ANSI styles when color is on; otherwise returns text unchanged."""

    color: bool = False

    def __call__(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(ANSI[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def width(text: str) -> int:
    """Columns the text takes in a terminal (wide East Asian characters take two)."""
    text = ANSI_RE.sub("", text)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 0 if unicodedata.combining(ch) else 1
               for ch in text)


def pad(text: str, cols: int) -> str:
    return text + " " * max(0, cols - width(text))


def clip(text: str, cols: int) -> str:
    """Shorten to at most cols columns, ending with an ellipsis when cut."""
    if width(text) <= cols:
        return text
    out, used = "", 0
    for ch in text:
        w = width(ch)
        if used + w > cols - 1:
            break
        out, used = out + ch, used + w
    return out + "…"


def table(headers: list[str], rows: list[list[str]], style: Style | None = None, max_col: int = 48) -> str:
    """A box-drawn table; cells are clipped to max_col columns."""
    style = style or Style()
    cells = [[clip(str(c), max_col) for c in row] for row in [headers, *rows]]
    cols = [max(width(row[i]) for row in cells) for i in range(len(headers))]

    def line(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (c + 2) for c in cols) + right

    def row_text(row: list[str], bold: bool = False) -> str:
        parts = [" " + (style(pad(cell, c), "bold") if bold else pad(cell, c)) + " " for cell, c in zip(row, cols)]
        return "│" + "│".join(parts) + "│"

    out = [line("┌", "┬", "┐"), row_text(cells[0], bold=True), line("├", "┼", "┤")]
    out += [row_text(r) for r in cells[1:]]
    out.append(line("└", "┴", "┘"))
    return "\n".join(out)


def bars(items: list[tuple[str, float]], capacity: float | None, unit: str = "GiB", cols: int = 36,
         style: Style | None = None, capacity_label: str = "capacity") -> str:
    """One bar per item, scaled so that `capacity` (the card's memory) spans `cols` columns; a final
    stacked bar shows the total against the capacity with a '│' at the capacity mark."""
    style = style or Style()
    total = sum(v for _, v in items)
    scale_to = max(capacity or 0.0, total, 1e-9)
    label_w = max([width(n) for n, _ in items] + [width(capacity_label), 5])
    out = []
    for name, value in items:
        n = int(round(value / scale_to * cols))
        out.append(f"{pad(name, label_w)}  {style('█' * n, 'cyan')}{' ' * (cols - n)}  {value:7.1f} {unit}")
    fill = int(round(total / scale_to * cols))
    mark = int(round((capacity or 0) / scale_to * cols)) if capacity else None
    over = capacity is not None and total > capacity
    bar = "".join("█" if i < fill else "░" for i in range(cols))
    if mark is not None and mark < cols:
        bar = bar[:mark] + "│" + bar[mark + 1:]
    out.append(f"{pad('Σ', label_w)}  {style(bar, 'red' if over else 'green')}  {total:7.1f} {unit}")
    if capacity:
        out.append(f"{pad(capacity_label, label_w)}  {' ' * cols}  {capacity:7.1f} {unit}")
    return "\n".join(out)

"""The closing summary both time-accuracy benches print: predicted (mid) / published ratios, how many published
values fall inside the predicted range, the geometric median error, and the rows that were not scored."""

from __future__ import annotations

import math
import statistics


def print_summary(ratios: list[float], inside: int, skipped: list[str], *, extremes: bool = False) -> int:
    """Prints the summary; 1 when nothing was scored (the bench's exit status), else 0."""
    if not ratios:
        print("no rows scored")
        return 1
    errors = [abs(math.log(r)) for r in ratios]
    spread = f" (min {min(ratios):.2f}, max {max(ratios):.2f})" if extremes else ""
    print(f"\nrows scored: {len(ratios)}; published value inside the predicted range: {inside}/{len(ratios)}")
    print(f"median ratio predicted(mid)/published: {statistics.median(ratios):.2f}{spread}; "
          f"median |error| of mid: {100 * (math.exp(statistics.median(errors)) - 1):.0f} % (geometric)")
    print(f"skipped {len(skipped)} rows:")
    for line in skipped:
        print(f"  - {line}")
    return 0

"""Record the list prices of the catalog's instance families from cloudpilot-ai's public price snapshot.

    python tools/record_prices.py --git-dir /path/to/karpenter-provider-alibabacloud/.git --commit 5d2e0774...

writes tools/data/alicloud_prices_cloudpilot.json: for every region of the snapshot, the hourly price of each
instance type of a GPU family (ecs.gn*, ebmgn*, sccgn*, sgn*, vgn*) and of the CPU families the catalog carries for
data pipelines (CPU_FAMILIES), plus the snapshot's provenance. tools/import_catalog.py reads it.

The snapshot is github.com/cloudpilot-ai/karpenter-provider-alibabacloud, pkg/providers/pricing/
initial-on-demand-prices.json ({region: {instance type: price per hour}}), written by hack/tools/price_gen/price_gen.go
from the price server https://pre-price.cloudpilot.ai (field OnDemandPricePerHour). That server's code
(github.com/cloudpilot-ai/priceserver, pkg/client/alibabacloud.go, getECSPrice) reads Alibaba's China-site price
list (https://www.aliyun.com/price/ecs/ecs-pricing/zh -> g.alicdn.com/aliyun/ecs-price-info/<version>/price/download/
instancePrice.json, the Linux entries' first 'hours' price), and writes 0 for a type the region lists but the price
list does not price: such zeros are recorded apart (zero_prices), never as a price. Code licence of both
repositories: Apache-2.0.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tools" / "data" / "alicloud_prices_cloudpilot.json"
PATH = "pkg/providers/pricing/initial-on-demand-prices.json"
GPU_FAMILY = re.compile(r"^ecs\.(ebmgn|sccgn|sgn|vgn|gn)\d")
CPU_FAMILIES = ("c7", "g7", "r7", "c8i", "g8i", "r8i")  # knowledge/catalog/cpu_families.yaml
PRICESERVER = {"repo": "https://github.com/cloudpilot-ai/priceserver", "path": "pkg/client/alibabacloud.go",
               "commit": "de6fe92546a1fa11bb49c0e22cbdb09bc2fe4ded", "date": "2024-10-16",
               "reads": ("https://www.aliyun.com/price/ecs/ecs-pricing/zh -> https://g.alicdn.com/aliyun/ecs-price-info/"
                         "<version>/price/download/instancePrice.json (Alibaba's China-site public ECS price list; "
                         "the international site's file is ecs-price-info-intl and states currency USD)"),
               "keeps": ("entries whose OS is linux, the first 'hours' price; network type and I/O optimisation "
                         "are not filtered"),
               "zero": "a type DescribeInstanceTypes lists in the region but the price list lacks gets price 0"}


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                          text=True).stdout


def wanted(type_name: str) -> bool:
    family = type_name.split(".")[1] if type_name.count(".") >= 2 else ""
    return bool(GPU_FAMILY.match(type_name)) or family in CPU_FAMILIES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    commit = _git(args.git_dir, "rev-parse", args.commit).strip()
    authored, committed = _git(args.git_dir, "show", "-s", "--format=%as %cs", commit).split()
    raw = json.loads(_git(args.git_dir, "show", f"{commit}:{PATH}"))
    prices: dict[str, dict[str, float]] = {}
    zeros: dict[str, list[str]] = {}
    for region in sorted(raw):
        for name in sorted(raw[region]):
            if not wanted(name):
                continue
            value = raw[region][name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SystemExit(f"{region} {name}: price {value!r} is not a number")
            if value > 0:
                prices.setdefault(region, {})[name] = float(value)
            else:
                zeros.setdefault(region, []).append(name)
    doc = {"provenance": {
        "repo": "https://github.com/cloudpilot-ai/karpenter-provider-alibabacloud", "path": PATH, "commit": commit,
        "date": authored, "committed": committed, "licence": "Apache-2.0 (repository licence)",
        "generator": ("hack/tools/price_gen/price_gen.go: OnDemandPricePerHour of every region from the price "
                      "server https://pre-price.cloudpilot.ai"),
        "price_server": PRICESERVER,
        "currency": ("CNY: the price server reads the China-site price list (price_server.reads); the snapshot "
                     "itself states no currency"),
        "what": ("pay-as-you-go hourly list prices, compute only, of the GPU families (ecs.gn*, ebmgn*, sccgn*, "
                 "sgn*, vgn*) and of the CPU families " + ", ".join(CPU_FAMILIES) + ", every region of the "
                 "snapshot"),
        "regions": len(raw), "types_in_snapshot": sum(len(v) for v in raw.values())},
        "prices": prices, "zero_prices": zeros}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {sum(len(v) for v in prices.values())} prices in {len(prices)} regions, "
          f"{sum(len(v) for v in zeros.values())} zeros left out")
    return 0


if __name__ == "__main__":
    sys.exit(main())

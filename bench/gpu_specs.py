"""Dense peak TFLOPS of GPUs that appear in the published benchmarks but are NOT Alibaba catalog GPUs.

Benchmark-only: never copy these into knowledge/catalog. Figures are dense (non-sparse) Tensor-Core peaks with
FP32 accumulate, from the vendor documents named in `source`.
"""

from __future__ import annotations

BENCH_GPUS: dict[str, dict[str, object]] = {
    "A100": {"bf16": 312.0, "bandwidth_gb_s": 2039.0,
             "source": "NVIDIA A100 Tensor Core GPU datasheet (BF16 Tensor Core 312 TFLOPS dense, 624 with sparsity; "
             "same for 40 GB / 80 GB, PCIe / SXM; memory bandwidth 2,039 GB/s for 80 GB SXM: every torchtune A100 row "
             "peaks above 40 GB or shards a 70B+ model over 8, so 80 GB)"},
    "H100": {"bf16": 989.4, "bandwidth_gb_s": 3350.0, "source": "NVIDIA H100 Tensor Core GPU datasheet, SXM column (BF16 1,979 TFLOPS with "
             "sparsity, i.e. 989.4 dense; 3.35 TB/s)"},
    "4090": {"bf16": 165.2, "bandwidth_gb_s": 1008.0,
             "source": "NVIDIA Ada Lovelace GPU Architecture whitepaper, Appendix A, GeForce RTX 4090: peak BF16 Tensor "
             "TFLOPS with FP32 accumulate 165.2 (330.4 with sparsity); memory bandwidth 1,008 GB/s"},
    "A6000": {"bf16": 154.8, "bandwidth_gb_s": 768.0,
              "source": "NVIDIA Ampere GA102 GPU Architecture whitepaper, NVIDIA RTX A6000: peak FP16/BF16 Tensor TFLOPS "
              "with FP32 accumulate 154.8 (309.7 with sparsity, as on the RTX A6000 datasheet); memory bandwidth 768 GB/s"},
}
UNMAPPED = {
    "A10G": "AWS A10G: NVIDIA publishes no A10G datasheet with Tensor-Core figures; not the catalog's A10",
    "NVIDIA L40S": "no tokens/s in these rows",
}

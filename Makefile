# The two commands of the README's quick start: `make demo` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
PYTHON ?= $(shell for p in python3.12 python3.11 python3; do \
  if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(not (3,11) <= sys.version_info[:2] < (3,13))' 2>/dev/null; then echo $$p; break; fi; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench bench-memory bench-speed bench-instructions docs check-docs lint clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "gpu-advisor needs Python 3.11 or 3.12 (durable-rules does not import on 3.13)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== 在阿里云上训练语义分割模型需要多大的GPU和内存？ (workload file: examples/seed_semseg.yaml) =="
	$(BIN)/gpu-advisor recommend --workload examples/seed_semseg.yaml --lang zh
	@echo
	@echo "== Cityscapes DeepLabV3+ R-50, 1024x1024, batch 8 (examples/cityscapes_deeplabv3plus.yaml) =="
	$(BIN)/gpu-advisor recommend --workload examples/cityscapes_deeplabv3plus.yaml --lang en

test: $(STAMP)
	$(BIN)/python -m pytest -q

docs: $(STAMP)
	$(BIN)/python tools/gen_rule_docs.py

check-docs: $(STAMP)
	$(BIN)/python tools/gen_rule_docs.py --check

bench-memory: $(STAMP)
	$(BIN)/python bench/memory_accuracy.py
	@echo
	@echo "== generalisation check: model-zoo rows outside the dev set, through gpu-advisor estimate --jsonl =="
	$(BIN)/python bench/zoo_check/run.py

bench: bench-memory
	$(BIN)/python bench/run_all.py

# instructions per answer under valgrind: figures that do not drift with the VM's speed (about 13 minutes)
bench-instructions: $(STAMP)
	$(BIN)/python bench/instructions.py

clean:
	rm -rf $(VENV) build dist *.egg-info bench/out

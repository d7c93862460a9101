"""Helpers every stage uses: zh/en texts (i18n), safe YAML (yamlio), number formatting (numfmt), per-object derived
caches (derived) and lazy package exports (lazy). They import nothing of the pipeline."""

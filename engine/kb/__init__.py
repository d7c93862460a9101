"""Loading the knowledge base: the hardware catalog (catalog, catalog_loader), the model registry (models) and the
config-name reader built on it (confignames), plain listings for the adapters (listing), the loaded bundle
(bundle) and the price refresh (refresh). The data itself is the ``gpu_advisor.knowledge`` package (knowledge/)."""

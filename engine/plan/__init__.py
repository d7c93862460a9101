"""Planning: the job with its defaults (defaults), the ordered mitigation chain (ladder), GPU preferences
(preference) and the planner that walks every GPU the catalog sells (planner)."""

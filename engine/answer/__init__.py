"""Composing the answer: the Recommendation model (recommendation), its assembly from plan, facts and firings
(assemble), scenario tiers (scenarios) and Markdown rendering (render)."""

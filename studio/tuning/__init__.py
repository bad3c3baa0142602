"""Tuning engine (no Qt): load generator, live sampler, measured config changes, auto-tune."""

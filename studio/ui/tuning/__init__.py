"""Tuning: the live dashboard (load controls, batching controls, plots, results table) over studio.tuning."""

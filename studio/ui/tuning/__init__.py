"""Tuning: the live dashboard (TuningDashboard: load controls, schema-generated batching controls, linked plots
with change markers, results table with scatter, A/B, auto-tune, recipes, Keep) and its scripted mode
(scripted.run_dashboard). Observes studio.tuning.live.LiveEngine (samples, changes) and reads the open
ConfigDocument; edits reach the document only through the keep callback the shell passes."""

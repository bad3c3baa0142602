"""Ensemble: the pipeline graph of an ensemble config (steps, wires, broken wires in red)."""

"""Wizard: a new model from a template (studio.repository.templates)."""

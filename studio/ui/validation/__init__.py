"""Validation: the findings panel of one document (jump to a finding, apply its fix). Observes the findings
that the DocumentController publishes (studio.validate)."""

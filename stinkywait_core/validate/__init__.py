"""Validation layer: upstream's WaitCntValidationCheckPass and the independent exact checker."""

"""Measure classification quality and speed against labelled listings."""

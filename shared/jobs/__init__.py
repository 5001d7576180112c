"""Bulk jobs: many classifications submitted at once, run on the `bulk` queue (issue 5)."""

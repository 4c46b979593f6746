"""Rendering and delivering capacity planning reports: CSV and PDF from the one report document
(`sliceportal.domain.reports`), and the scheduled delivery to webhooks."""

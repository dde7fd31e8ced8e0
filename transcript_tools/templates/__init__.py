"""Jinja templates of the HTML report (package data)."""

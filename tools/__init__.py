"""Maintainer scripts (not shipped in the wheel): regenerate the knowledge tables from their public sources."""

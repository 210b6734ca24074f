"""Placeholder: filled in by its implementation."""

__all__ = []

"""Coordinators: consumer groups and their committed offsets (transactions come later)."""

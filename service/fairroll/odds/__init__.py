"""Exact outcome probabilities per mechanic, computed by fairroll's own engines."""

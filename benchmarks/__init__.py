"""Benchmarks: ``make bench`` prints figures and ratios against floors measured in the same run."""

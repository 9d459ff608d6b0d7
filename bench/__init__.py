"""Benchmarks der Stufe: Generator, Grundlinie, Messungen (siehe bench/README.md)."""

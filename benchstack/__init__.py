"""bench-stack: result schema, load-tool parsers, statistics and reports for web stack benchmarks."""

__version__ = "0.1.0"

"""The sections of scripts/kind_files.py: one module per registry, each with ``wanted(root)``."""

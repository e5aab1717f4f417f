"""The measured data's types, below everything that makes or reads them: one cell to measure (cellplan:
CellPlan), what a load tool's output parses to (model: Parsed, error counting, latency keys) and a cell's
latency distribution (distribution)."""

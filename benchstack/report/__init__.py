"""Step 6, what a person reads: report.md, report.html and cells.csv (built once as a model, rendered
to markdown and through templates/ to HTML), the plots, and a stored cell's latency distribution
(hist, and hdr/*.hlog for HdrHistogram's tools)."""

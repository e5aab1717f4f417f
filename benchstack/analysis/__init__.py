"""Step 5, what the numbers say: statistics, load points, the verdict and its checks (checks/),
each stack against the baseline (comparison), two runs compared (compare, hostdiff), whether
the load fits the hosts (capacity), and a run's verdict, comparisons, drift, thresholds and load-point
rows computed once for the report, the history and the CLI (summary)."""

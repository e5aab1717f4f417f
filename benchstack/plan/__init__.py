"""Step 1, the plan: an experiment read, validated and resolved once per run (resolved:
compile_plan), the stacks resolved through the kinds, which roles each host runs (roles), each
role's fields and variables, each loadgen's target, the loopback CPU split (cpusplit)."""

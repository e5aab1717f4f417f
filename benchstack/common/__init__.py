"""What every step shares: files users hand us, read within bounds and quoted back safely
(inputs), number checks, medians and how a table prints a number (numbers), Markdown tables (markdown),
the checks of a folder a user names (paths), and the roles renamed since an older bench-stack, which the plan
and provisioning both know (renamed)."""

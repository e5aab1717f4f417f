"""Step 3, the cells: one cell measured (runner) with its remote shell, interference and host events;
several loadgens (barrier, merge, resume), the run lock, the noise probe, dropping cells to measure them
again (drop), and the extra rounds until the comparisons are decided (repetitions, which asks analysis)."""

"""Step 3, the cells: one cell measured (runner) with its command, remote shell, system statistics,
interference and host events; several loadgens (barrier, merge, resume), the run lock, the noise
probe, and the extra rounds until the target precision (repetitions)."""

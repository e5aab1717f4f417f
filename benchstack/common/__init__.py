"""What every step shares: files users hand us, read within bounds and quoted back safely
(inputs), and number checks, medians and how a table prints a number (numbers)."""

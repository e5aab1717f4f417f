"""Step 4, what a run stores: the cell (cell, model, distribution), the published formats (formats,
schemas/), the run folder and its files, and dropping cells from it."""

"""Step 4, what a run stores: the cell (cell, with the loadgen's system statistics: sysstats), the
published formats (formats, schemas/), the run folder (runfolder) and the names in it (layout), its
files, and where a run is published (location: URLs, the plan's check and the masking of credentials,
without boto3)."""

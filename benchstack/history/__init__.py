"""Step 7, runs beyond one run: every finished run recorded in a results database (schema:
the tables, database: open and upgrade it with migrations/, record: a run folder imported,
finished: the report step's best-effort record and publish), and what reads it (queries: history, trend,
the regression check; commands: their command line; defaults: what they need without SQLAlchemy); and run
folders copied to an S3-compatible store and back (publish, with boto3; the URLs are results.location)."""

"""The verdict's checks, one module per question they answer about a run: did it measure what it planned
(completeness), did its requests fail or run slow (errors), how precisely is each median known (precision),
did the hosts measure the stacks and not themselves (hosts), was each cell at steady state (steady). Each
reads the run as base reads it; analysis.verdict runs them and makes the verdict of their reasons."""

"""Each turn's capture into memory, owed until memory acknowledged it, and its sender."""

"""What every Violet service shares: settings, identity, the gRPC bootstrap, storage helpers."""

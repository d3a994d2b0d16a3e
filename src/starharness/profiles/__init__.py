"""Built-in profiles (YAML package data): one per command, plus the bundles they stack."""

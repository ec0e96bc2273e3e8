"""audit: `rescon audit`, the contract monitor's rules run on a live cluster (docs/audit.md)."""

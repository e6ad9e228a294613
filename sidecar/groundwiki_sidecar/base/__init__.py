"""What every part of the sidecar shares: its settings, health, seal, listening record, rates, the index folder's claim and the start's progress. Imports the core and lanes/."""

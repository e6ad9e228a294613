"""What every part of the sidecar shares: its settings, health, seal, listening record and rates. Imports the core and lanes/."""

"""What a wiki is configured with, and the errors every layer raises. Imports nothing of groundwiki."""

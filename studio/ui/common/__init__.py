"""Common: small widgets and helpers shared by the capability folders (background jobs, palette-aware colours).
Imports only Qt and the core."""

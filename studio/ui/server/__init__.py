"""Server: start and stop a local Triton (embedded CPU or Docker) off the UI thread, its status, endpoints and
log. Observes studio.runtime (Runtime, LogStream)."""

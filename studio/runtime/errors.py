"""Typed runtime errors, each with a message a user can act on."""

from __future__ import annotations

import re

_ERROR_LINE = re.compile(r"^E\d{4} |error|unrecognized|failed|invalid", re.IGNORECASE)


class RuntimeFailure(RuntimeError):
    """Base of every runtime error; `hint` says what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


class RepositoryNotFound(RuntimeFailure):
    pass


class PortInUse(RuntimeFailure):
    def __init__(self, port: int, what: str) -> None:
        super().__init__(f"port {port} ({what}) on 127.0.0.1 is already in use",
                         "choose another port, or leave it out and the studio picks a free one")
        self.port = port


class ServerExited(RuntimeFailure):
    """The server process or container ended during start (or while running)."""

    def __init__(self, message: str, exit_code: int | None, last_lines: list[str], hint: str | None = None) -> None:
        tail = last_lines[-50:]
        # errors printed early (before a long usage text, say) would fall out of the tail: name them first
        early = [ln for ln in last_lines[:-50] if _ERROR_LINE.search(ln)][:5]
        text = f"{message} (exit code {exit_code})"
        if early:
            text += "\n--- errors ---\n" + "\n".join(early)
        if tail:
            text += "\n--- last log lines ---\n" + "\n".join(tail)
        super().__init__(text, hint)
        self.exit_code = exit_code
        self.errors = early
        self.last_lines = tail


class ReadinessTimeout(RuntimeFailure):
    pass


class EmbeddedUnavailable(RuntimeFailure):
    pass


class DockerUnavailable(RuntimeFailure):
    pass


class ImageMissing(RuntimeFailure):
    pass


class GpuUnavailable(RuntimeFailure):
    pass


class LoadFailed(RuntimeFailure):
    """The server refused to load a model; `reason` is the real cause, read from the server log."""

    def __init__(self, model: str, server_message: str, reason: str | None) -> None:
        msg = f"failed to load '{model}': {server_message}"
        if reason:
            msg += f"\n  reason (from the server log): {reason}"
        super().__init__(msg)
        self.model = model
        self.server_message = server_message
        self.reason = reason


class LoadTimeout(LoadFailed):
    """A load (or reload) that did not finish within the client's deadline: the server may still be loading it."""

    def __init__(self, model: str, timeout_s: float, reason: str | None = None) -> None:
        super().__init__(model, f"the load did not finish within {timeout_s:.0f} s; the server may still be loading "
                                "it (a large model, or a backend that hangs in initialize: see the server log)", reason)
        self.timeout_s = timeout_s

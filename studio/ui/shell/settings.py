"""UI state kept in QSettings (geometry, recent repositories), read back with the types it was written with.

QSettings' INI backend returns a one-element list as a plain string and an empty list as None; reading such a
value as a list gave single characters. Every list goes through string_list()."""

from __future__ import annotations

from PySide6.QtCore import QSettings

RECENT_KEY = "recent/repositories"
RECENT_MAX = 10


def string_list(settings: QSettings, key: str) -> list[str]:
    """A list of strings, whatever the backend made of it (None, one string, a list)."""
    value = settings.value(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value if isinstance(v, str) and v]


def recent_repositories(settings: QSettings) -> list[str]:
    return string_list(settings, RECENT_KEY)


def remember_repository(settings: QSettings, path: str) -> list[str]:
    """Put a repository first in the recent list (no duplicates, at most RECENT_MAX); returns the list."""
    recent = [path, *[r for r in recent_repositories(settings) if r != path]][:RECENT_MAX]
    settings.setValue(RECENT_KEY, recent)
    settings.sync()
    return recent

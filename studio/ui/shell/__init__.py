"""Shell: the main window, menus, actions, settings and recent repositories. The only ui package that knows
the capability folders; it wires them together over the core objects (Repository, DocumentController)."""

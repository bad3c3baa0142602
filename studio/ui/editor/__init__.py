"""Editor: the schema-generated form, the text view, and the DocumentController that owns one ConfigDocument
and its undo stack (form edits and typing alike), save, reload and crash recovery."""

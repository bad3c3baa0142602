"""`triton-studio`: the GUI when run bare, and headless subcommands over the core.

Exit codes: 0 ok, 1 findings or failure, 2 usage (bad arguments, unknown field path).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from studio import __version__

SUBCOMMANDS = ("fmt", "get", "set")


def _config_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.rglob("config.pbtxt")))
        else:
            out.append(p)
    return out


def _load(path: Path):
    from studio.config import ConfigDocument

    return ConfigDocument.load(path)


def _load_or_report(path: str):
    """The document at path, or None after printing why it cannot be read (file:line:col for bad text)."""
    from studio.config import ParseError

    try:
        return _load(Path(path))
    except ParseError as e:
        print(e.format(path), file=sys.stderr)
    except OSError as e:
        print(f"{path}: {e.strerror or e}", file=sys.stderr)
    return None


def cmd_fmt(args) -> int:
    from studio.config import ParseError, atomic_write
    from studio.config.format import canonical_text

    status = 0
    files = _config_files(args.paths)
    if not files:
        print("fmt: no config.pbtxt found", file=sys.stderr)
        return 1
    for path in files:
        try:
            doc = _load(path)
        except (OSError, ParseError) as e:
            print(e.format(str(path)) if isinstance(e, ParseError) else f"{path}: {e}", file=sys.stderr)
            status = 1
            continue
        new = canonical_text(doc)
        if new == doc.text:
            continue
        if args.check:
            print(f"{path}: would be reformatted")
            status = 1
        else:
            atomic_write(path, new)
            print(f"{path}: reformatted")
    return status


def cmd_get(args) -> int:
    from studio.config import PathError

    doc = _load_or_report(args.path)
    if doc is None:
        return 1
    try:
        value = doc.get(args.field)
        if value is None:
            print(f"{args.path}: {args.field} is not set", file=sys.stderr)
            return 1
        print(doc.value_text(args.field))
    except PathError as e:
        print(f"{args.path}: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_set(args) -> int:
    from studio.config import EditError, ParseError, PathError
    from studio.config.values import parse_value_text

    doc = _load_or_report(args.path)
    if doc is None:
        return 1
    try:
        value = parse_value_text(doc.descriptor, args.field, args.value)
        doc.set(args.field, value)
    except PathError as e:
        print(f"{args.path}: {e}", file=sys.stderr)
        return 2
    except (EditError, ParseError) as e:
        msg = e.message if isinstance(e, ParseError) else str(e)
        hint = f" ({e.hint})" if isinstance(e, ParseError) and e.hint else ""
        print(f"{args.path}: bad value for {args.field}: {msg}{hint}", file=sys.stderr)
        return 2
    doc.save(args.path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="triton-studio",
        description="Triton Config Studio. Run without a subcommand to open the GUI.",
    )
    p.add_argument("--version", action="version", version=f"triton-studio {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    f = sub.add_parser("fmt", help="rewrite config.pbtxt files in canonical layout (keeps comments)")
    f.add_argument("--check", action="store_true", help="only report files that would change (exit 1)")
    f.add_argument("paths", nargs="+", metavar="PATH", help="config files or folders (searched for config.pbtxt)")
    f.set_defaults(func=cmd_fmt)
    g = sub.add_parser("get", help="print a field's value")
    g.add_argument("path", metavar="PATH")
    g.add_argument("field", metavar="FIELD", help='field path, e.g. dynamic_batching.max_queue_delay_microseconds, input[0].dims, parameters["K"].string_value')
    g.set_defaults(func=cmd_get)
    s = sub.add_parser("set", help="set a field with a minimal edit (atomic write)")
    s.add_argument("path", metavar="PATH")
    s.add_argument("field", metavar="FIELD")
    s.add_argument("value", metavar="VALUE", help="pbtxt value: 8, TYPE_FP32, true, \"text\" (quotes optional), [1, 2], { ... }")
    s.set_defaults(func=cmd_set)
    return p


def gui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="triton-studio", description="Open the studio window.", add_help=True)
    p.add_argument("repository", nargs="?", help="a Triton model repository folder to open")
    p.add_argument("--screenshot", metavar="PNG", help="open, save a screenshot of the window, and quit")
    p.add_argument("--version", action="version", version=f"triton-studio {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help")):
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:
            return int(e.code or 0)
        return args.func(args)
    args = gui_parser().parse_args(argv)
    if args.repository and not os.path.isdir(args.repository):
        print(f"triton-studio: {args.repository}: not a folder", file=sys.stderr)
        return 2
    from studio.ui.app import run_gui

    return run_gui(args.repository, screenshot=args.screenshot)


if __name__ == "__main__":
    sys.exit(main())

"""Validation: what Triton will reject, and why, before Triton sees it (no Qt).

    findings = validate_config(doc, model_name="m")                 # config only, no files
    report = validate_repository("models/")                        # every model, files and ensembles
    report = validate_path(path)                                    # a repository, a model folder or a file

Findings carry Triton's own message, a rule id, severity, the field path, file:line:col and (where the fix is
mechanical) edits the UI can apply.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tritonclient.grpc import model_config_pb2 as pb

from studio.config import ConfigDocument, ParseError
from studio.frameworks import framework_of
from studio.repository import ModelEntry, Repository, config_only_checkout, gc_paused, scan_model
from studio.validate.findings import SEVERITIES, Edit, Finding, worst
from studio.validate.normalize import (
    AutoCompleteError,
    VersionFolder,
    auto_complete_backend_fields,
    normalize_instance_groups,
    normalize_model_config,
)
from studio.validate.rules import Context, check_config

__all__ = [
    "Edit",
    "Finding",
    "Options",
    "Report",
    "validate_config",
    "validate_model",
    "validate_path",
    "validate_repository",
    "worst",
]


@dataclass
class Options:
    auto_complete: bool = True  # False mirrors tritonserver --disable-auto-complete-config
    config_only: bool = False  # no file-system checks; models an ensemble calls need not exist
    gpus: set[int] = field(default_factory=set)  # GPUs of this machine (KIND_GPU findings are info only)
    extra_backends: set[str] = field(default_factory=set)  # custom backends installed on the target server
    # A repository of configs without model files (studio.repository.config_only_checkout): a model without
    # version folders is a warning ("Triton will not load it until model files are present"), not an error.
    # None: decided per repository; False: always an error; True: always a warning.
    config_only_checkout: bool | None = None
    # Backends the target server has beyond the studio's known ones (`validate --backend NAME`): no "the server
    # must have backend 'X'" warning for them.
    known_backends: set[str] = field(default_factory=set)
    # The Triton release whose rules apply ("2.51": the embedded server's); rules that changed between releases
    # follow it (studio.validate.rules.version_at_least).
    triton_version: str = "2.51"


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    models: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def counts(self) -> dict[str, int]:
        return {s: sum(f.severity == s for f in self.findings) for s in SEVERITIES}

    def for_model(self, name: str) -> list[Finding]:
        return [f for f in self.findings if f.model == name]


def local_gpus() -> set[int]:
    """GPU ids of this machine, from the NVIDIA driver's /proc entries (no CUDA needed)."""
    base = Path("/proc/driver/nvidia/gpus")
    try:
        n = len([p for p in base.iterdir() if p.is_dir()])
    except OSError:
        return set()
    return set(range(n))


# -- one config ------------------------------------------------------------------------------------------
def _locate(findings: list[Finding], doc: ConfigDocument | None, file: str | None) -> list[Finding]:
    """Fill in file, line and column from each finding's field path (nearest written ancestor)."""
    for f in findings:
        f.file = f.file or file
        if doc is None or f.path is None or f.line is not None:
            continue
        path = f.path
        while path:
            try:
                pos = doc.position(path)
            except Exception:  # noqa: BLE001 - a path the document cannot resolve: try its parent
                pos = None
            if pos is not None:
                f.line, f.column = pos
                break
            path = _parent_path(path)
    return findings


def _parent_path(path: str) -> str:
    if path.endswith("]"):
        return path[: path.rindex("[")]
    if "." in path:
        return path[: path.rindex(".")]
    return ""


def _prepare(
    written: pb.ModelConfig, model_name: str, first_version: VersionFolder | None, options: Options
) -> tuple[pb.ModelConfig, list[int], Finding | None]:
    cfg = pb.ModelConfig()
    cfg.CopyFrom(written)
    try:
        auto_complete_backend_fields(model_name, cfg, first_version)
    except AutoCompleteError as e:
        return cfg, [], Finding("error", "backend.undetermined", str(e), None, model=model_name,
                                hint="set backend (or platform) in config.pbtxt")
    normalize_model_config(cfg)
    origin = normalize_instance_groups(cfg, options.gpus)
    return cfg, origin, None


def validate_config(
    doc: ConfigDocument | pb.ModelConfig,
    *,
    model_name: str | None = None,
    options: Options | None = None,
    first_version: VersionFolder | None = None,
    file: str | None = None,
) -> list[Finding]:
    """Triton's rules for one config. With no first_version, checks that need the model's files are skipped."""
    return _validate_config(doc, model_name, options or Options(), first_version, file)[2]


def _validate_config(
    doc: ConfigDocument | pb.ModelConfig,
    model_name: str | None,
    options: Options,
    first_version: VersionFolder | None,
    file: str | None,
) -> tuple[pb.ModelConfig, bool, list[Finding]]:
    """(the normalized config, whether Triton refused it while filling in the backend, the findings)."""
    document = doc if isinstance(doc, ConfigDocument) else None
    written = doc.to_message() if isinstance(doc, ConfigDocument) else doc
    name = model_name or written.name or (Path(file).parent.name if file else "")
    where = file or (document.filename if document else None)
    cfg, origin, fatal = _prepare(written, name, first_version, options)
    if fatal is not None:
        if first_version is None and not options.config_only and options.config_only_checkout:
            # no version folder to read the backend off: the model files are not checked out
            fatal.severity = "warning"
            fatal.message += " (no version folders: Triton will not load it until model files are present)"
        elif first_version is None and options.config_only:
            # Triton would read the backend off the model files, which config-only validation does not see
            fatal.severity = "info"
            fatal.rule = "backend.from-files"
            fatal.message = (
                f"'{name}' names no backend or platform: Triton determines it from the files in the first "
                "version folder (config-only validation does not look at them)"
            )
        return cfg, True, _locate([fatal], document, where)
    ctx = Context(
        name=cfg.name,
        cfg=cfg,
        written=written,
        auto_complete=options.auto_complete,
        gpus=options.gpus,
        extra_backends=options.extra_backends | options.known_backends,
        triton_version=options.triton_version,
        config_only=options.config_only,
        group_origin=origin,
    )
    return cfg, False, _triton_position(_locate(check_config(ctx), document, where), document)


def _triton_position(findings: list[Finding], doc: ConfigDocument | None) -> list[Finding]:
    """A field or enum value the chosen release does not know fails Triton's parse: lead its message with protobuf's
    log line (`Error parsing text-format inference.ModelConfig: L:C: ...`, the column of the token after the name)."""
    from studio.validate.findings import _token_at

    for f in findings:
        if f.rule not in ("release.unknown-field", "release.unknown-enum-value") or doc is None or f.line is None:
            continue
        lines = doc.text.split("\n")
        if not 0 < f.line <= len(lines):
            continue
        src = lines[f.line - 1]
        t = _token_at(src, (f.column or 1) - 1)  # the name (or the value) itself
        nxt = _token_at(src, t[0] + len(t[1])) if t else None
        if f.rule == "release.unknown-enum-value" and t and nxt and nxt[1] == ":":
            t = _token_at(src, nxt[0] + 1)  # the value after "field:"
            nxt = _token_at(src, t[0] + len(t[1])) if t else None
        col = nxt[0] + 1 if nxt else f.column
        f.message = f"Error parsing text-format inference.ModelConfig: {f.line}:{col}: {f.message}"
    return findings


# -- a model folder --------------------------------------------------------------------------------------
def _versions_to_load(cfg: pb.ModelConfig, existing: list[int]) -> list[int]:
    policy = cfg.version_policy.WhichOneof("policy_choice")
    if policy == "specific":
        return sorted(v for v in cfg.version_policy.specific.versions if v in existing)
    if policy == "all":
        return sorted(existing)
    n = cfg.version_policy.latest.num_versions if policy == "latest" else 1
    return sorted(existing)[::-1][:n][::-1]


def _first_version(entry: ModelEntry) -> VersionFolder | None:
    vd = entry.first_version_dir()
    if vd is None:
        return None
    return VersionFolder(set(vd.files), lambda n, d=vd: n in d.dirs)


def model_config_and_findings(
    entry: ModelEntry, options: Options
) -> tuple[pb.ModelConfig | None, list[Finding]]:
    """Validate one model folder; returns its normalized config (for ensemble checks) and the findings."""
    name = entry.name
    file = str(entry.config) if entry.config else str(entry.path)
    out: list[Finding] = []

    def add(sev, rule, msg, path=None, hint=None, edits=()):
        out.append(Finding(sev, rule, msg, path, hint, file=file, model=name, edits=tuple(edits)))

    for link in entry.outside_links:
        add("warning", "repository.symlink-outside", f"'{name}/{link}' is a symbolic link that leaves the repository: the studio does not follow it")
    for rel in entry.misplaced_configs:
        out.append(Finding(
            "warning", "repository.misplaced-config",
            f"Triton reads only {name}/config.pbtxt; this file ({name}/{rel}) is ignored",
            hint=f"move it to {name}/config.pbtxt" if entry.config is None else f"merge it into {name}/config.pbtxt and delete it",
            file=str(entry.path / rel), model=name,
        ))
    if entry.read_error:
        add("error", "repository.unreadable", entry.read_error)
        return None, out
    if entry.error is not None:
        e = entry.error
        out.append(Finding.from_parse_error(e, file=file, model=name))
        return None, out
    if entry.document is None:
        if not options.auto_complete:
            add("error", "repository.no-config", f"model '{name}' has no config.pbtxt and auto-complete is disabled: Triton has no configuration to load")
            return None, out
        add("info", "repository.no-config", f"model '{name}' has no config.pbtxt: Triton derives the configuration from the model files (auto-complete)")
        written = pb.ModelConfig()
    else:
        written = entry.document.to_message()
    first = _first_version(entry)
    cfg, fatal, findings = _validate_config(entry.document or written, name, options, first, file)
    out.extend(findings)
    if fatal:
        return None, out
    doc = entry.document

    if written.name and written.name != name:
        out.append(_locate([Finding(
            "error", "repository.name-mismatch",
            f"unexpected directory name '{name}' for model '{written.name}', directory name must equal model name",
            "name", f"rename the folder or set name: \"{name}\"", file=file, model=name,
            edits=(Edit("set", "name", name),),
        )], doc, file)[0])
    for _folder, why in entry.ignored:
        add("info", "repository.version-ignored", why, hint="version folders are positive integers without leading zeros")
    existing = [int(v) for v in entry.versions]
    to_load = _versions_to_load(cfg, existing)
    if not to_load:
        msg = f"at least one version must be available under the version policy of model '{name}'"
        if cfg.version_policy.WhichOneof("policy_choice") == "specific" and existing:
            # Triton logs each absent specific version first (VersionsToLoad), then refuses with the line above
            gone = [v for v in cfg.version_policy.specific.versions if v not in existing]
            msg = "; ".join([f"version {v} is specified for model '{name}', but the version directory is not present"
                             for v in gone] + [msg])
        severity = "error"
        if not existing:
            hint = f"create a version folder, e.g. {name}/1/"
            if options.config_only_checkout:
                severity = "warning"
                msg = f"no version folders: Triton will not load it until model files are present (Triton: {msg})"
                hint = f"the repository holds configs without model files; put them in {name}/1/ before serving"
        else:
            hint = f"existing versions: {', '.join(map(str, existing))}"
        out.append(_locate([Finding(severity, "repository.no-version", msg, "version_policy", hint, file=file, model=name)], doc, file)[0])
    if cfg.version_policy.WhichOneof("policy_choice") == "specific":
        for i, v in enumerate(cfg.version_policy.specific.versions):
            if v not in existing:
                out.append(_locate([Finding(
                    "warning", "repository.specific-version-missing",
                    f"version_policy names version {v} of model '{name}', but there is no folder {name}/{v}/",
                    f"version_policy.specific.versions[{i}]", file=file, model=name,
                )], doc, file)[0])
    # the files Triton will look for in each version it loads
    fw = framework_of(cfg)
    filename = cfg.default_model_filename
    python_based = cfg.backend == "python" or cfg.runtime.endswith(".py")
    if cfg.backend == "python" and cfg.runtime and cfg.runtime.endswith(".py"):
        filename = cfg.default_model_filename or "model.py"
    if cfg.platform != "ensemble":
        for v in to_load:
            vd = entry.version_dirs.get(str(v))
            names = set(vd.files) if vd else set()
            if not names:
                hang = " (Triton 2.51 reports no error: the model stays LOADING)" if cfg.backend == "python" else ""
                add("error", "repository.empty-version", f"version folder {name}/{v}/ is empty: Triton finds no model to load there{hang}",
                    hint=f"put {filename or 'the model file'} in it")
                continue
            if filename and filename not in names and not (cfg.cc_model_filenames and set(cfg.cc_model_filenames.values()) & names):
                want = filename
                if fw is not None and fw.model_is_directory is True:
                    want += " (a folder)"
                hang = " (Triton 2.51 reports no error: the model stays LOADING)" if cfg.backend == "python" else ""
                add("error", "repository.model-file", f"unable to find '{name}/{v}/{filename}' for model '{name}'{hang}",
                    "default_model_filename" if written.default_model_filename else None,
                    hint=f"Triton looks for {want} in each version folder"
                    + ("; default_model_filename names another file" if filename != (fw.default_model_filename if fw else filename) else ""))
            elif filename and fw is not None and fw.model_is_directory is True and vd and filename not in vd.dirs:
                add("error", "repository.model-file", f"'{name}/{v}/{filename}' must be a folder for {fw.label} models")
            for cc, fname in cfg.cc_model_filenames.items():
                if fname not in names:
                    add("warning", "repository.cc-model-file", f"cc_model_filenames maps compute capability {cc} to '{fname}', which is not in {name}/{v}/")
    if python_based and "EXECUTION_ENV_PATH" in cfg.parameters:
        env = cfg.parameters["EXECUTION_ENV_PATH"].string_value
        marker = "$$TRITON_MODEL_DIRECTORY"
        if env.startswith(marker):
            target = Path(str(entry.path) + env[len(marker):])
            if not target.exists():
                add("error", "python.execution-env", f"Failed to get the canonical path for {target}. (EXECUTION_ENV_PATH '{env}' of model '{name}' points to a file that does not exist)",
                    'parameters["EXECUTION_ENV_PATH"]', hint="pack the environment with conda-pack and put the archive there")
        elif not os.path.isabs(env):
            add("warning", "python.execution-env", f"EXECUTION_ENV_PATH '{env}' is relative: Triton resolves it against its own working folder; start it with $$TRITON_MODEL_DIRECTORY")
    from studio.validate.rules import check_model_folder  # Triton's loading checks that read the folder

    out.extend(check_model_folder(entry.path, name, cfg, written, auto_complete=options.auto_complete,
                                  triton_version=options.triton_version, file=file, config_only=options.config_only))
    if written.model_transaction_policy.decoupled and cfg.backend not in ("python", "") and fw is not None and not fw.decoupled:
        add("warning", "decoupled.backend", f"model '{name}' is decoupled, but the {fw.label} backend sends one response per request",
            "model_transaction_policy.decoupled")
    for f in out:
        f.model = name  # the folder's findings (Triton's rules name the model as written; a mismatch is its own error)
        if f.line is None and f.path and doc is not None:
            _locate([f], doc, file)
    return cfg, out


# -- a repository ----------------------------------------------------------------------------------------
def validate_repository(repo: str | os.PathLike | Repository, options: Options | None = None) -> Report:
    with gc_paused():
        return _validate_repository(repo, options or Options())


def _validate_repository(repo: str | os.PathLike | Repository, options: Options) -> Report:
    repository = repo if isinstance(repo, Repository) else Repository(repo)
    if not repository.models:
        repository.scan()
    report = Report(models=list(repository.models))
    if options.config_only_checkout is None and not options.config_only:
        from dataclasses import replace

        bare = config_only_checkout(repository.models)
        options = replace(options, config_only_checkout=bare)
        if bare:
            n = sum(1 for e in repository.models.values() if not e.versions)
            report.findings.append(Finding(
                "info", "repository.config-only-checkout",
                f"{n} of {len(repository.models)} models have no version folders: a repository of configs without "
                "model files; missing versions are warnings (Triton will not load those models until the files are present)",
                file=str(repository.path)))
    for link in repository.outside_links:
        report.findings.append(Finding("warning", "repository.symlink-outside",
                                       f"'{link}' is a symbolic link that leaves the repository: the studio does not follow it",
                                       file=str(repository.path / link)))
    configs: dict[str, pb.ModelConfig] = {}
    entries = repository.models
    for name, entry in entries.items():
        if options.config_only:
            if entry.document is None and entry.error is None:
                continue
            if entry.error is not None:
                e = entry.error
                report.findings.append(Finding.from_parse_error(e, file=str(entry.config), model=name))
                continue
            cfg, _, findings = _validate_config(entry.document, name, options, None, str(entry.config))
        else:
            cfg, findings = model_config_and_findings(entry, options)
        report.findings.extend(findings)
        if cfg is not None:
            configs[name] = cfg
    from studio.validate.ensembles import check_ensembles

    report.findings.extend(check_ensembles(entries, configs, options))
    return report


def validate_model(
    repository: Repository, name: str, document: ConfigDocument | None = None, options: Options | None = None
) -> list[Finding]:
    """One model's findings exactly as validate_repository reports them (the browser's counts), with `document`
    (e.g. an editor's current text) in place of its config.pbtxt: one source of truth for a model's findings.
    `repository` is scanned (its other models' folders decide config-only checkouts and ensemble checks)."""
    from dataclasses import replace

    from studio.validate.ensembles import check_ensembles

    options = options or Options()
    entries = dict(repository.models)
    if document is not None:
        entries[name] = replace(entries[name], document=document, error=None, read_error=None)
    if options.config_only_checkout is None and not options.config_only:
        options = replace(options, config_only_checkout=config_only_checkout(entries))
    with gc_paused():
        cfg, out = model_config_and_findings(entries[name], options)
        configs = {name: cfg} if cfg is not None else {}
        todo = list(cfg.ensemble_scheduling.step) if cfg is not None else []
        while todo:  # the models an ensemble reaches: its own checks read their configs
            step = todo.pop().model_name
            if step in configs or step not in entries:
                continue
            c, _ = model_config_and_findings(entries[step], options)
            if c is not None:
                configs[step] = c
                todo.extend(c.ensemble_scheduling.step)
        out.extend(f for f in check_ensembles(entries, configs, options) if f.model == name)
    return out


def validate_path(path: str | os.PathLike, options: Options | None = None) -> Report:
    """PATH is a repository, a model folder, or a lone config file (a lone file is checked config-only)."""
    options = options or Options()
    p = Path(path)
    if p.is_file():
        try:
            doc = ConfigDocument.load(p)
        except ParseError as e:
            return Report([Finding.from_parse_error(e, file=str(p))])
        name = doc.get("name") or p.parent.name
        return Report(validate_config(doc, model_name=name, options=options, file=str(p)), [name])
    if not p.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if (p / "config.pbtxt").is_file() or any(c.is_dir() and c.name.isdigit() for c in p.iterdir()):
        entry = scan_model(p, p.parent.resolve())
        if options.config_only:
            if entry.error is not None:
                e = entry.error
                return Report([Finding.from_parse_error(e, file=str(entry.config))], [entry.name])
            return Report(validate_config(entry.document, model_name=entry.name, options=options, file=str(entry.config)), [entry.name])
        _, findings = model_config_and_findings(entry, options)
        return Report(findings, [entry.name])
    return validate_repository(p, options)

"""What one launch sets, in one profile: the effective value of any config key.

An override's value wins (the last one for a key); otherwise the value comes
from verl's composed config, following `${path}` and `${oc.select:path,default}`
interpolations the way OmegaConf would resolve them for these simple forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.values import Unknown, is_unknown

__all__ = ["LaunchView", "ScriptContext", "Setting", "is_unknown"]

_SELECT = re.compile(r"^\$\{oc\.select:([\w.]+),(.*)\}$")
_PLAIN = re.compile(r"^\$\{([\w.]+)\}$")


@dataclass
class Setting:
    """One value override of a launch, as Hydra parses it: its value is an `Unknown` (carrying what
    the script wrote) where the script's value is known only at run time."""

    key: str
    value: object
    loc: object
    kind: str  # change, add, force_add, delete
    text: str  # the override as the script wrote it
    display: str = ""  # the value as the script wrote it, unknown parts as their source

    @property
    def shown_value(self):
        return self.display if isinstance(self.value, Unknown) else self.value


class LaunchView:
    def __init__(self, spec, config_name: str, profile, settings: list, tree: dict | None, selections=None):
        self.spec = spec
        self.config_name = config_name
        self.profile_of = profile  # values.Profile
        self.target = None  # target.Target: device, stack, verl and config folders, set by the pipeline
        self.source = None  # hydra_stage.tree.ConfigSource of the composition
        self.composes = True  # False: the Hydra stage refuses an override, so verl never starts
        self.settings = settings
        self.tree = tree or {}
        self._raw: dict = {}  # key -> its node in `tree` (raw)
        self.selections: dict = dict(selections or {})  # config group -> where the launch selects its option
        self.last: dict[str, Setting] = {}
        for s in settings:
            self.last[s.key] = s

    @property
    def verl_version(self) -> str:
        """The launch's verl release as messages say it (`verl {view.verl_version} asserts ...`):
        its version, else "(version not known)" (a vendored copy without a version file)."""
        return getattr(self.source, "verl_version", None) or "(version not known)"

    @property
    def loc(self):
        return self.spec.loc

    def profile(self, name: str) -> str | None:
        """The value of a switch in this profile (None: unset or not known)."""
        return self.profile_of.value(name)

    def exported(self, name: str):
        """An environment variable as the launch gets it from the script: its text, an Unknown
        when the script builds it from values known only at run time, None when neither the
        script (an `export`, a `NAME=value` prefix) nor the profile exports it."""
        f = (getattr(self.spec, "env", None) or {}).get(name)
        if f is None:
            return None
        return f.value if f.known else Unknown(f.display, f"{name} at the launch")

    def export_loc(self, name: str):
        """Where the script gives the exported variable its value, else the launch."""
        f = (getattr(self.spec, "env", None) or {}).get(name)
        return f.loc if f is not None and f.loc is not None else self.spec.loc

    def setting(self, key: str) -> Setting | None:
        s = self.last.get(key)
        return s if s is not None and s.kind != "delete" else None

    def value(self, key: str, depth: int = 0):
        """The effective value, or an Unknown (from the environment or a probe), or None."""
        s = self.last.get(key)
        if s is not None:
            if s.kind == "delete":
                return None
            return s.value
        return self.default(key, depth)

    def raw(self, key: str):
        """The composed config's own node at `key` (interpolations unresolved), or None.
        Memoized: the rules and verl's evaluated code ask for the same keys hundreds of
        times a launch, and the composed tree is never changed once the view is built."""
        try:
            return self._raw[key]
        except KeyError:
            from ..hydra_stage.check import lookup

            node = self._raw[key] = lookup(self.tree, key)[1]
            return node

    def interpolated(self, key: str) -> bool:
        node = self.raw(key)
        return isinstance(node, str) and "${" in node

    def default(self, key: str, depth: int = 0):
        node = self.raw(key)
        if isinstance(node, str) and depth < 8:
            m = _SELECT.match(node)
            if m:
                found = self.value(m.group(1), depth + 1)
                return found if found is not None else _literal(m.group(2))
            m = _PLAIN.match(node)
            if m:
                return self.value(m.group(1), depth + 1)
        return node

    def source_key(self, key: str, depth: int = 0) -> str:
        """The key that gives `key` its value: itself when the launch sets it or its default is
        not an interpolation, else (followed) the key its `${path}` / `${oc.select:path,...}`
        default names, when that one is set or inherits further."""
        if self.setting(key) is not None or depth >= 8:
            return key
        node = self.raw(key)
        if isinstance(node, str):
            m = _SELECT.match(node) or _PLAIN.match(node)
            if m:
                found = self.source_key(m.group(1), depth + 1)
                if self.setting(found) is not None or self.raw(found) is not None:
                    return found
        return key

    def shown(self, key: str) -> str | None:
        """The value as text, unknown parts shown as `${NAME}` (for pattern tests)."""
        s = self.setting(key)
        if s is not None:
            return s.display if isinstance(s.value, Unknown) else str(s.value)
        v = self.default(key)
        return None if v is None else str(v)

    def int_value(self, key: str):
        v = self.value(key)
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return v
        if isinstance(v, str) and re.fullmatch(r"-?\d+", v):
            return int(v)
        return None

    @property
    def engine(self) -> str | None:
        """The `model_engine` group's option (verl 0.8 on: dp, megatron, ...); None before it existed."""
        v = self.value("model_engine")
        return v if isinstance(v, str) else None

    @property
    def training_engine(self) -> str | None:
        """The engine the actor trains with, in any version: the `model_engine` option where the
        tree has that group (verl 0.8 on), else (v0.4, v0.7) the actor's strategy (fsdp and fsdp2
        are `dp`). For the layout rules; a rule whose check exists only in the new engine workers
        keeps to `engine`."""
        v = self.engine
        if v is not None:
            return v
        if self.raw("model_engine") is None and self.setting("model_engine") is None:
            strategy = self.value("actor_rollout_ref.actor.strategy")
            if strategy == "megatron":
                return "megatron"
            if strategy in ("fsdp", "fsdp2"):
                return "dp"
        return None

    def where(self, key: str):
        """Location to report a problem with `key`: its override (a config group's: its selection,
        `model_engine=megatron`), else the launch."""
        s = self.setting(key)
        if s is not None:
            return s.loc
        return self.selections.get(key) or self.spec.loc


# the plain scalars YAML 1.1 (PyYAML's safe loader) reads as null and as booleans
_NULLS = ("", "~", "null", "Null", "NULL")
_BOOLS = {
    w: v
    for v, words in ((True, "yes Yes YES true True TRUE on On ON"), (False, "no No NO false False FALSE off Off OFF"))
    for w in words.split()
}
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _literal(text: str):
    """A default's text typed as `yaml.safe_load` types it: the common cases (null, a boolean,
    a decimal integer, a word, an interpolation) read here without importing PyYAML, the rest
    by it."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    digits = text[1:] if text[:1] in ("-", "+") else text
    if digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0"):
        return int(text)
    if text.isascii() and text[0].isalpha() and _WORD.issuperset(text):
        return text
    if text.startswith("${") and text.endswith("}") and text.isprintable() and not any(c.isspace() for c in text):
        return text  # an interpolation (`${oc.select:a.b,null}`): one plain scalar, as it is
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


class ScriptContext:
    """What script-level rules see: the parsed files and the launch sites reached."""

    def __init__(
        self, script, parsed: dict, launches: list, read_text=None, switches=None, always_set=frozenset(), documented=None
    ):
        self.main_script = script
        self._parsed = parsed
        self._launches = launches
        self.switches = switches  # shell.profiles.Scan of the script: what it assigns, reads, tests
        self.always_set = always_set  # what bash is sure to have (HOME, ..., Slurm's in a batch script)
        # variables the script's repository gives a value (its docs, a wrapper, CI): a function
        # giving name -> where, asked only where a launch reads a variable the script never sets
        self._documented = documented
        self._documented_found = None
        self.read_text = read_text or _read_text  # path -> text or None; the pipeline records what is read

    @property
    def documented(self) -> dict:
        """name -> where the repository gives it a value (repository.Repository.documented_inputs)."""
        if self._documented_found is None:
            found = self._documented() if callable(self._documented) else self._documented
            self._documented_found = dict(found or {})
        return self._documented_found

    def scripts(self):
        return [self.main_script, *self._parsed.values()]

    def launch_sites(self):
        seen, out = set(), []
        for la in self._launches:
            key = (la.loc.path, la.loc.line, la.loc.col)
            if key not in seen:
                seen.add(key)
                out.append(la)
        return out


def build_view(spec, config_name: str | None, profile, cache, checkable: bool = True):
    """The launch's settings over verl's composed defaults, for the policy rules; None when the
    launch does not compose or its root config is not here (the Hydra stage reports why)."""
    from ..hydra_stage.check import is_group_selection
    from ..hydra_stage.grammar import grammar_text

    if config_name is None or not checkable or (spec.config_name is None and spec.config_name_loc is not None):
        return None
    items = [(o, grammar_text(o.field)) for o in spec.overrides if grammar_text(o.field) is not None]
    records = cache.parse([t for _, t in items])
    groups = set(cache.groups or ())
    group_lines, settings, selections = [], [], {}
    for (o, text), rec in zip(items, records, strict=True):
        if not rec["ok"] or rec["sweep"]:
            return None
        if is_group_selection(rec, groups):
            if not o.known:
                return None  # the option is known only at run time: so is the composition
            group_lines.append(text)
            selections[rec["key"]] = o.loc
            continue
        display = o.display.split("=", 1)[-1]
        value = rec["value"] if o.known else Unknown(display, "a value known only at run time")
        settings.append(Setting(rec["key"], value, o.loc, rec["kind"], o.display, display))
    snap = cache.snapshot(config_name, tuple(group_lines))
    if "tree" not in snap:
        return None
    view = LaunchView(spec, config_name, profile, settings, snap["tree"], selections)
    view.source = cache.source
    return view


def _read_text(path: str) -> str | None:
    from ..core.bounded_read import read_bounded

    data = read_bounded(path)
    return data.decode("utf-8", "replace") if data is not None else None

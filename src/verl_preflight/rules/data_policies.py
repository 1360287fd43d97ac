"""Data policies: rules whose whole content is data (keys, values, a condition, a message).

Three kinds, each one small check over a LaunchView:
- `required-value`: each listed key must have the listed value;
- `allowed-only-when`: the listed keys may be set only in the named profile;
- `requires`: when one key has a value, another key must have its value.

Shipped rules subclass a kind and give `spec` in code; a schema entry with
`kind:` makes a user's own policy of the same classes. `when` takes `engine`,
`profile` (variable -> value), `target` (`device: gpu|npu`, `mindspeed-bridge:
true|false`: the launch's target, docs/checks.md "The target") and `key-matches` (key ->
regex on its value). A verdict that turns on a part of the target nothing in the
script decides (an unknown device, MindSpeed-Bridge left to the default) is a
warning that says so, never an error.
"""

from __future__ import annotations

import re

from ..core.edits import Fix
from . import Rule
from .view import is_unknown

KIND_NAMES = ("required-value", "allowed-only-when", "requires")


class DataPolicy(Rule):
    stage = "policy"
    scope = "launch"
    kind = ""
    spec: dict = {}

    def __init__(self, severity=None, params=None, spec: dict | None = None, rule_id: str | None = None):
        super().__init__(severity, params)
        if spec is not None:
            self.spec = spec
        if rule_id is not None:
            self.id = rule_id

    def applies(self, view) -> bool:
        when = self.spec.get("when", {}) or {}
        if "engine" in when and view.engine != when["engine"]:
            return False
        for var, want in (when.get("profile") or {}).items():
            if view.profile(var) != str(want):
                return False
        for part, want in (when.get("target") or {}).items():
            if target_part(view.target, part) != want:
                return False
        for key, pattern in (when.get("key-matches") or {}).items():
            shown = view.shown(key)
            if shown is None or not re.search(pattern, shown):
                return False
        return True

    def softened(self, view) -> str | None:
        """Why this finding is no error here (it is then at most a warning, and says why): by
        default, a part of the target that `when` reads and nothing decided."""
        for part in (self.spec.get("when", {}) or {}).get("target") or {}:
            why = undecided(view.target, part)
            if why:
                return why
        return None

    def report(self, view, loc, key: str, value, fix=None, about: str | None = None):
        """The finding about `key` (its message shows `value`), keyed by `about` (default `key`);
        at most a warning, saying why, when the verdict is not sure."""
        message = self.message(key, value, view)
        why = self.softened(view)
        if why:
            return self.finding(loc, f"{message} ({why})", about or key, None, at_most="warning")
        return self.finding(loc, message, about or key, fix)

    def message(self, key: str, value, view=None) -> str:
        template = self.spec.get("message") or "{key}={value} breaks policy " + self.id
        return template.replace("{key}", key).replace("{value}", show(value))


TARGET_PARTS = ("device", "mindspeed-bridge")


def target_part(target, part: str):
    """A part of the launch's target, as `when: target:` names it."""
    if target is None:
        return None
    if part == "device":
        return target.device.kind
    if part == "mindspeed-bridge":
        return target.stack.mindspeed_bridge
    raise KeyError(part)


def undecided(target, part: str) -> str | None:
    """Why a part of the target is not decided by anything the script or the run says; None when it is."""
    if target is None:
        return "the target is not known"
    if part == "device" and not target.device.known:
        return "the device is not known: trainer.device or --device names it"
    if part == "mindspeed-bridge" and target.on_npu and target.stack.bridge_origin == "default":
        return "is MindSpeed-Bridge on? USE_MINDSPEED_BRIDGE or --stack mindspeed-bridge says"
    return None


def show(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return "null" if value is None else str(value)


def same(actual, wanted) -> bool:
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and actual == wanted
    return actual == wanted or str(actual) == str(wanted)


class RequiredValue(DataPolicy):
    kind = "required-value"

    def check_launch(self, view, ctx):
        if not self.applies(view):
            return []
        out = []
        for key, wanted in self.spec["keys"].items():
            setting = view.setting(key)
            value = view.value(key)
            if is_unknown(value) or value is None and setting is None:
                continue
            if setting is None and view.default(key) is not None and view.interpolated(key):
                continue  # follows another key, which is checked in its own right
            if not same(value, wanted):
                fix = Fix.set_value(setting.text, show(wanted)) if self.fixable and setting is not None else None
                out.append(self.report(view, view.where(key), key, value, fix))
        return out


class AllowedOnlyWhen(DataPolicy):
    kind = "allowed-only-when"

    def check_launch(self, view, ctx):
        if self.applies(view):
            return []
        out = []
        for key in self.spec["keys"]:
            setting = view.setting(key)
            if setting is not None:
                out.append(self.report(view, setting.loc, key, setting.shown_value))
        return out


class Requires(DataPolicy):
    kind = "requires"

    def check_launch(self, view, ctx):
        if not self.applies(view):
            return []
        cond, need = self.spec["if"], self.spec["then"]
        value = view.value(cond["key"])
        if is_unknown(value) or ("value" in cond and not same(value, cond["value"])) or value is None:
            return []
        got = view.value(need["key"])
        if is_unknown(got):
            return []
        if "value" in need and same(got, need["value"]):
            return []
        if "value" not in need and got is not None:
            return []
        return [self.report(view, view.where(cond["key"]), need["key"], got, about=cond["key"])]


KINDS = {cls.kind: cls for cls in (RequiredValue, AllowedOnlyWhen, Requires)}

"""The config folders a launch's Hydra will search: the *config* part of its target.

Hydra reads the root config from the entry point's own `@hydra.main(config_path=...)`
folder (relative to the entry module's file), or from `--config-path` (absolute, or
relative to that file as well), and adds `--config-dir` and the entries of
`hydra.searchpath` (hydra-core 1.3 hydra/_internal/utils.py:321-322 and
config_loader_impl.py:152-215).
"""

from __future__ import annotations

from dataclasses import dataclass

OWN_CONFIG_PATHS = (None, "config", "./config", "config/")


@dataclass(frozen=True)
class ConfigSearch:
    """Where Hydra reads the launch's root config and groups from, and whether that is here."""

    primary: str | None  # the folder of the root config; None: not known here
    how: str  # how it was decided, said to the user
    checkable: bool  # the tool composes this launch (the folders are here and it can read them)

    @staticmethod
    def of(spec, source) -> ConfigSearch:
        if source is None:
            return ConfigSearch(None, "no verl config tree", False)
        if spec.config_path in OWN_CONFIG_PATHS:
            return ConfigSearch(source.path, "verl's own config folder", True)
        return ConfigSearch(None, f"--config-path={spec.config_path}", False)

    def describe(self) -> str:
        """Empty when it is verl's own folder (the usual case needs no word)."""
        if self.checkable and self.how == "verl's own config folder":
            return ""
        return f"config: {self.primary or 'not here'} ({self.how})"

    def as_json(self) -> dict:
        return {"primary": self.primary, "how": self.how, "checkable": self.checkable}

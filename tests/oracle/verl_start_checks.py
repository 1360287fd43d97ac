"""Run the start-up config checks of a real verl release on one launch (the verl-check oracle).

Usage: python verl_start_checks.py  < request.json  > answers.json

request: {"verl": DIR holding the release's `verl` package, "config_dir": its trainer/config,
          "launches": [{"config_name": "ppo_trainer", "overrides": [...]}, ...]}
answers: one per launch: {"composed": bool, "raised": bool, "type": ..., "message": ...,
          "path": "utils/config.py", "line": N}

The release (a wheel that setup downloaded, or the installed one) is imported with its heavy
dependencies absent: every module that is not installed here (torch, ray, numpy, vllm, ...) is
replaced by an inert stand-in, so verl's modules import and its pure-config checks run as they
do at start. The composed config is the real Hydra composition of the overrides. Then, as the
release's entry point does: `validate_config(config, need_reference_policy(...),
need_critic(config))` where the release has it (verl >= 0.6; need_reference_policy over the
config, or over the role mapping the task runner's own methods build), else the RayPPOTrainer
constructor's own part (its use_critic decision) and `_validate_config`.

Run only in a subprocess of the tests: the stand-ins stay in this process.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import traceback
import types


class _StubMeta(type):
    """A stand-in that is at once a class (it can be subclassed and annotated with), a callable,
    a decorator, a module attribute and a container."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub(f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs and not isinstance(args[0], _StubMeta):
            return args[0]  # used as a decorator
        return _stub(cls.__name__ + "()")

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return False

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __mro_entries__(cls, bases):
        return (object,)


def _stub(name: str):
    return _StubMeta(name, (), {})


class _StubModule(types.ModuleType):
    __version__ = "2.9.0"  # what verl compares a dependency's version with at import (torch)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub(f"{self.__name__}.{name}")


# installed here, but stood in for: built on torch, or (ray: installed for the cluster preflight's
# tests) a runtime verl's config checks do not use, whose own import needs what is stood in for
TORCH_BUILT = frozenset({"megatron", "transformer_engine", "apex", "mbridge", "ray"})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: any module nothing else finds (and that is not verl's) is a stand-in;
    first: the packages installed here that are built on torch (a stand-in here)."""

    def __init__(self, only: frozenset | None = None):
        self.only = only

    def find_spec(self, fullname, path, target=None):
        top = fullname.split(".")[0]
        if top == "verl" or (self.only is not None and top not in self.only):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        return None


def _verl_package(verl_dir: str) -> None:
    """`verl` as a package whose own __init__ is not run: it sets up logging, plugins and device
    probes (and in old releases, pkg_resources version checks), none of them a config check."""
    package = types.ModuleType("verl")
    package.__path__ = [os.path.join(verl_dir, "verl")]
    try:
        with open(os.path.join(verl_dir, "verl", "version", "version"), encoding="utf-8") as fh:
            package.__version__ = fh.read().strip()
    except OSError:
        package.__version__ = "0"
    sys.modules["verl"] = package
    try:  # what verl/__init__.py exports besides its version
        from verl.protocol import DataProto

        package.DataProto = DataProto
    except Exception:  # noqa: BLE001 (a release whose protocol module needs more than stand-ins)
        package.DataProto = _stub("DataProto")


def _cause(err: BaseException) -> BaseException:
    """The exception verl raised: Hydra's instantiate wraps what a dataclass's __post_init__ raises
    (InstantiationException, `raise ... from e`)."""
    while type(err).__name__ == "InstantiationException" and (err.__cause__ or err.__context__) is not None:
        err = err.__cause__ or err.__context__
    return err


def _where(tb, verl_dir: str):
    """(path relative to the verl package, line) of the innermost frame inside verl."""
    root = os.path.join(os.path.realpath(verl_dir), "verl") + os.sep
    found = (None, None)
    for frame in traceback.extract_tb(tb):
        path = os.path.realpath(frame.filename)
        if path.startswith(root):
            found = (os.path.relpath(path, root), frame.lineno)
    return found


def main() -> int:
    request = json.load(sys.stdin)
    answer_to, sys.stdout = sys.stdout, sys.stderr  # what verl prints goes to standard error
    verl_dir = request["verl"]
    sys.path.insert(0, verl_dir)
    os.environ.setdefault("VERL_USE_EXTERNAL_PLUGINS", "none")
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import open_dict  # noqa: F401 (the checks use omegaconf; import it for real first)

    answers = []
    configs = []
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=request["config_dir"], version_base=None):
        for launch in request["launches"]:
            try:
                configs.append(compose(config_name=launch["config_name"], overrides=launch["overrides"]))
            except Exception as err:  # noqa: BLE001 (Hydra refuses the launch: verl never starts)
                configs.append(f"{type(err).__name__}: {err}")
    sys.meta_path.append(_StubFinder())
    sys.meta_path.insert(0, _StubFinder(TORCH_BUILT))
    _verl_package(verl_dir)
    for config in configs:
        if isinstance(config, str):
            answers.append({"composed": False, "raised": False, "compose_error": config[:500]})
            continue
        answer = {"composed": True, "raised": False}
        try:
            _run_checks(config)
        except Exception as raised:  # noqa: BLE001 (the point: what verl raises)
            err = _cause(raised)
            path, line = _where(err.__traceback__, verl_dir)
            answer.update(raised=True, type=type(err).__name__, message=str(err)[:2000], path=path, line=line)
        answers.append(answer)
    json.dump(answers, answer_to)
    return 0


def _without_model_loading() -> None:
    """HFModelConfig.__post_init__ loads the model's config and tokenizer from its path (files or a
    hub that are not here). That is model loading, not a config check, and outside what verl-check
    evaluates: here it does nothing."""
    try:
        from verl.workers.config.model import HFModelConfig
    except ImportError:
        return
    HFModelConfig.__post_init__ = lambda self: None


def _run_checks(config) -> None:
    _without_model_loading()
    try:
        from verl.utils.config import validate_config
    except ImportError:
        validate_config = None
    if validate_config is not None:
        import inspect

        from verl.trainer.ppo.utils import need_critic, need_reference_policy

        if list(inspect.signature(need_reference_policy).parameters)[:1] == ["role_worker_mapping"]:
            # verl 0.6, 0.7: over the role mapping the task runner has built by then (main_ppo.py)
            from verl.trainer.main_ppo import TaskRunner

            for workers in ("fsdp_workers", "megatron_workers", "engine_workers"):
                # the worker classes are named, not built, by the runner: their modules (torch,
                # FSDP, Megatron at import) are stand-ins here
                sys.modules.setdefault(f"verl.workers.{workers}", _StubModule(f"verl.workers.{workers}"))
            runner = TaskRunner()
            actor_rollout_cls, _ = runner.add_actor_rollout_worker(config)
            runner.add_critic_worker(config)
            runner.add_reward_model_worker(config)
            runner.add_ref_policy_worker(config, actor_rollout_cls)
            use_reference_policy = need_reference_policy(runner.role_worker_mapping)
        else:
            use_reference_policy = need_reference_policy(config)
        validate_config(config, use_reference_policy=use_reference_policy, use_critic=need_critic(config))
        return
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer, Role

    # the role mapping as main_ppo of these releases builds it: a reference policy when KL is in
    # the reward or the loss (trainer/main_ppo.py); the constructor decides use_critic itself and
    # calls _validate_config; what it does after that (data loaders) is not a config check
    mapping = {Role.ActorRollout: object, Role.Critic: object}
    if config.algorithm.get("use_kl_in_reward", False) or config.actor_rollout_ref.actor.get("use_kl_loss", False):
        mapping[Role.RefPolicy] = object
    RayPPOTrainer._create_dataloader = lambda self, *args, **kwargs: None
    RayPPOTrainer(config=config, tokenizer=None, role_worker_mapping=mapping, resource_pool_manager=None)


if __name__ == "__main__":
    sys.exit(main())

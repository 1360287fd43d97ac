"""Evaluate verl's own Python over a launch's config: read with `ast`, never imported or run.

verl decides at start what a launch may be in a small part of Python: its config
checks (`validate_config`, `RayPPOTrainer._validate_config`, the config
dataclasses' `__post_init__`), the worker constructors that normalize batch sizes,
the code that builds vLLM's engine arguments. `Evaluator` runs such code over the
launch's effective config (`rules.view.LaunchView`), one semantics for all of it:

- The subset: assignments, `if`, `for` over a known list, `with`, `assert`,
  `raise`, `return`, `try` without handlers, nested `def`, arithmetic,
  comparisons, f-strings, the builtins of `_BUILTINS`, methods of plain values,
  `.get` on the config, and the code the caller lets it follow (below).
- Unknowns: a value the launch does not fix (a call outside what is followed, a
  name bound by a statement not followed) is UNKNOWN. A test on it takes neither
  branch and what either branch assigns becomes unknown (havoc), as does what any
  statement outside the subset assigns; an assert on it passes; arithmetic on it is
  unknown. An unknown never turns into a failure.
- Failures (`Failure`): an assert that is false, a `raise` reached, Python's own
  TypeError or ZeroDivisionError on known values, with verl's message where it is
  known. By default the first one ends the run, as it ends verl's; with `go_on` the
  run reports every failure as a linter does: a `raise` ends the `if` block or the
  function it is in, an assert is passed over, and the config keys the failure read
  are poisoned (unknown from then on: their mistake is reported once).
- Taint: every value carries the config keys it was computed from (those read while
  computing it, and those of the `if` tests it is assigned under), so a failure or
  a value can be reported at the override that decides it (`V`: a value and its keys).
- The config: a `Node` is a section of the launch's config; the code's writes go to
  an overlay (each one recorded in `assigned`), never to the launch.
- Budget: counted statements (`max_steps`) and nested calls (`max_depth`), never the
  clock.

What the caller decides (the options):
- `calls`: dotted call names whose value it gives (`torch.distributed.get_world_size`),
  a value or a function of (evaluator, arguments as V, keyword arguments as V);
- `sources`: where a free name is looked up and classes are read: verl's registry
  (`verl_classes.Registry`: functions, classes, constants, `super()`,
  `omega_conf_to_dataclass` building the dataclass and running its `__post_init__`),
  or `Functions` (a few function definitions by name); none: a free name is unknown;
- per object (`Obj`): its attributes, which keep the caller's value (`pinned`), which
  methods are followed (`methods`, or its verl class and `follow`);
- `go_on`, `capture` (call or dict nodes whose arguments to record), the budget.
"""

from .evaluator import Evaluator
from .model import _TAINT, MISSING, UNKNOWN, Assigned, EmptyView, Failure, Functions, Members, Node, Obj, V

__all__ = [
    "Evaluator", "_TAINT", "MISSING", "UNKNOWN", "Assigned", "EmptyView", "Failure", "Functions", "Members", "Node", "Obj", "V",
]

"""gcc-style text: `path:line:col: severity: message [RULE] (profiles: ...)`, then a summary."""

from __future__ import annotations


def profile_text(profiles) -> str:
    """` (profiles: DEVICE=gpu; DEVICE=npu)`; empty for a script-wide finding or the one default profile."""
    shown = [p.describe() for p in profiles]
    if not shown or shown == ["default"]:
        return ""
    return " (profiles: " + "; ".join(shown) + ")"


COLORS = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;36m"}
RESET = "\033[0m"


def finding_line(f, color: bool = False) -> str:
    where = f"{f.path}:{f.line}:{f.column}" if f.line else f.path
    severity = f"{COLORS[f.severity]}{f.severity}{RESET}" if color and f.severity in COLORS else f.severity
    return f"{where}: {severity}: {f.message} [{f.rule}]{profile_text(f.profiles)}"


def summary(results, findings, seconds: float) -> str:
    n_profiles = sum(len(r.profiles) for r in results)
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = sum(1 for f in findings if f.severity == "warning")
    return (
        f"{len(results)} script{'s' if len(results) != 1 else ''}, {n_profiles} profile"
        f"{'s' if n_profiles != 1 else ''}: {errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''} ({seconds:.2f}s)"
    )


def render(results, findings, seconds: float, quiet: bool = False, color: bool = False) -> str:
    lines = [finding_line(f, color) for f in findings if not (quiet and f.severity == "info")]
    if not quiet:
        lines.append(summary(results, findings, seconds))
    return "\n".join(lines) + ("\n" if lines else "")

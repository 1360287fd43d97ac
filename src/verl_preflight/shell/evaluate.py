"""The abstract bash interpreter: one state per profile, forks on the unknown.

It walks the tree-sitter syntax tree the way bash would run the script, but
never executes anything: external commands have an unknown exit status,
command substitution yields an unknown value, `eval` is not followed, and
`source` only reads a file that exists. Conditions on unknown values fork the
state; each end state records its assumptions, its launches and its notes.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..source import reader
from ..values import OTHER, Assumption, Profile
from . import conditions as cond
from .errors import ArithFailure, ShellExit
from .expand import WordExpander, arith_operands, word_groups
from .nodes import static_text, variable_of
from .notes import Note, NoteKind
from .parse import Script, parse_script
from .profiles import other_exclusions, scan
from .state import Budget, State, Var, elements_of, scalar_of
from .words import Field, Loc, Unknown, join_field, join_pieces, split_fields

ALWAYS_SET = frozenset(
    {
        "HOME",
        "PATH",
        "PWD",
        "USER",
        "SHELL",
        "HOSTNAME",
        "LANG",
        "TERM",
        "LOGNAME",
        "SHLVL",
        "OLDPWD",
        "UID",
        "EUID",
        "BASH",
        "BASH_VERSION",
        "HOSTTYPE",
        "OSTYPE",
        "MACHTYPE",
        "IFS",
        "PPID",
        "RANDOM",
        "SECONDS",
    }
)
NO_EFFECT = frozenset(
    {
        "echo",
        "printf",
        "true",
        ":",
        "cd",
        "pushd",
        "popd",
        "shopt",
        "trap",
        "ulimit",
        "umask",
        "wait",
        "hash",
        "alias",
        "unalias",
        "sleep",
        "set -x",
        "history",
        "type",
        "dirs",
        "disown",
        "enable",
        "help",
        "logger",
    }
)


@dataclass
class Outcome:
    """One end state: the profile env, forks' assumptions, status, launches, notes."""

    env: dict
    assumptions: tuple
    status: str
    exit_code: int | None
    launches: list
    notes: list = field(default_factory=list)

    @property
    def profile(self) -> Profile:
        return Profile.of(self.env, self.assumptions)


class Context:
    """What one evaluation of a script knows about its environment."""

    def __init__(self, script_name: str, unset_inputs, ambient: dict | None, budget: Budget, on_command, read_file):
        self.script_name = script_name
        self.unset_inputs = set(unset_inputs)
        self.ambient = ambient
        self.budget = budget
        self.steps = 0
        self.on_command = on_command  # (argv, loc, last_word) -> a launch record, or None
        self.always_set = ALWAYS_SET
        self.read_file = read_file  # path -> bytes | None (the pipeline's one reader)
        self.parsed: dict[str, Script] = {}
        self.main_path: str | None = None  # the file of the script evaluated (not a sourced one)
        self.running: list[str] = []  # scripts that started the one evaluated now (bash FILE)
        self.wrapped_runs = 0

    def missing(self, name: str) -> Field | None:
        """The value of a variable nobody set: unset (None) or unknown from the environment."""
        if self.ambient is not None or name in self.unset_inputs:
            return None
        if not (name[:1].isalpha() or name[:1] == "_"):
            return None
        return Field((Unknown("${" + name + "}", f"environment variable {name}"),))

    @contextmanager
    def program(self, path: str):
        """While a script started as a program (`bash FILE`) runs: $0 and the main file are its."""
        saved = self.script_name, self.main_path
        self.running.append(os.path.abspath(saved[1] or ""))
        self.script_name, self.main_path = path, path
        try:
            yield
        finally:
            self.script_name, self.main_path = saved
            self.running.pop()


class Interpreter(WordExpander):
    def __init__(self, script: Script, ctx: Context):
        self.script = script
        self.ctx = ctx
        self._prefix_vars: dict = {}  # `NAME=value` before a script started as a program

    @contextmanager
    def reading(self, script: Script):
        """The current file while a function body, a sourced file, `eval` text or an
        arithmetic snippet runs: locations and node texts are read from it."""
        saved = self.script
        self.script = script
        try:
            yield script
        finally:
            self.script = saved

    # ---- notes --------------------------------------------------------
    def note(self, st: State, loc, kind: NoteKind, message: str, key=None) -> None:
        st.notes.append(Note(kind, loc, message, key))

    def note_once(self, st: State, loc, kind: NoteKind, message, key=None) -> None:
        for n in st.notes:
            if n.kind == kind and n.key == key:
                return
        self.note(st, loc, kind, message, key)

    def give_up(self, st: State, node, why: str, kind: NoteKind = NoteKind.BUDGET) -> State:
        """An evaluation budget ran out: the path ends, incomplete."""
        st.incomplete = True
        st.flow = "exit"
        st.flow_arg = None
        self.note(st, self.script.loc(node), kind, f"cannot follow the script here: {why}")
        return st

    # ---- running ------------------------------------------------------
    def run(self, env: dict) -> list[State]:
        st = State(vars={}, funcs={})
        for name, value in (self.ctx.ambient or {}).items():
            st.vars[name] = Var(Field.of(value), exported=True)
        for name, value in env.items():
            if value is not None and value is not OTHER:
                st.vars[name] = Var(Field.of(value), exported=True)
        if any(v is OTHER for v in env.values()):
            # a switch set to "none of the literals": unknown text, known not to be them
            info = scan(self.script, read_file=self.ctx.read_file)
            for name, value in env.items():
                if value is OTHER:
                    names, literals = other_exclusions(info, name)
                    unknown = Unknown("${" + name + "}", f"environment variable {name}")
                    st.vars[name] = Var(Field((unknown,)), exported=True)
                    st.excluded = {**st.excluded, **{n: literals for n in names}}
        st.vars["BASH_SOURCE"] = Var((Field.of(self.ctx.script_name),))
        return self.exec_block(self.script.root, [st], 0)

    def statements(self, node):
        return [c for c in node.named_children if c.type not in ("comment", "heredoc_body")]

    def exec_block(self, node, states: list[State], depth: int) -> list[State]:
        return self.exec_seq(self.statements(node), states, depth)

    def exec_seq(self, nodes, states: list[State], depth: int) -> list[State]:
        for node in nodes:
            nxt: list[State] = []
            for st in states:
                if st.flow:
                    nxt.append(st)
                else:
                    nxt.extend(self.exec(node, st, depth))
            states = self._cap(nxt, node)
        return states

    def _cap(self, states: list[State], node) -> list[State]:
        limit = self.ctx.budget.states
        if len(states) <= limit:
            return states
        kept = states[:limit]
        for st in kept:
            if not st.incomplete:
                self.note_once(
                    st,
                    self.script.loc(node),
                    NoteKind.BUDGET,
                    f"more than {limit} paths through the script; the rest were not followed",
                )
                st.incomplete = True
        return kept

    def exec(self, node, st: State, depth: int, in_cond: bool = False) -> list[State]:
        self.ctx.steps += 1
        if self.ctx.steps > self.ctx.budget.steps:
            return [self.give_up(st, node, f"evaluation budget of {self.ctx.budget.steps} steps used up")]
        if depth > self.ctx.budget.nesting:
            return [self.give_up(st, node, "nesting too deep")]
        t = node.type
        try:
            handler = getattr(self, "x_" + t, None)
            if handler is None:
                return [st]
            results = handler(node, st, depth + 1, in_cond)
        except ShellExit as stop:
            if stop.note is not None:
                st.notes.append(stop.note)
            st.flow, st.flow_arg, st.status = "exit", stop.code, stop.code
            return [st]
        except RecursionError:
            return [self.give_up(st, node, "nesting too deep")]
        if not in_cond:
            for r in results:
                if r.errexit and not r.flow and r.status not in (0, None) and t in _ERREXIT_TYPES:
                    r.flow, r.flow_arg = "exit", r.status
        return results

    # ---- statements ---------------------------------------------------
    def x_program(self, node, st, depth, in_cond):
        return self.exec_block(node, [st], depth)

    def x_ERROR(self, node, st, depth, in_cond):
        return [st]

    def x_comment(self, node, st, depth, in_cond):
        return [st]

    def x_compound_statement(self, node, st, depth, in_cond):
        if node.children and node.children[0].type == "((":
            value, ok = self.arith_command(arith_operands(node), st, self.script.loc(node))
            if ok:
                st.status = None if value is None else int(value == 0)
            return [st]
        return self.exec_block(node, [st], depth)

    def x_do_group(self, node, st, depth, in_cond):
        return self.exec_block(node, [st], depth)

    def x_redirected_statement(self, node, st, depth, in_cond):
        body = node.child_by_field_name("body")
        if body is None:
            return [st]
        return self.exec(body, st, depth, in_cond)

    def x_subshell(self, node, st, depth, in_cond):
        return self._in_subshell(lambda s: self.exec_block(node, [s], depth), st)

    def _in_subshell(self, run, st: State) -> list[State]:
        inner = st.fork()
        inner.locals_stack = []
        results = []
        for end in run(inner):
            outer = st.fork()
            outer.launches = end.launches
            outer.notes = end.notes
            outer.incomplete = end.incomplete
            outer.assumptions = end.assumptions
            if end.flow == "exit":
                outer.status = end.flow_arg if end.flow_arg is not None else 1
            else:
                outer.status = end.status
            results.append(outer)
        return results

    def x_pipeline(self, node, st, depth, in_cond):
        parts = [c for c in node.named_children if c.type != "comment"]
        states = [st]
        for part in parts:
            nxt = []
            for s in states:
                nxt.extend(self._in_subshell(lambda inner, p=part: self.exec(p, inner, depth, True), s))
            states = nxt
        return states

    def x_negated_command(self, node, st, depth, in_cond):
        inner = [c for c in node.named_children if c.type != "comment"]
        if not inner:
            return [st]
        out = []
        for s in self.exec(inner[0], st, depth, True):
            if not s.flow:
                s.status = None if s.status is None else int(s.status == 0)
            out.append(s)
        return out

    def x_list(self, node, st, depth, in_cond):
        children = node.children
        left = children[0]
        op = children[1].type if len(children) > 2 else "&&"
        right = children[-1]
        out = []
        for s, ok in self.condition(left, st, depth):
            if s.flow:
                out.append(s)
                continue
            if (op == "&&") == ok:
                out.extend(self.exec(right, s, depth, in_cond))
            else:
                s.status = 0 if ok else (s.status if s.status else 1)
                out.append(s)
        return out

    def condition(self, node, st: State, depth: int) -> list[tuple[State, bool]]:
        """Run `node` as a condition; fork when its exit status is unknown."""
        out = []
        for s in self.exec(node, st, depth, True):
            if s.flow:
                out.append((s, False))
            elif s.status is None:
                yes, no = s.fork(), s
                yes.status, no.status = 0, 1
                refined = self._equality_test(node)
                if refined is not None and refined[1] in s.excluded.get(refined[0], ()):
                    # `[ "$X" = lit ]` where X is known not to be lit on this path
                    s.status = 0 if not refined[2] else 1
                    out.append((s, s.status == 0))
                    continue
                if refined is not None:
                    # `[ "$X" = lit ]` on an unknown X: X is lit on one side, not lit on the other
                    var, literal, positive = refined
                    same, other = (yes, no) if positive else (no, yes)
                    self.assign_scalar(same, var, Field.of(literal), None)
                    self._assume_once(same, Assumption(var, "=", (literal,)))
                    other.excluded = {**other.excluded, var: other.excluded.get(var, frozenset()) | {literal}}
                    self._assume_once(other, Assumption(var, "other"))
                else:
                    label = self.condition_label(node)
                    yes.assume(Assumption(label, "true"))
                    no.assume(Assumption(label, "false"))
                out.append((yes, True))
                out.append((no, False))
            else:
                out.append((s, s.status == 0))
        return out

    def _equality_test(self, node):
        """(NAME, literal, positive) for `[ "$NAME" = lit ]`, `[[ $NAME == lit ]]`, `!=`."""
        if node.type != "test_command":
            return None
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1 or inner[0].type != "binary_expression":
            return None
        expr = inner[0]
        op = expr.child_by_field_name("operator")
        if op is None or self.script.text(op) not in ("=", "==", "!="):
            return None
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        for a, b in ((left, right), (right, left)):
            if a is None or b is None:
                continue
            var = variable_of(self.script, a, with_default=False)
            literal = static_text(self.script, b)
            if var and literal is not None:
                return var, literal, self.script.text(op) != "!="
        return None

    def condition_label(self, node) -> str:
        text = " ".join(self.script.text(node).split())
        return text if len(text) <= 60 else text[:57] + "..."

    def x_if_statement(self, node, st, depth, in_cond):
        cond_nodes = []
        body = []
        clauses = []
        for name, child in fields(node):
            if child.type in ("elif_clause", "else_clause"):
                clauses.append(child)
            elif name == "condition":
                cond_nodes.append(child)
            elif child.is_named and child.type != "comment":
                body.append(child)
        return self._if_chain(cond_nodes, body, clauses, st, depth)

    def _if_chain(self, cond_nodes, body, clauses, st, depth):
        out = []
        for s, ok in self._cond_seq(cond_nodes, st, depth):
            if s.flow:
                out.append(s)
            elif ok:
                out.extend(self.exec_seq(body, [s], depth))
            elif clauses:
                clause = clauses[0]
                if clause.type == "else_clause":
                    out.extend(self.exec_block(clause, [s], depth))
                else:
                    c_nodes, c_body = self._elif_parts(clause)
                    out.extend(self._if_chain(c_nodes, c_body, clauses[1:], s, depth))
            else:
                s.status = 0
                out.append(s)
        return out

    def _elif_parts(self, clause):
        c_nodes, c_body = [], []
        seen_then = False
        for child in clause.children:
            if child.type == "then":
                seen_then = True
                continue
            if not child.is_named or child.type == "comment":
                continue
            (c_body if seen_then else c_nodes).append(child)
        return c_nodes, c_body

    def _cond_seq(self, nodes, st, depth):
        """A condition made of several statements: the last one's status decides."""
        nodes = [n for n in nodes if n.is_named]
        if not nodes:
            return [(st, True)]
        states = self.exec_seq(nodes[:-1], [st], depth) if len(nodes) > 1 else [st]
        out = []
        for s in states:
            if s.flow:
                out.append((s, False))
            else:
                out.extend(self.condition(nodes[-1], s, depth))
        return out

    def x_while_statement(self, node, st, depth, in_cond):
        until = node.children and node.children[0].type == "until"
        cond_nodes = [c for name, c in fields(node) if name == "condition" and c.is_named]
        body = node.child_by_field_name("body")
        states = [st]
        done = []
        for iteration in range(self.ctx.budget.loop_iterations):
            nxt = []
            for s, ok in [pair for s0 in states for pair in self._cond_seq(cond_nodes, s0, depth)]:
                if s.flow:
                    done.append(s)
                    continue
                forked = (
                    len(s.assumptions) > 0 and s.assumptions[-1].subject == self.condition_label(cond_nodes[-1])
                    if cond_nodes
                    else False
                )
                if ok == until or (forked and iteration > 0):
                    # an unknown condition (a wait loop): after one pass, assume it ends
                    s.status = 0
                    done.append(s)
                    continue
                for r in self.exec(body, s, depth):
                    nxt.extend(self._loop_flow(r, done))
            states = self._cap(nxt, node)
            if not states:
                return done
        for s in states:
            done.append(self.give_up(s, node, "loop did not end within the iteration budget"))
        return done

    def _loop_flow(self, s: State, done: list) -> list[State]:
        if s.flow == "break":
            levels = (s.flow_arg or 1) - 1
            if levels > 0:
                s.flow_arg = levels
                done.append(s)
                return []
            s.flow, s.flow_arg, s.status = None, 0, 0
            done.append(s)
            return []
        if s.flow == "continue":
            levels = (s.flow_arg or 1) - 1
            if levels > 0:
                s.flow, s.flow_arg = "break", levels
                done.append(s)
                return []
            s.flow, s.flow_arg = None, 0
            return [s]
        if s.flow:
            done.append(s)
            return []
        return [s]

    def x_for_statement(self, node, st, depth, in_cond):
        var = node.child_by_field_name("variable")
        name = self.script.text(var)
        values = [c for name, c in fields(node) if name == "value"]
        body = node.child_by_field_name("body")
        has_in = any(c.type == "in" for c in node.children)
        items = self.expand_args(values, st) if has_in else list(st.positional)
        states = [st]
        done: list[State] = []
        for item in items[: self.ctx.budget.loop_iterations]:
            nxt = []
            for s in states:
                self.assign_scalar(s, name, item, item.loc)
                for r in self.exec(body, s, depth):
                    nxt.extend(self._loop_flow(r, done))
            states = self._cap(nxt, node)
        return done + states

    def x_c_style_for_statement(self, node, st, depth, in_cond):
        init = node.child_by_field_name("initializer")
        test = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        body = node.child_by_field_name("body")
        loc = self.script.loc(node)
        if init is not None and not self.arith_command([init], st, loc)[1]:
            return [st]
        states, done = [st], []
        label = f"(( {self.script.text(test)} ))" if test is not None else ""
        for iteration in range(self.ctx.budget.loop_iterations):
            nxt = []
            for s in states:
                ok, fine = self.arith_command([test], s, loc) if test is not None else (1, True)
                if not fine:
                    done.append(s)
                    continue
                if ok is None:
                    # an unknown bound (`i < NNODES`): the loop may not run at all, or run
                    # once; after one pass assume it ends (as for an unknown `while`)
                    if iteration > 0 or any(a.subject == label for a in s.assumptions):
                        done.append(s)
                        continue
                    skip = s.fork()
                    done.append(skip.assume(Assumption(label, "false")))
                    s.assume(Assumption(label, "true"))
                elif not ok:
                    done.append(s)
                    continue
                for r in self.exec(body, s, depth):
                    for c in self._loop_flow(r, done):
                        if update is not None and not self.arith_command([update], c, loc)[1]:
                            done.append(c)
                            continue
                        nxt.append(c)
            states = self._cap(nxt, node)
            if not states:
                return done
        return done + [self.give_up(s, node, "loop did not end within the iteration budget") for s in states]

    def arith_command(self, expr, st: State, loc) -> tuple[int | None, bool]:
        """Arithmetic in a command (`(( ))`, `let`, `for ((;;))`, `shift N`): (value, True);
        on a bash arithmetic error the command fails (status 1, a note): (None, False)."""
        try:
            return self.arithmetic(expr, st, loc), True
        except ArithFailure as err:
            self.note(st, loc, NoteKind.ARITHMETIC, f"arithmetic error: {err.error}")
            st.status = 1
            return None, False

    def x_function_definition(self, node, st, depth, in_cond):
        name = self.script.text(node.child_by_field_name("name"))
        st.funcs[name] = (self.script, node.child_by_field_name("body"))
        st.status = 0
        return [st]

    def x_case_statement(self, node, st, depth, in_cond):
        subject_node = node.child_by_field_name("value")
        subject = self.expand_one(subject_node, st)
        items = [c for c in node.named_children if c.type == "case_item"]
        var = variable_of(self.script, subject_node, with_default=False)
        label = var or self.condition_label(subject_node)
        return self._case_from(items, 0, subject, label, var, st, depth)

    def _case_from(self, items, start, subject: Field, label, var, st, depth):
        """Match arms in order. On an unknown subject each literal arm is a fork in
        which the variable takes that literal; the path on which no literal matched
        remembers the literals it excluded."""
        out = []
        for i in range(start, len(items)):
            item = items[i]
            patterns = [c for name, c in fields(item) if name == "value"]
            matched = False
            maybe = []
            for p in patterns:
                rx = self.expand_pattern(p, st)
                if subject.known and rx is not None:
                    if rx.fullmatch(subject.value):
                        matched = True
                        break
                    continue
                if rx is not None and rx.pattern == ".*":
                    matched = True
                    break
                literal = static_text(self.script, p)
                if literal is not None and literal in st.excluded.get(var, ()):
                    continue
                maybe.append((literal, self.script.text(p)))
            if matched:
                if not subject.known:
                    self._assume_once(st, Assumption(label, "other"))
                return out + self._case_body(items, i, subject, label, st, depth)
            for literal, text in maybe:
                taken = st.fork()
                if var and literal is not None:
                    self.assign_scalar(taken, var, Field.of(literal), None)
                self._assume_once(taken, Assumption(label, "=", (literal if literal is not None else text,)))
                out.extend(self._case_body(items, i, subject, label, taken, depth))
            if var and maybe:
                st.excluded = {
                    **st.excluded,
                    var: st.excluded.get(var, frozenset()) | {lit for lit, _ in maybe if lit is not None},
                }
        st.status = 0
        if not subject.known:
            self._assume_once(st, Assumption(label, "other"))
        out.append(st)
        return out

    @staticmethod
    def _assume_once(st: State, assumption: Assumption) -> None:
        if not any(a.subject == assumption.subject for a in st.assumptions):
            st.assume(assumption)

    def _case_body(self, items, i, subject, label, st, depth):
        item = items[i]
        body = [
            c
            for name, c in fields(item)
            if c.is_named and name not in ("value", "termination", "fallthrough") and c.type != "comment"
        ]
        term = item.child_by_field_name("termination") or item.child_by_field_name("fallthrough")
        term_text = self.script.text(term) if term is not None else ";;"
        states = self.exec_seq(body, [st], depth)
        if term_text == ";&" and i + 1 < len(items):
            return [
                r
                for s in states
                for r in (self._case_body(items, i + 1, subject, label, s, depth) if not s.flow else [s])
            ]
        if term_text == ";;&" and i + 1 < len(items):
            return [
                r
                for s in states
                for r in (self._case_from(items, i + 1, subject, label, None, s, depth) if not s.flow else [s])
            ]
        return states

    def x_test_command(self, node, st, depth, in_cond):
        try:
            verdict = self.test_node(node, st)
        except cond.TestError as err:
            self.note(st, self.script.loc(node), NoteKind.TEST_SYNTAX, f"bash test: {err}")
            st.status = 2
            return [st]
        st.status = None if verdict is None else (0 if verdict else 1)
        return [st]

    def test_node(self, node, st):
        opener = node.children[0].type if node.children else "["
        inner = [c for c in node.named_children if c.type != "comment"]
        if opener == "[[":
            return self._dbl(inner[0], st) if inner else False
        args = []
        for c in inner:
            args.extend(self._flatten_test(c, st))
        return cond.test_argv(args)

    def _flatten_test(self, node, st) -> list[Field]:
        """`[ ... ]` is the `test` builtin: its words, in order, fully expanded."""
        if node.type in ("binary_expression", "unary_expression", "parenthesized_expression", "negated_expression"):
            out = []
            for c in node.children:
                if c.is_named:
                    out.extend(self._flatten_test(c, st))
                else:
                    out.append(Field.of(self.script.text(c)))
            return out
        return self.expand_args([node], st)

    def _dbl(self, node, st):
        """[[ ... ]]: no splitting; == and != take a pattern on the right."""
        t = node.type
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children]
            return self._dbl(inner[0], st) if inner else False
        if t == "unary_expression":
            op = self.script.text(node.children[0])
            operand = node.children[-1]
            if op == "!":
                return cond.not3(self._dbl(operand, st))
            return cond.unary(op, self.expand_one(operand, st))
        if t == "binary_expression":
            op_node = node.child_by_field_name("operator")
            op = self.script.text(op_node) if op_node is not None else ""
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if op == "&&":
                a = self._dbl(left, st)
                return False if a is False else cond.and3(a, self._dbl(right, st))
            if op == "||":
                a = self._dbl(left, st)
                return True if a is True else cond.or3(a, self._dbl(right, st))
            if left.type == "unary_expression" and left.children and self.script.text(left.children[0]) == "!":
                # tree-sitter reads `! $A == b` as `(! $A) == b`; bash negates the comparison.
                return cond.not3(self._compare_nodes(left.children[-1], op, right, st))
            return self._compare_nodes(left, op, right, st)
        if t == "negated_expression" or (node.children and self.script.text(node.children[0]) == "!"):
            inner = [c for c in node.named_children]
            return cond.not3(self._dbl(inner[-1], st)) if inner else True
        value = self.expand_one(node, st)
        return None if not value.known else value.value != ""

    def _compare_nodes(self, left, op, right, st):
        lhs = self.expand_one(left, st)
        if True:
            if op in ("==", "=", "!="):
                rx = self.expand_pattern(right, st)
                if rx is None:
                    return None
                return cond.compare(op, lhs, Field(()), rx)
            if op == "=~":
                return cond.regex_match(lhs, self.expand_one(right, st))
            return cond.compare(op, lhs, self.expand_one(right, st))

    # ---- assignments --------------------------------------------------
    def x_variable_assignment(self, node, st, depth, in_cond):
        self.assign_node(node, st)
        st.status = 0
        return [st]

    def x_variable_assignments(self, node, st, depth, in_cond):
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign_node(c, st)
        st.status = 0
        return [st]

    def assign_node(self, node, st: State, local: bool = False, attrs: dict | None = None, extra=()) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        append = any(c.type == "+=" for c in node.children)
        loc = self.script.loc(node)
        index = None
        if name_node.type == "subscript":
            index_node = name_node.child_by_field_name("index")
            index = self.expand_one(index_node, st) if index_node is not None else Field.of("0")
            name_node = name_node.child_by_field_name("name")
        name = self.script.text(name_node)
        if local:
            st.save_local(name)
        old = st.vars.get(name)
        if old is not None and old.readonly:
            # a non-interactive bash stops on an assignment to a readonly variable
            raise ShellExit(1, Note(NoteKind.READONLY, loc, f"bash stops here: {name} is readonly", name))
        if value_node is not None and value_node.type == "array":
            elements = self._array_elements(value_node, st)
            if isinstance(elements, dict):
                base = dict(old.value) if append and old is not None and isinstance(old.value, dict) else {}
                base.update(elements)
                st.set_var(name, base, **(attrs or {}))
                return
            if append and old is not None:
                base = tuple(elements_of(old)) if not isinstance(old.value, dict) else ()
                st.set_var(name, base + tuple(elements), **(attrs or {}))
            else:
                st.set_var(name, tuple(elements), **(attrs or {}))
            return
        value = self.expand_one(value_node, st, extra) if value_node is not None else Field((), loc)
        if value_node is not None and value.loc is None:
            value = Field(value.pieces, self.script.loc(value_node))
        if value_node is None:
            value = Field((), loc)
        if index is not None:
            self._assign_element(st, name, index, value, append, loc)
            return
        if append:
            prev = scalar_of(old) if old is not None else None
            if prev is None and old is None:
                prev = self.ctx.missing(name)
            if prev is not None:
                value = Field(prev.pieces + value.pieces, prev.loc or value.loc)
        self.assign_scalar(st, name, value, loc, attrs)

    def assign_scalar(self, st: State, name: str, value: Field, loc, attrs: dict | None = None) -> None:
        old = st.vars.get(name)
        if old is not None and isinstance(old.value, tuple):
            st.set_var(name, (value,) + old.value[1:], **(attrs or {}))
            return
        st.set_var(name, value, **(attrs or {}))

    def _assign_element(self, st, name, index: Field, value: Field, append: bool, loc) -> None:
        old = st.vars.get(name)
        if old is not None and isinstance(old.value, dict):
            if not index.known:
                return
            d = dict(old.value)
            if append and index.value in d:
                value = Field(d[index.value].pieces + value.pieces, d[index.value].loc)
            d[index.value] = value
            st.set_var(name, d)
            return
        i = self.arithmetic(index.value, st, loc) if index.known else None
        if i is None:
            st.set_var(
                name, tuple(elements_of(old)) + (Field((Unknown(None, f"an element of {name} at an unknown index"),)),)
            )
            return
        items = (
            list(old.value)
            if old is not None and isinstance(old.value, tuple)
            else ([scalar_of(old)] if old is not None and scalar_of(old) is not None else [])
        )
        if i < 0:
            i += len(items)
        while len(items) <= i:
            items.append(None)
        if append and items[i] is not None:
            value = Field(items[i].pieces + value.pieces, items[i].loc)
        items[i] = value
        st.set_var(name, tuple(items))

    def _array_elements(self, node, st):
        children = [c for c in node.named_children if c.type != "comment"]
        if children and all(self._is_keyed(c) for c in children):
            out = {}
            for c in children:
                text = self.expand_one(c, st)
                if text.known:
                    key, _, val = text.value[1:].partition("]=")
                    out[key] = Field.of(val, self.script.loc(c))
            return out
        return self.expand_args(children, st)

    def _is_keyed(self, node) -> bool:
        text = self.script.text(node)
        return text.startswith("[") and "]=" in text

    def x_declaration_command(self, node, st, depth, in_cond):
        keyword = self.script.text(node.children[0])
        flags = set()
        for c in node.children[1:]:
            text = self.script.text(c)
            if c.type in ("word", "test_operator") and text[:1] in "-+" and len(text) > 1:
                flags.update(("+" if text[0] == "+" else "") + ch for ch in text[1:])
        attrs = {}
        if keyword == "export" or "x" in flags:
            attrs["exported"] = True
        if keyword == "readonly" or "r" in flags:
            attrs["readonly"] = True
        local = keyword == "local" or (keyword in ("declare", "typeset") and st.locals_stack and "g" not in flags)
        for group in word_groups(node.children[1:], self.script.source):
            c = group[0]
            if c.type == "variable_assignment":
                self.assign_node(c, st, local=local, attrs=attrs, extra=group[1:])
                if "i" in flags:  # declare -i V=A*B: the value is arithmetic
                    self._integer_value(self.script.text(c.child_by_field_name("name")), st)
            elif c.type == "variable_name" or (c.type == "word" and self.script.text(c)[:1] not in "-+"):
                name = self.script.text(c)
                if "f" in flags:
                    continue
                if local:
                    st.save_local(name)
                old = st.vars.get(name)
                if old is None:
                    if "a" in flags:
                        value = ()
                    elif "A" in flags:
                        value = {}
                    elif local:
                        value = None
                    else:
                        missing = self.ctx.missing(name)
                        value = missing
                    st.vars[name] = Var(value, attrs.get("exported", False), attrs.get("readonly", False))
                else:
                    st.set_var(name, old.value, **attrs)
            elif c.type in ("simple_expansion", "expansion", "string", "concatenation"):
                for f in self.expand_args([c], st):
                    self._declare_text(f, st, local, attrs)
        st.status = 0
        return [st]

    def _integer_value(self, name: str, st: State) -> None:
        var = st.vars.get(name)
        if var is None or not isinstance(var.value, Field):
            return
        value = self.arithmetic(var.value.value, st, var.value.loc) if var.value.known else None
        shown = f"$(({var.value.display}))"
        text = str(value) if value is not None else Unknown(shown, "arithmetic on an unknown value")
        st.set_var(name, Field((text,), var.value.loc))

    def _declare_text(self, f: Field, st: State, local: bool, attrs: dict) -> None:
        if not f.known:
            return
        name, eq, value = f.value.partition("=")
        if not name.replace("_", "a").isalnum():
            return
        if local:
            st.save_local(name)
        if eq:
            self.assign_scalar(st, name, Field.of(value, f.loc), f.loc, attrs)
        elif name not in st.vars:
            st.vars[name] = Var(self.ctx.missing(name), attrs.get("exported", False))

    def x_unset_command(self, node, st, depth, in_cond):
        func = any(self.script.text(c) == "-f" for c in node.children)
        for c in node.named_children:
            text = self.script.text(c)
            if text.startswith("-"):
                continue
            if func:
                st.funcs.pop(text, None)
                continue
            if "[" in text:
                name, _, idx = text.partition("[")
                var = st.vars.get(name)
                if var is not None and isinstance(var.value, tuple):
                    i, _ = self.arith_command(idx.rstrip("]"), st, self.script.loc(c))
                    if i is not None and 0 <= i < len(var.value):
                        items = list(var.value)
                        items[i] = None
                        st.set_var(name, tuple(items))
                continue
            var = st.vars.get(text)
            if var is not None and var.readonly:
                continue
            if st.locals_stack:
                st.vars[text] = Var(None)
            else:
                st.vars.pop(text, None)
                st.vars[text] = Var(None)
        st.status = 0
        return [st]

    # ---- commands -----------------------------------------------------
    def x_command(self, node, st, depth, in_cond):
        flat = []
        for c in node.children:
            if c.type in _REDIRECTS or c.type == "comment" or c.end_byte == c.start_byte:
                continue
            if c.type == "command_name":
                flat.extend(x for x in c.children if x.end_byte > x.start_byte)
            else:
                flat.append(c)
        assigns, words = [], []
        for group in word_groups(flat, self.script.source):
            if not words and group[0].type == "variable_assignment":
                assigns.append(group)
            else:
                words.append(group)
        ifs = self.ifs(st)
        argv = []
        for group in words:
            argv.extend(split_fields(self.group_chunks(group, st), ifs, self.script.loc(group[0])))
        if argv and assigns and self._wrapped_script(argv[0].value or "", argv) is not None:
            # `STAGE=x bash other.sh`: the assignments are exported to that script only
            inner = st.fork()
            for group in assigns:
                self.assign_node(group[0], inner, extra=group[1:], attrs={"exported": True})
            self._prefix_vars = {k: v for k, v in inner.vars.items() if st.vars.get(k) is not v}
        if not argv:
            for group in assigns:
                self.assign_node(group[0], st, extra=group[1:])
            st.status = 0
            return [st]
        last = words[-1]
        last_word = self.script.source[last[0].start_byte : last[-1].end_byte].decode("utf-8", "replace")
        blank = _ESCAPED_BLANK_AT_END.match(self.script.source, last[-1].end_byte)
        if blank is not None:
            # `\ ` at the end of a line: not a continuation. bash passes the escaped blank
            # as a word (or the end of the last one) and the command ends on this line.
            at = blank.start(2) - 1
            row = self.script.source.count(b"\n", 0, at)
            col = at - (self.script.source.rfind(b"\n", 0, at) + 1)
            loc = Loc(self.script.path, row + 1, self.script.char_col(row, col) + 1)
            text = blank.group(2).decode()
            if blank.group(1):
                argv.append(Field.of(text, loc))
                last_word = "\\" + text
            else:
                argv[-1] = Field(join_pieces((*argv[-1].pieces, text)), argv[-1].loc)
                last_word += "\\" + text
            self.note(
                st,
                loc,
                NoteKind.ESCAPED_BLANK,
                "a blank after this backslash: bash passes ' ' and the command ends on this line "
                "(the lines below are not its arguments)",
            )
        return self.run_command(node, argv, st, depth, last_word)

    def run_command(self, node, argv: list[Field], st: State, depth: int, last_word: str = "") -> list[State]:
        loc = self.script.loc(node)
        launch = self.ctx.on_command(list(argv), loc, last_word)
        if launch is not None:
            st.launches.append(launch)
            st.status = 0
            if argv[0].value == "exec":
                st.flow, st.flow_arg = "exit", 0
            return [st]
        name = argv[0].value
        if name is None:
            st.status = None
            return [st]
        if name in st.funcs:
            return self.call_function(name, argv[1:], st, depth, loc)
        handler = _BUILTINS.get(name)
        if handler is not None:
            return handler(self, node, argv, st, depth, loc)
        if name in NO_EFFECT:
            st.status = 0
            return [st]
        if name == "false":
            st.status = 1
            return [st]
        if name in ("command", "builtin", "nohup", "time", "exec") and len(argv) > 1:
            rest = argv[1:]
            while rest and rest[0].known and rest[0].value.startswith("-"):
                rest = rest[1:]
            if not rest:
                st.status = 0
                return [st]
            results = self.run_command(node, rest, st, depth, last_word)
            if name == "exec":
                for r in results:
                    if not r.flow:
                        r.flow, r.flow_arg = "exit", r.status
            return results
        wrapped = self._wrapped_script(name, argv)
        if wrapped is not None:
            return self.run_script(wrapped[0], wrapped[1], st, depth, node)
        st.status = None  # an external command: its outcome is unknown
        return [st]

    def _wrapped_script(self, name: str, argv: list[Field]):
        """(path, arguments) for `bash FILE ARGS`, `sh FILE ARGS`, `./FILE.sh ARGS` when
        FILE is known and exists; None for anything else (`bash -c`, an unknown path)."""
        if name in ("bash", "sh"):
            rest = argv[1:]
            while rest and rest[0].known and rest[0].value.startswith("-") and rest[0].value not in ("-", "--"):
                if rest[0].value in ("-c", "-i", "-s") or rest[0].value.startswith("--"):
                    return None
                rest = rest[1:]
            if rest and rest[0].value in ("-", "--"):
                rest = rest[1:]
            if not rest or not rest[0].known:
                return None
            target, args = rest[0].value, rest[1:]
        elif "/" in name:
            target, args = name, argv[1:]
        else:
            return None
        path = self._resolve_source(target)
        if path is None or (name not in ("bash", "sh") and not _is_shell_script(path)):
            return None
        return path, args

    def run_script(self, path: str, args: list[Field], st: State, depth: int, node) -> list[State]:
        """A script started as a program: a new bash with the exported variables and these
        positional arguments, read (never run) like the main script. Its launches are the
        caller's; arguments passed in keep the location of the caller's words."""
        if st.source_depth >= self.ctx.budget.source_depth:
            return [self.give_up(st, node, f"scripts nested deeper than {self.ctx.budget.source_depth}")]
        running = self.ctx.running
        if os.path.abspath(path) in running or os.path.abspath(self.ctx.main_path or "") == os.path.abspath(path):
            return [self._unfollowed(st, self.script.loc(node), f"{path} starts itself again: not followed twice")]
        self.ctx.wrapped_runs += 1
        if self.ctx.wrapped_runs > self.ctx.budget.states:
            return [self._unfollowed(st, self.script.loc(node), f"more than {self.ctx.budget.states} scripts started")]
        script = self.ctx.parsed.get(path)
        if script is None:
            data = self.ctx.read_file(path)
            if data is None:
                return [self._unfollowed(st, self.script.loc(node), f"cannot read {path}")]
            script = parse_script(path, data)
            self.ctx.parsed[path] = script
        prefix, self._prefix_vars = self._prefix_vars, {}
        exported = {k: v for k, v in {**st.vars, **prefix}.items() if v.exported}
        child = State(vars=exported, funcs={}, positional=tuple(args))
        child.vars["BASH_SOURCE"] = Var((Field.of(path),))
        child.launches, child.notes = list(st.launches), list(st.notes)
        child.assumptions, child.incomplete, child.excluded = st.assumptions, st.incomplete, st.excluded
        child.source_depth = st.source_depth + 1
        with self.reading(script), self.ctx.program(path):
            ends = self.exec_block(script.root, [child], depth)
        out = []
        for end in ends:
            outer = st.fork()
            outer.launches, outer.notes = end.launches, end.notes
            outer.incomplete, outer.assumptions = end.incomplete, end.assumptions
            outer.status = end.flow_arg if end.flow == "exit" else end.status
            out.append(outer)
        return out

    def call_function(self, name, args, st: State, depth: int, loc) -> list[State]:
        script, body = st.funcs[name]
        if st.call_depth >= self.ctx.budget.call_depth:
            return [self.give_up(st, body, f"function calls nested deeper than {self.ctx.budget.call_depth}")]
        saved_positional = st.positional
        st.positional = tuple(args)
        st.call_depth += 1
        st.locals_stack.append({})
        with self.reading(script):
            results = self.exec(body, st, depth)
        out = []
        for r in results:
            frame = r.locals_stack.pop() if r.locals_stack else {}
            for var_name, old in frame.items():
                if old is None:
                    r.vars.pop(var_name, None)
                else:
                    r.vars[var_name] = old
            r.call_depth -= 1
            r.positional = saved_positional
            if r.flow == "return":
                r.status = r.flow_arg if r.flow_arg is not None else r.status
                r.flow, r.flow_arg = None, 0
            out.append(r)
        return out

    # ---- builtins -----------------------------------------------------
    def b_set(self, node, argv, st, depth, loc):
        args = argv[1:]
        i = 0
        while i < len(args):
            text = args[i].value or ""
            if text == "--":
                st.positional = tuple(args[i + 1 :])
                break
            if text in ("-o", "+o") and i + 1 < len(args):
                opt = args[i + 1].value
                on = text == "-o"
                if opt == "errexit":
                    st.errexit = on
                elif opt == "nounset":
                    st.nounset = on
                i += 2
                continue
            if text[:1] in "-+" and len(text) > 1:
                on = text[0] == "-"
                if "e" in text:
                    st.errexit = on
                if "u" in text:
                    st.nounset = on
                if "o" in text[1:] and i + 1 < len(args):
                    opt = args[i + 1].value
                    if opt == "errexit":
                        st.errexit = on
                    elif opt == "nounset":
                        st.nounset = on
                    i += 1
                i += 1
                continue
            st.positional = tuple(args[i:])
            break
        st.status = 0
        return [st]

    def b_shift(self, node, argv, st, depth, loc):
        n = 1
        if len(argv) > 1:
            n, ok = self.arith_command(argv[1].value, st, loc) if argv[1].known else (None, True)
            if not ok:
                return [st]
            if n is None:
                st.status = None
                return [st]
        if n > len(st.positional):
            st.status = 1
            return [st]
        st.positional = st.positional[n:]
        st.status = 0
        return [st]

    def _code(self, argv, st) -> int | None:
        if len(argv) < 2:
            return st.status
        if not argv[1].known:
            return None
        from .arith import parse_int

        n = parse_int(argv[1].value)
        return None if n is None else n & 0xFF

    def b_exit(self, node, argv, st, depth, loc):
        st.flow, st.flow_arg = "exit", self._code(argv, st)
        st.status = st.flow_arg
        return [st]

    def b_return(self, node, argv, st, depth, loc):
        st.flow, st.flow_arg = "return", self._code(argv, st)
        return [st]

    def b_break(self, node, argv, st, depth, loc):
        levels = 1
        if len(argv) > 1 and argv[1].known:
            levels, ok = self.arith_command(argv[1].value, st, loc)
            if not ok:
                return [st]
        st.flow, st.flow_arg = argv[0].value, levels or 1
        return [st]

    def b_test(self, node, argv, st, depth, loc):
        args = argv[1:]
        if argv[0].value == "[":
            if not args or args[-1].value != "]":
                self.note(st, loc, NoteKind.TEST_SYNTAX, "bash test: missing ']'")
                st.status = 2
                return [st]
            args = args[:-1]
        try:
            verdict = cond.test_argv(args)
        except cond.TestError as err:
            self.note(st, loc, NoteKind.TEST_SYNTAX, f"bash test: {err}")
            st.status = 2
            return [st]
        st.status = None if verdict is None else (0 if verdict else 1)
        return [st]

    def b_source(self, node, argv, st, depth, loc):
        if len(argv) < 2:
            st.status = 2
            return [st]
        target = argv[1]
        if not target.known:
            return [self._unfollowed(st, loc, f"source of a path that is not known statically ({target.display})")]
        path = self._resolve_source(target.value)
        if path is None:
            return [self._unfollowed(st, loc, f"source of '{target.value}': no such readable file")]
        if st.source_depth >= self.ctx.budget.source_depth:
            return [self.give_up(st, node, f"source nested deeper than {self.ctx.budget.source_depth}")]
        script = self.ctx.parsed.get(path)
        if script is None:
            data = self.ctx.read_file(path)
            if data is None:
                return [self._unfollowed(st, loc, f"source of '{target.value}': cannot read it")]
            script = parse_script(path, data)
            self.ctx.parsed[path] = script
        saved_positional = st.positional
        if len(argv) > 2:
            st.positional = tuple(argv[2:])
        st.source_depth += 1
        # BASH_SOURCE is a stack, [0] the file being read: its path as found from here
        # (so that `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)` in it is its directory)
        outer_source = st.vars.get("BASH_SOURCE")
        st.vars["BASH_SOURCE"] = Var((Field.of(path, target.loc), *elements_of(outer_source)))
        with self.reading(script):
            results = self.exec_block(script.root, [st], depth)
        for r in results:
            if outer_source is not None:
                r.vars["BASH_SOURCE"] = outer_source
            else:
                r.vars.pop("BASH_SOURCE", None)
            r.source_depth -= 1
            if len(argv) > 2:
                r.positional = saved_positional
            if r.flow == "return":
                r.status = r.flow_arg if r.flow_arg is not None else r.status
                r.flow, r.flow_arg = None, 0
        return results

    def _resolve_source(self, target: str) -> str | None:
        if "\0" in target or not target:
            return None
        candidates = (
            [target] if os.path.isabs(target) else [os.path.join(os.path.dirname(self.script.path), target), target]
        )
        for c in candidates:
            if os.path.isfile(c):
                if os.path.isabs(c) and not os.path.isabs(self.script.path):
                    # one name per file: relative, as the script's own path is
                    rel = os.path.relpath(c)
                    return rel if not rel.startswith("..") else os.path.normpath(c)
                return os.path.normpath(c)
        return None

    def _unfollowed(self, st: State, loc, why: str) -> State:
        st.incomplete = True
        self.note(st, loc, NoteKind.INCOMPLETE, f"cannot follow the script here: {why}")
        st.status = None
        return st

    def b_eval(self, node, argv, st, depth, loc):
        """`eval` of text known statically is read as bash reads it (and never run);
        its launches are reported at the `eval` line. Unknown text is not followed."""
        args = argv[1:]
        if not all(a.known for a in args):
            shown = " ".join(a.display for a in args)
            return [self._unfollowed(st, loc, f"eval of text that is not known statically ({shown[:60]})")]
        text = " ".join(a.value for a in args)
        if not text.strip():
            st.status = 0
            return [st]
        snippet = _EvalText(self.script.path, text.encode(), loc)
        with self.reading(snippet):
            return self.exec_block(snippet.root, [st], depth)

    def b_declare(self, node, argv, st, depth, loc):
        keyword = argv[0].value
        attrs = {"exported": True} if keyword == "export" else {}
        if keyword == "readonly":
            attrs["readonly"] = True
        local = keyword == "local"
        for f in argv[1:]:
            if f.known and f.value.startswith("-"):
                continue
            self._declare_text(f, st, local, attrs)
        st.status = 0
        return [st]

    def b_let(self, node, argv, st, depth, loc):
        value = None
        for f in argv[1:]:
            value, ok = self.arith_command(f.value, st, loc) if f.known else (None, True)
            if not ok:
                return [st]
        st.status = None if value is None else int(value == 0)
        return [st]

    def b_read(self, node, argv, st, depth, loc):
        names = []
        skip = False
        for f in argv[1:]:
            if skip:
                skip = False
                continue
            if f.known and f.value.startswith("-"):
                skip = f.value in ("-d", "-n", "-N", "-p", "-t", "-u", "-a")
                if f.value == "-a":
                    skip = False
                continue
            if f.known:
                names.append(f.value)
        for n in names or ["REPLY"]:
            self.assign_scalar(st, n, Field((Unknown(None, "input read at run time"),)), loc)
        st.status = None
        return [st]

    def b_printf(self, node, argv, st, depth, loc):
        if len(argv) >= 3 and argv[1].value == "-v" and argv[2].known:
            fmt = argv[3] if len(argv) > 3 else Field(())
            args = argv[4:]
            text = _printf(fmt, args)
            self.assign_scalar(
                st,
                argv[2].value,
                text if text is not None else Field((Unknown(None, "printf output with an unknown format"),)),
                loc,
            )
        st.status = 0
        return [st]

    def b_getopts(self, node, argv, st, depth, loc):
        st.status = 1  # no script arguments in a profile
        return [st]


def _is_shell_script(path: str) -> bool:
    """A file run as a program that is a shell script: *.sh, or a `#!...sh` first line."""
    if path.endswith(".sh"):
        return True
    try:
        with open(path, "rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and first.rstrip().split(b"/")[-1].split(b" ")[-1] in (b"bash", b"sh")


class _EvalText(Script):
    """The text an `eval` runs: every location in it is the `eval` command's."""

    def __init__(self, path: str, source: bytes, at: Loc):
        parsed = parse_script(path, source)
        super().__init__(path, parsed.source, parsed.tree)
        self.at = at

    def loc(self, node) -> Loc:
        return self.at


def _printf(fmt: Field, args: list[Field]) -> Field | None:
    if not fmt.known or not all(a.known for a in args):
        return None
    out = []
    text = fmt.value
    values = [a.value for a in args]
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%" and i + 1 < len(text):
            spec = text[i + 1]
            if spec == "%":
                out.append("%")
            elif spec in "sd":
                out.append(values.pop(0) if values else ("" if spec == "s" else "0"))
            else:
                return None
            i += 2
            continue
        if ch == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    return Field.of("".join(out), fmt.loc)


_BUILTINS = {
    "set": Interpreter.b_set,
    "shift": Interpreter.b_shift,
    "exit": Interpreter.b_exit,
    "return": Interpreter.b_return,
    "break": Interpreter.b_break,
    "continue": Interpreter.b_break,
    "test": Interpreter.b_test,
    "[": Interpreter.b_test,
    "source": Interpreter.b_source,
    ".": Interpreter.b_source,
    "eval": Interpreter.b_eval,
    "export": Interpreter.b_declare,
    "local": Interpreter.b_declare,
    "declare": Interpreter.b_declare,
    "typeset": Interpreter.b_declare,
    "readonly": Interpreter.b_declare,
    "let": Interpreter.b_let,
    "read": Interpreter.b_read,
    "mapfile": Interpreter.b_read,
    "readarray": Interpreter.b_read,
    "printf": Interpreter.b_printf,
    "getopts": Interpreter.b_getopts,
}

_ESCAPED_BLANK_AT_END = re.compile(rb"([ \t]*)\\([ \t])[ \t]*(?:#[^\n]*)?(?:\r?\n|$)")
_REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
_ERREXIT_TYPES = {"command", "pipeline", "subshell", "redirected_statement", "test_command", "compound_statement"}


def fields(node) -> list[tuple]:
    """(field name or None, child) for each child, in order."""
    return [(node.field_name_for_child(i), c) for i, c in enumerate(node.children)]


def outcome_of(st: State, env: dict) -> Outcome:
    if st.incomplete:
        status = "incomplete"
    elif st.launches:
        status = "launches"
    elif st.flow == "exit" and st.flow_arg not in (0,):
        status = "rejected"
    else:
        status = "no-launch"
    code = st.flow_arg if st.flow == "exit" else st.status
    assumptions = tuple(
        Assumption(a.subject, "not in", tuple(sorted(st.excluded[a.subject])))
        if a.relation == "other" and st.excluded.get(a.subject)
        else a
        for a in st.assumptions
    )
    for name, value in env.items():  # a switch the profile sets to none of its literals
        if value is OTHER:
            excluded = tuple(sorted(st.excluded.get(name, ())))
            assumptions += (Assumption(name, "not in", excluded) if excluded else Assumption(name, "set"),)
    return Outcome(dict(env), assumptions, status, code, list(st.launches), list(st.notes))


def evaluate(
    script: Script,
    env: dict,
    unset_inputs,
    on_command,
    *,
    ambient: dict | None = None,
    budget: Budget | None = None,
    script_name: str | None = None,
    parsed: dict | None = None,
    read_file=None,
) -> list[Outcome]:
    """All end states of `script` run with `env` (one profile). `parsed` collects
    (and shares across profiles) the files the script sources."""
    ctx = Context(
        script_name or script.path, unset_inputs, ambient, budget or Budget(), on_command, read_file or reader()
    )
    if parsed is not None:
        ctx.parsed = parsed
    ctx.main_path = script.path
    interp = Interpreter(script, ctx)
    states = interp.run(env)
    return [outcome_of(st, env) for st in states]


__all__ = ["evaluate", "Outcome", "Budget", "split_fields", "join_field"]

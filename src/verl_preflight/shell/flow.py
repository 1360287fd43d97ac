"""Control flow: statements, lists, pipelines, subshells, if, loops, case, functions.

`ControlFlow.exec` runs one node on one state and returns the states it ends in
(several when a condition on an unknown value forks); each node type is
dispatched from the interpreter's table to the part that reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.values import Assumption
from .errors import ABORT, ArithFailure, ShellExit
from .expand import arith_operands
from .limits import OverBound, meter
from .nodes import static_text, variable_of
from .notes import NoteKind
from .state import State
from .words import Field

if TYPE_CHECKING:
    from .evaluate import Interpreter


_ERREXIT_TYPES = {"command", "pipeline", "subshell", "redirected_statement", "test_command", "compound_statement"}


def _short(text: str, width: int = 60) -> str:
    """A command's text on one line, at most `width` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3] + "..."


_ENDLESS = "loop never ends"  # (Loops: the note of a loop whose passes come back to the same state)


def _backgrounded(node) -> bool:
    """Whether a statement ends in `&` (bash runs it in the background)."""
    after = node.next_sibling
    return after is not None and after.type == "&"


def _read_on(states: list[State]) -> None:
    """At a file's top level, at the end of a line: a path an arithmetic error dropped (flow
    ABORT) reads on from the next line (bash parses a whole line, `a; b; c`, as one command
    and drops what is left of it); $? is 1."""
    for st in states:
        if st.flow == ABORT:
            st.flow, st.flow_arg, st.status = None, 0, 1


def fields(node) -> list[tuple]:
    """(field name or None, child) for each child, in order."""
    return [(node.field_name_for_child(i), c) for i, c in enumerate(node.children)]


class ControlFlow:
    """Statements, lists, pipelines, subshells, conditions, if, functions."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def statements(self, node):
        return [c for c in node.named_children if c.type not in ("comment", "heredoc_body")]

    def exec_block(self, node, states: list[State], depth: int) -> list[State]:
        return self.exec_seq(self.statements(node), states, depth, top=node.type == "program")

    def exec_seq(self, nodes, states: list[State], depth: int, top: bool = False) -> list[State]:
        """Run the statements in order. `top`: they are a file's (or eval's text's) top level,
        where bash goes on after an arithmetic error dropped the statement it was in."""
        for i, node in enumerate(nodes):
            nxt: list[State] = []
            background = _backgrounded(node)
            for st in states:
                if st.flow:
                    nxt.append(st)
                elif background:
                    nxt.extend(self._in_background(node, st, depth))
                else:
                    nxt.extend(self.exec(node, st, depth))
            states = self.cap(State.joined(nxt) if len(nxt) > 1 else nxt, node)
            if top and (i + 1 == len(nodes) or nodes[i + 1].start_point[0] != node.end_point[0]):
                _read_on(states)
        return states

    def cap(self, states: list[State], node) -> list[State]:
        limit = self.i.ctx.budget.states
        if len(states) <= limit:
            return states
        kept = states[:limit]
        for st in kept:
            if not st.incomplete:
                self.i.note_once(
                    st,
                    self.i.script.loc(node),
                    NoteKind.BUDGET,
                    f"more than {limit} paths through the script; the rest were not followed",
                )
                st.incomplete = True
        return kept

    def exec(self, node, st: State, depth: int, in_cond: bool = False) -> list[State]:
        """Run `node`; what went past a bound of one operation while it ran (and not in a node
        inside it) is said on every path it ends in. What was pending when it started is its
        parent's (`case ${x//p/r} in`: the subject's, before an arm runs), said on the parent's."""
        m = meter()
        outer = m.set_aside()
        finished = False
        try:
            results = self._exec(node, st, depth, in_cond)
            finished = True
        finally:
            own = m.restore(outer)
            if not finished:  # going up as an exception: still pending, for an enclosing node to say
                m.events.extend(own)
        if own:
            self.i.past_bounds(results, own, node)
        return results

    def _exec(self, node, st: State, depth: int, in_cond: bool) -> list[State]:
        spent = self.i.ctx.allowance.step()
        if spent is not None:
            return [self.i.give_up(st, node, spent)]
        if depth > self.i.ctx.budget.nesting:
            return [self.i.give_up(st, node, "nesting too deep")]
        t = node.type
        try:
            handler = self.i.handlers.get(t)
            if handler is None:
                return [st]
            results = handler(node, st, depth + 1, in_cond)
        except ArithFailure as failure:  # bash drops the rest of the top-level command (not posix: no exit)
            st.notes.append(failure.note)
            st.flow, st.flow_arg, st.status = ABORT, 1, 1
            return [st]
        except ShellExit as stop:
            if stop.note is not None:
                st.notes.append(stop.note)
            st.flow, st.flow_arg, st.status = "exit", stop.code, stop.code
            if st.ended is None:
                why = stop.note.message if stop.note is not None else "bash stops here"
                st.ended = (self.i.script.loc(node), why, None)
            return [st]
        except RecursionError:
            return [self.i.give_up(st, node, "nesting too deep")]
        except OverBound as past:  # a command past a bound of the tool (too many words): not run,
            meter().over(past.why)  # what it does is unknown, said on this path (which goes on)
            st.status = None
            return [st]
        if not in_cond:
            for r in results:
                if r.errexit and not r.flow and r.status not in (0, None) and t in _ERREXIT_TYPES:
                    r.flow, r.flow_arg = "exit", r.status
                    r.ended = r.ended or (self.i.script.loc(node), "`set -e` and this command fails", None)
        for r in results:
            if r.flow == "exit" and r.ended is None:  # `exit 1`, `exec ...`: the innermost command says where
                r.ended = (self.i.script.loc(node), f"`{_short(self.i.script.text(node))}`", None)
        return results

    def x_program(self, node, st, depth, in_cond):
        return self.exec_block(node, [st], depth)

    def x_compound_statement(self, node, st, depth, in_cond):
        if node.children and node.children[0].type == "((":
            value, ok = self.i.arith_command(arith_operands(node), st, self.i.script.loc(node))
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

    def _in_background(self, node, st: State, depth: int) -> list[State]:
        """`cmd &`: bash runs it in a subshell and goes on at once (status 0). What it launches
        counts; a loop in it that never ends (a GPU monitor) keeps running there and stops
        nothing the script does after it."""
        before = len(st.notes)
        out = []
        for end in self._in_subshell(lambda s: self.exec(node, s, depth), st):
            endless = [n for n in end.notes[before:] if n.kind == NoteKind.BUDGET and _ENDLESS in n.message]
            if endless:
                end.notes = [n for n in end.notes if n not in endless]
                end.incomplete = st.incomplete
            end.status = 0
            out.append(end)
        return out

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
            if end.flow in ("exit", ABORT):  # an arithmetic error ends a subshell as `exit 1` does
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
                    self.i.variables.assign_scalar(same, var, Field.of(literal), None)
                    self.assume_once(same, Assumption(var, "=", (literal,)))
                    other.excluded = {**other.excluded, var: other.excluded.get(var, frozenset()) | {literal}}
                    self.assume_once(other, Assumption(var, "other"))
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
        if op is None or self.i.script.text(op) not in ("=", "==", "!="):
            return None
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        for a, b in ((left, right), (right, left)):
            if a is None or b is None:
                continue
            var = variable_of(self.i.script, a, with_default=False)
            literal = static_text(self.i.script, b)
            if var and literal is not None:
                return var, literal, self.i.script.text(op) != "!="
        return None

    def condition_label(self, node) -> str:
        text = " ".join(self.i.script.text(node).split())
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
        for s, ok in self.cond_seq(cond_nodes, st, depth):
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

    def cond_seq(self, nodes, st, depth):
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

    def x_function_definition(self, node, st, depth, in_cond):
        name = self.i.script.text(node.child_by_field_name("name"))
        st.funcs[name] = (self.i.script, node.child_by_field_name("body"))
        st.status = 0
        return [st]

    @staticmethod
    def assume_once(st: State, assumption: Assumption) -> None:
        if not any(a.subject == assumption.subject for a in st.assumptions):
            st.assume(assumption)

    def call_function(self, name, args, st: State, depth: int, loc) -> list[State]:
        script, body = st.funcs[name]
        if st.call_depth >= self.i.ctx.budget.call_depth:
            return [self.i.give_up(st, body, f"function calls nested deeper than {self.i.ctx.budget.call_depth}")]
        saved_positional = st.positional
        st.positional = tuple(args)
        st.call_depth += 1
        st.locals_stack.append({})
        with self.i.reading(script):
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
            if r.flow == "exit" and r.ended is not None and r.ended[2] is None:
                r.ended = (r.ended[0], r.ended[1], (name, loc))  # exits in this function, called here
            if r.flow == "return":
                r.status = r.flow_arg if r.flow_arg is not None else r.status
                r.flow, r.flow_arg = None, 0
            out.append(r)
        return out


class Loops:
    """while/until, for, and C-style for."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def x_while_statement(self, node, st, depth, in_cond):
        until = node.children and node.children[0].type == "until"
        cond_nodes = [c for name, c in fields(node) if name == "condition" and c.is_named]
        body = node.child_by_field_name("body")
        label = self.i.flow.condition_label(cond_nodes[-1]) if cond_nodes else None
        states = [st]
        done = []
        before: list = []  # the paths at the loop's head one pass ago: one there again goes on as it did
        again: list = []  # those that came back to it as they were
        for iteration in range(self.i.ctx.budget.loop_iterations):
            new: list = []
            for s in states:
                (again if any(s.same_path(other) for other in before) else new).append(s)
            states = new
            before = [s.fork() for s in states]
            nxt = []
            for s, ok in [pair for s0 in states for pair in self.i.flow.cond_seq(cond_nodes, s0, depth)]:
                if s.flow:
                    done.append(s)
                    continue
                forked = label is not None and len(s.assumptions) > 0 and s.assumptions[-1].subject == label
                if ok == until or (forked and iteration > 0):
                    # an unknown condition (a wait loop): after one pass, assume it ends
                    s.status = 0
                    done.append(s)
                    continue
                for r in self.i.flow.exec(body, s, depth):
                    nxt.extend(self._loop_flow(r, done))
            states = self.i.flow.cap(nxt, node)
            if not states and not done and again:  # no way out: each pass comes back as it was
                return [
                    self.i.give_up(s, node, "loop never ends: each pass comes back to the same state")
                    for s in State.joined(again)
                ]
            if not states:
                return done
        for s in states:
            done.append(self.i.give_up(s, node, "loop did not end within the iteration budget"))
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
        name = self.i.script.text(var)
        values = [c for name, c in fields(node) if name == "value"]
        body = node.child_by_field_name("body")
        has_in = any(c.type == "in" for c in node.children)
        try:
            items = self.i.expander.expand_args(values, st) if has_in else list(st.positional)
        except OverBound as past:  # too many items: unknown, as `for f in $(ls)`'s are
            where = self.i.script.loc(values[0]) if values else None
            items = [Field((meter().over(past.why, where),), where)]
        states = [st]
        done: list[State] = []
        for item in items[: self.i.ctx.budget.loop_iterations]:
            nxt = []
            for s in states:
                self.i.variables.assign_scalar(s, name, item, item.loc)
                for r in self.i.flow.exec(body, s, depth):
                    nxt.extend(self._loop_flow(r, done))
            states = self.i.flow.cap(nxt, node)
        return done + states

    def x_c_style_for_statement(self, node, st, depth, in_cond):
        init = node.child_by_field_name("initializer")
        test = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        body = node.child_by_field_name("body")
        loc = self.i.script.loc(node)
        if init is not None and not self.i.arith_command([init], st, loc)[1]:
            return [st]
        states, done = [st], []
        label = f"(( {self.i.script.text(test)} ))" if test is not None else ""
        for iteration in range(self.i.ctx.budget.loop_iterations):
            nxt = []
            for s in states:
                ok, fine = self.i.arith_command([test], s, loc) if test is not None else (1, True)
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
                for r in self.i.flow.exec(body, s, depth):
                    for c in self._loop_flow(r, done):
                        if update is not None and not self.i.arith_command([update], c, loc)[1]:
                            done.append(c)
                            continue
                        nxt.append(c)
            states = self.i.flow.cap(nxt, node)
            if not states:
                return done
        return done + [self.i.give_up(s, node, "loop did not end within the iteration budget") for s in states]


class Cases:
    """`case`: arms matched in order; an unknown subject forks one path per literal arm."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def x_case_statement(self, node, st, depth, in_cond):
        subject_node = node.child_by_field_name("value")
        subject = self.i.expander.expand_one(subject_node, st)
        items = [c for c in node.named_children if c.type == "case_item"]
        var = variable_of(self.i.script, subject_node, with_default=False)
        label = var or self.i.flow.condition_label(subject_node)
        return self._case_from(items, 0, subject, label, var, st, depth)

    def _case_from(self, items, start, subject: Field, label, var, st, depth):
        """Match arms in order. On an unknown subject each literal arm is a fork in
        which the variable takes that literal; the path on which no literal matched
        remembers the literals it excluded."""
        out = []
        for i in range(start, len(items)):
            item = items[i]
            patterns = [c for name, c in fields(item) if name == "value"]
            matched = undecided = False
            maybe = []
            for p in patterns:
                try:
                    rx = self.i.expander.expand_pattern(p, st)
                    hit = subject.known and rx is not None and rx.fullmatch(subject.value)
                except OverBound as past:  # too costly to build or to match: the arm may or may not be taken
                    meter().over(past.why, self.i.script.loc(p))  # said on both ways, by exec
                    undecided = True
                    continue
                if hit:
                    matched = True
                    break
                if subject.known and rx is not None:
                    continue
                if rx is not None and rx.matches_all:
                    matched = True
                    break
                literal = static_text(self.i.script, p)
                if literal is not None and literal in st.excluded.get(var, ()):
                    continue
                maybe.append((literal, self.i.script.text(p)))
            if matched:
                if not subject.known:
                    self.i.flow.assume_once(st, Assumption(label, "other"))
                return out + self._case_body(items, i, subject, label, st, depth)
            if undecided:
                out.extend(self._case_body(items, i, subject, label, st.fork(), depth))
            for literal, text in maybe:
                taken = st.fork()
                if var and literal is not None:
                    self.i.variables.assign_scalar(taken, var, Field.of(literal), None)
                self.i.flow.assume_once(taken, Assumption(label, "=", (literal if literal is not None else text,)))
                out.extend(self._case_body(items, i, subject, label, taken, depth))
            if var and maybe:
                st.excluded = {
                    **st.excluded,
                    var: st.excluded.get(var, frozenset()) | {lit for lit, _ in maybe if lit is not None},
                }
        st.status = 0
        if not subject.known:
            self.i.flow.assume_once(st, Assumption(label, "other"))
        out.append(st)
        return out

    def _case_body(self, items, i, subject, label, st, depth):
        item = items[i]
        body = [
            c
            for name, c in fields(item)
            if c.is_named and name not in ("value", "termination", "fallthrough") and c.type != "comment"
        ]
        term = item.child_by_field_name("termination") or item.child_by_field_name("fallthrough")
        term_text = self.i.script.text(term) if term is not None else ";;"
        states = self.i.flow.exec_seq(body, [st], depth)
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

"""Graphviz pictures: an exported e-graph (clusters are e-classes, the extracted e-node
of each class filled), and the op graph of an IR region (ops as nodes, def-use edges,
nested regions as clusters). For small regions: sizes are capped with a note. A real rule's
e-graph is drawn readably by keeping only the classes it touched (:func:`classes_of_ops`).

:func:`render` turns the .dot files into SVG and PNG with Graphviz's ``dot`` when it is on
PATH; without it the .dot files stay and the caller says how to get Graphviz.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

import numpy as np

from egraft.ir import Operation, OpResult

from egraft.rewrite.engine.export import EGraphArrays


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short(text: object, limit: int = 40) -> str:
    s = str(text)
    return s if len(s) <= limit else s[:limit - 1] + "…"


#: Seconds Graphviz may take per picture; a larger e-graph is left as .dot.
RENDER_TIMEOUT = 60.0


def classes_of_ops(g: EGraphArrays, op_names: Iterable[str]) -> set[int]:
    """The e-classes holding an e-node of one of ``op_names`` (a rule's source and result
    ops: where it can have matched and what it built), with the classes those e-nodes
    point to, so each drawn e-node's operands are drawn too."""
    wanted = {i for i, name in enumerate(g.op_names) if name in set(op_names)}
    nodes = np.flatnonzero(np.isin(g.node_op, list(wanted)))
    found = set(g.node_class[nodes].tolist())
    for n in nodes.tolist():
        found.update(g.children[g.child_ptr[n]:g.child_ptr[n + 1]].tolist())
    return found


def egraph_dot(g: EGraphArrays, choice: np.ndarray | None = None, max_nodes: int = 2000,
               classes: set[int] | None = None) -> str:
    """The e-graph as DOT: one cluster per e-class, edges from e-nodes to child classes;
    only ``classes`` when given (edges to the others left out)."""
    lines = ["digraph egraph {", "  compound=true; node [shape=box, fontsize=10];"]
    ptr, order = g.class_nodes()
    chosen = set(choice[choice >= 0].tolist()) if choice is not None else set()
    shown = 0
    drawn: list[int] = []
    for c in range(g.n_classes):
        if classes is not None and c not in classes:
            continue
        nodes = order[ptr[c]:ptr[c + 1]]
        if shown + len(nodes) > max_nodes:
            lines.append(f'  note [shape=note, label="more e-nodes not shown (over {max_nodes})"];')
            break
        lines.append(f"  subgraph cluster_{c} {{ style=dotted; label=\"c{c}\";")
        lines.append(f"    anchor{c} [shape=point, style=invis];")
        for n in nodes:
            label = g.op_names[g.node_op[n]]
            if g.payloads[n] is not None:
                label += f"[{_short(g.payloads[n])}]"
            fill = ", style=filled, fillcolor=lightblue" if n in chosen else ""
            lines.append(f"    n{n} [label={_quote(label)}{fill}];")
        lines.append("  }")
        shown += len(nodes)
        drawn.extend(nodes.tolist())
    clusters = set(g.node_class[drawn].tolist()) if drawn else set()
    for n in drawn:
        for i, child in enumerate(g.children[g.child_ptr[n]:g.child_ptr[n + 1]].tolist()):
            if child in clusters:
                lines.append(f"  n{n} -> anchor{child} [lhead=cluster_{child}, label=\"{i}\", fontsize=8];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def ir_dot(root: Operation, max_ops: int = 2000) -> str:
    """The ops under ``root`` as DOT: def-use edges, one cluster per region."""
    ids: dict[Operation, int] = {}
    lines = ["digraph ir {", "  node [shape=box, fontsize=10];"]

    def emit(op: Operation, indent: str) -> None:
        if len(ids) >= max_ops:
            return
        ids[op] = len(ids)
        lines.append(f"{indent}op{ids[op]} [label={_quote(op.name)}];")
        for r, region in enumerate(op.regions):
            lines.append(f"{indent}subgraph cluster_{ids[op]}_{r} {{ label={_quote(f'{op.name} region {r}')};")
            for block in region.blocks:
                for inner in block:
                    emit(inner, indent + "  ")
            lines.append(f"{indent}}}")

    for region in root.regions:
        for block in region.blocks:
            for op in block:
                emit(op, "  ")
    for op, n in ids.items():
        for i, v in enumerate(op.operands):
            if isinstance(v, OpResult) and v.owner in ids:
                lines.append(f"  op{ids[v.owner]} -> op{n} [label=\"{v.index}→{i}\", fontsize=8];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot_files: Iterable[str], formats: tuple[str, ...] = ("svg", "png")) -> str | None:
    """Render each ``x.dot`` to ``x.svg`` and ``x.png`` with Graphviz's ``dot``. Returns None when
    done, else why not (``dot`` is not on PATH, failed or timed out): pictures are an aid,
    so the caller reports this and goes on."""
    dot = shutil.which("dot")
    if dot is None:
        return ("Graphviz's 'dot' is not on PATH, so only the .dot files were written; install Graphviz "
                "(a Debian package: apt-get install graphviz) and run 'dot -Tsvg FILE.dot -o FILE.svg'")
    for path in dot_files:
        stem = path[:-len(".dot")] if path.endswith(".dot") else path
        for fmt in formats:
            try:
                done = subprocess.run([dot, f"-T{fmt}", path, "-o", f"{stem}.{fmt}"], capture_output=True,
                                      text=True, timeout=RENDER_TIMEOUT)
            except subprocess.TimeoutExpired:
                return f"Graphviz took over {RENDER_TIMEOUT:g} s on {path}; the .dot files are written"
            if done.returncode != 0:
                return f"Graphviz failed on {path}: {done.stderr.strip()[:200]}"
    return None

"""Graphviz pictures: an exported e-graph (clusters are e-classes, the extracted e-node
of each class filled), and the op graph of an IR region (ops as nodes, def-use edges,
nested regions as clusters). For small regions: sizes are capped with a note.
"""

from __future__ import annotations

import numpy as np

from egraft.ir import Operation, OpResult

from egraft.rewrite.engine.export import EGraphArrays


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short(text: object, limit: int = 40) -> str:
    s = str(text)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def egraph_dot(g: EGraphArrays, choice: np.ndarray | None = None, max_nodes: int = 2000) -> str:
    """The e-graph as DOT: one cluster per e-class, edges from e-nodes to child classes."""
    lines = ["digraph egraph {", "  compound=true; node [shape=box, fontsize=10];"]
    ptr, order = g.class_nodes()
    chosen = set(choice[choice >= 0].tolist()) if choice is not None else set()
    shown = 0
    for c in range(g.n_classes):
        nodes = order[ptr[c]:ptr[c + 1]]
        if shown + len(nodes) > max_nodes:
            lines.append(f'  note [shape=note, label="{g.n_nodes - shown} more e-nodes not shown"];')
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
    limit = set(order[:shown].tolist()) if shown < g.n_nodes else None
    for n in range(g.n_nodes):
        if limit is not None and n not in limit:
            continue
        for i, child in enumerate(g.children[g.child_ptr[n]:g.child_ptr[n + 1]].tolist()):
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

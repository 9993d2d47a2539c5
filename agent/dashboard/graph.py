"""The dependency picture of the selected resolution, as SVG drawn on the server: the origins (core
and each plugin) on the left, the pinned packages on the right, an edge for each origin that pulls
a package in (the pins' ``required_by``). The latest refusal's collision is drawn over it: the
packages its causes name in red, and an edge in red from each origin that states a colliding
requirement (dashed when that origin is not in the selected resolution, e.g. the refused candidate),
titled with the requirement."""

from __future__ import annotations

from typing import Any

from agent.dashboard.markup import Html, esc, tag

__all__ = ["svg"]

ROW, TOP, BOX_W, LEFT_X, RIGHT_X, WIDTH = 30, 40, 250, 20, 500, 880


def _origin(origin: dict[str, Any]) -> str:
    return "core" if origin.get("kind") == "core" else f"plugin {origin.get('plugin')}"


def _layout(data: dict[str, Any]) -> tuple[list[str], list[str], set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """Origins, packages, the resolution's edges and the conflict's edges ((origin, package, title))."""
    pulls = {(_origin(o), p["name"], f"{p['name']}=={p['version']}") for p in data["packages"] for o in p["required_by"]}
    causes = (data.get("conflict") or {}).get("causes", [])
    clashes = {(_origin(c["origin"]), c["package"], c["requirement"]) for c in causes}
    origins = list(dict.fromkeys(["core", *sorted(o for o, _, _ in pulls | clashes if o != "core")]))
    packages = list(dict.fromkeys([*sorted(p["name"] for p in data["packages"]), *sorted(p for _, p, _ in clashes)]))
    return origins, packages, pulls, clashes


def _box(x: int, y: int, text: str, cls: str) -> Html:
    return tag("g", tag("rect", x=x, y=y, width=BOX_W, height=ROW - 8, rx=4, cls=cls),
               tag("text", text, x=x + 8, y=y + 15), tag("title", text))


def svg(data: dict[str, Any]) -> Html:
    """The picture (see the module docstring) as an inline ``<svg>``."""
    origins, packages, pulls, clashes = _layout(data)
    colliding = {p for _, p, _ in clashes}
    height = TOP + ROW * max(len(origins), len(packages), 1) + 10
    at_o = {o: TOP + i * ROW for i, o in enumerate(origins)}
    at_p = {p: TOP + i * ROW for i, p in enumerate(packages)}
    pinned = {p["name"]: p["version"] for p in data["packages"]}
    members = {o for o, _, _ in pulls}
    edges = [_edge(at_o[o], at_p[p], title, "pull") for o, p, title in sorted(pulls)]
    edges += [_edge(at_o[o], at_p[p], f"{o}: {req}", "clash" if o in members else "clash candidate")
              for o, p, req in sorted(clashes)]
    boxes = [_box(LEFT_X, at_o[o], o, "origin") for o in origins]
    boxes += [_box(RIGHT_X, at_p[p], f"{p} {pinned.get(p, '(not installed)')}",
                   "package collision" if p in colliding else "package") for p in packages]
    style = tag("style", Html(
        ".origin{fill:#e8eefc;stroke:#3867d6}.package{fill:#eef7ee;stroke:#2e7d32}"
        ".collision{fill:#fde8ea;stroke:#b00020;stroke-width:2}text{font:12px sans-serif}"
        ".pull{stroke:#8894a8;fill:none}.clash{stroke:#b00020;stroke-width:2;fill:none}"
        ".candidate{stroke-dasharray:6 4}"))
    heads = [tag("text", "origins", x=LEFT_X, y=22, font_weight="bold"),
             tag("text", f"generation {data['generation'] or '(none selected)'}", x=RIGHT_X, y=22, font_weight="bold")]
    return tag("svg", style, *heads, *edges, *boxes, xmlns="http://www.w3.org/2000/svg", width=WIDTH,
               height=height, viewBox=f"0 0 {WIDTH} {height}", role="img", aria_label="dependency graph")


def _edge(y1: int, y2: int, title: str, cls: str) -> Html:
    x1, x2, mid = LEFT_X + BOX_W, RIGHT_X, (LEFT_X + BOX_W + RIGHT_X) // 2
    a, b = y1 + (ROW - 8) // 2, y2 + (ROW - 8) // 2
    return tag("path", tag("title", title), d=f"M{x1},{a} C{mid},{a} {mid},{b} {x2},{b}", cls=cls)


def legend() -> Html:
    return esc("Red: the packages the latest refusal's causes name, and the requirements that collide on them "
               "(dashed: an origin outside the selected resolution, such as the refused candidate).")

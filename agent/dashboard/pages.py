"""The pages: each takes what :mod:`.reads` (or an action) returned and gives the page body.

:class:`View` carries what every page needs: the token for links and forms, whether actions are
allowed, and the home shown in the header.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from agent.dashboard.actions import Outcome, runnable, told_written
from agent.dashboard.graph import legend, svg
from agent.dashboard.markup import Html, command, esc, form, join, link, page, table, tag

__all__ = ["View"]


@dataclass(frozen=True)
class View:
    token: str
    home: str
    allow_actions: bool

    def page(self, title: str, body: object, active: str = "") -> Html:
        return page(title, body, token=self.token, home=self.home, active=active)

    def button(self, action: str, label: str, **fields: str) -> Html:
        return form(self.token, action, label, fields, allowed=self.allow_actions)

    def short(self, path: str) -> str:
        """``path`` as ``$HERMES_HOME/…`` when it is inside the home (the full path is in the title)."""
        home = self.home.rstrip("/") + "/"
        return "$HERMES_HOME/" + path[len(home):] if path.startswith(home) else path

    def mode(self) -> Html:
        if self.allow_actions:
            return tag("p", "Actions are on: buttons run the same operations as the CLI.", cls="note")
        return tag("p", "Read-only: start `hermes dashboard --allow-actions` to enable, disable, roll back "
                        "and save settings from here.", cls="note")

    # -- plugins ---------------------------------------------------------------------------------

    def plugins(self, data: dict[str, Any]) -> Html:
        labels = [label for label, _ in data["homes"]]
        rows = []
        for p in data["plugins"]:
            member = p["status"] == "member"
            status = tag("span", "member" if member else f"sits out: {p['status']}", cls="member" if member else "out")
            act = self.button("/actions/disable" if member else "/actions/enable",
                              "disable" if member else "enable", name=p["name"])
            declaration = self.short(p["declaration"]["file"]) if p["declaration"] else "(none)"
            rows.append([link(self.token, f"/plugins/{quote(p['name'])}", p["name"]), status, p["reason"],
                         *("member" if label in p["member_in"] else "" for label in labels),
                         p["source"], tag("code", declaration, title=p["declaration"]["file"] if p["declaration"] else None),
                         act])
        homes = tag("ul", *(tag("li", tag("strong", label), " ", tag("code", path)) for label, path in data["homes"]))
        notices = tag("ul", *(tag("li", n) for n in data["notices"])) if data["notices"] else ""
        body = [self.mode(), tag("p", "Homes sharing this environment:"), homes,
                table(["plugin", "status", "reason", *labels, "source", "declaration file", ""], rows, id="plugins"),
                tag("h2", "Notices") if notices else "", notices]
        return self.page("Plugins", join(body), "plugins")

    def plugin(self, p: dict[str, Any]) -> Html:
        verdict = p.get("readiness")
        facts = [["status", p["status"]], ["reason", p["reason"] or "-"], ["source", p["source"]],
                 ["root", tag("code", p["root"])],
                 ["declaration file", tag("code", p["declaration"]["file"]) if p["declaration"] else "(none)"],
                 ["member in", ", ".join(p["member_in"]) or "-"],
                 ["memory provider", "yes" if p["memory_provider"] else "no"],
                 ["readiness", "-" if verdict is None else ("ready" if verdict["ready"] else verdict["detail"])]]
        requirements = tag("ul", *(tag("li", tag("code", r)) for r in p["requirements"])) or "none"
        excluded = [tag("li", tag("code", e["requirement"]), f": {e['reason']}") for e in p["excluded"]]
        problems = [tag("li", x, cls="bad") for x in p["problems"]] + [tag("li", w) for w in p["warnings"]]
        member = p["status"] == "member"
        body = [table(["", ""], facts, id="facts"), tag("h2", "Requirements"), requirements,
                tag("h2", "Not installed") if excluded else "", tag("ul", *excluded) if excluded else "",
                tag("h2", "Problems and warnings") if problems else "", tag("ul", *problems) if problems else "",
                self.button("/actions/disable" if member else "/actions/enable", "disable" if member else "enable",
                            name=p["name"])]
        return self.page(f"Plugin {p['name']}", join(body), "plugins")

    # -- readiness and generations ---------------------------------------------------------------

    def readiness(self, data: dict[str, Any]) -> Html:
        head = tag("p", tag("strong", "ready", cls="ok") if data["ready"] else tag("strong", "not ready", cls="bad"),
                   f": generation {data['generation']}" if data["generation"] else ": no generation is selected")
        problems = tag("ul", *(tag("li", x, cls="bad") for x in data["problems"]))
        rows = [[v["name"], tag("span", "ready", cls="ok") if v["ready"] else tag("span", "NOT READY", cls="bad"),
                 v["detail"]] for v in data["plugins"]]
        body = [head, problems, table(["origin", "verdict", "reason"], rows, id="readiness"),
                tag("p", "Judged now from the installed metadata of the selected generation, as `hermes pm check` "
                         "judges it; nothing is installed and no receipt is written.", cls="note")]
        return self.page("Readiness", join(body), "readiness")

    def generations(self, data: dict[str, Any]) -> Html:
        rows = [[tag("code", g["id"]), g["role"] or "", g["created_at"] or "-",
                 "-" if g["packages"] is None else g["packages"], "yes" if g["complete"] else "no (incomplete)",
                 ", ".join(map(str, g["leased_by"])) or "-"] for g in reversed(data["generations"])]
        latest = data["latest_receipt"]
        body = [self.mode(),
                tag("p", "selected: ", tag("code", data["selected"]["id"]) if data["selected"] else "none"),
                table(["generation", "role", "built at", "packages", "complete", "in use by pid"], rows,
                      id="generations"),
                self.button("/actions/rollback", "roll back to the previous generation") if data["previous"]
                else tag("p", "There is no previous generation to roll back to.", cls="note"),
                tag("p", f"latest receipt: {latest['kind']} {latest['outcome']} at {latest['finished_at']} "
                         f"({latest['path']})", cls="note") if latest else ""]
        return self.page("Generations", join(body), "generations")

    # -- the latest refusal ----------------------------------------------------------------------

    def refusal(self, data: dict[str, Any] | None, home: Any) -> Html:
        if data is None:
            return self.page("Latest refusal", tag("p", "No operation has been refused in this home."), "refusal")
        conflict = data.get("conflict")
        told = told_written(data)
        facts = [["operation", f"{data['kind']} ({data['outcome']}, exit {data['exit_code']})"],
                 ["plugin", data.get("candidate") or "-"], ["at", data.get("finished_at", "-")],
                 ["receipt", tag("code", data["receipt_path"])]]
        if conflict:
            partners = [p for p in conflict["plugins"] if p != data.get("candidate")]
            facts.insert(2, ["partners", ", ".join(partners) or "-"])
        body = [self.outcome_box(told, receipt=False), table(["", ""], facts, id="refusal")]
        if conflict:
            body += [tag("h2", "Causes"), table(["package", "requirement", "origin", "via"], [
                [c["package"], tag("code", c["requirement"]), _origin(c["origin"]), c.get("via") or ""]
                for c in conflict["causes"]], id="causes")]
            body += [tag("h2", "Proof"), *(_proof(p) for p in conflict.get("proof", []))]
        body += [tag("h2", "Next steps"), self.steps(data.get("next_steps", []), home)]
        return self.page("Latest refusal", join(body), "refusal")

    def steps(self, steps: list[dict[str, Any]], home: Any) -> Html:
        rows = []
        for step in steps:
            checked = step.get("checked")
            can = checked and runnable(step["command"], home) is not None
            run = self.button("/actions/step", "run", command=step["command"]) if can else tag(
                "span", "run it in a terminal", cls="note")
            rows.append([command(step["command"]), step["why"],
                         "checked" if checked else ("not checked" if checked is False else "-"), run])
        return table(["command", "why", "checked", ""], rows, id="steps") if rows else tag("p", "none")

    # -- graph and providers ---------------------------------------------------------------------

    def graph(self, data: dict[str, Any]) -> Html:
        note = (tag("p", f"Collision from the latest refusal ({data['refused_at']}, plugin "
                         f"{data['candidate'] or '-'}). ", legend(), cls="note") if data["conflict"] else
                tag("p", "No refusal recorded: nothing to highlight.", cls="note"))
        return self.page("Dependency graph", join([note, tag("div", svg(data), id="graph")]), "graph")

    def providers(self, data: dict[str, Any]) -> Html:
        rows = []
        for p in data["providers"]:
            verdict = p["readiness"]
            state = ("shadowed by " + p["shadowed_by"] if p["shadowed_by"] else
                     tag("span", "ready", cls="ok") if verdict["ready"] else tag("span", verdict["reason"], cls="bad"))
            rows.append([link(self.token, f"/providers/{quote(p['name'])}", p["name"]), "yes" if p["selected"] else "",
                         p["source"], state, tag("code", p["root"])])
        body = [tag("p", "memory.provider: ", tag("code", data["memory_provider"] or "(not set)"), f" in {data['config']}"),
                table(["provider", "selected", "source", "readiness", "root"], rows, id="providers")]
        return self.page("Memory providers", join(body), "providers")

    def provider(self, data: dict[str, Any], outcome: Outcome | None = None, values: dict[str, str] | None = None) -> Html:
        verdict = data["readiness"]
        state = tag("p", tag("strong", "ready", cls="ok") if verdict["ready"] else tag("strong", "not ready", cls="bad"),
                    f": {verdict['reason']}")
        body = [self.outcome_box(outcome) if outcome else "", state]
        if data["schema_error"]:
            body.append(tag("p", data["schema_error"], cls="bad"))
        body.append(self.settings_form(data, values or {}))
        return self.page(f"Memory provider {data['name']}", join(body), "providers")

    def settings_form(self, data: dict[str, Any], values: dict[str, str]) -> Html:
        fields = [tag("input", type="hidden", name="token", value=self.token)]
        for f in data["fields"]:
            fields += [tag("label", f["key"], " — ", f.get("description") or "", for_=f"f-{f['key']}"),
                       _input(f, values.get(f["key"], ""), f.get("env_var") in data["stored_secrets"])]
        title = None if self.allow_actions else "read-only: start `hermes dashboard --allow-actions` to save"
        fields.append(tag("p", tag("button", "save settings", type="submit", disabled=not self.allow_actions,
                                   title=title)))
        note = tag("p", "Saved as `hermes memory setup` saves them: secrets to ", tag("code", data["env_file"]),
                   ", the rest through the provider's save_config; an empty field keeps its default or the "
                   "stored secret.", cls="note")
        if not data["fields"]:
            return tag("p", "This provider has no settings.", cls="note")
        return join([note, tag("form", *fields, method="post", action=f"/providers/{quote(data['name'])}?{urlencode({'token': self.token})}",
                                        id="settings")])

    # -- what an action did, and errors ----------------------------------------------------------

    def outcome_box(self, outcome: Outcome, *, receipt: bool = True) -> Html:
        lines = [tag("div", line) for line in outcome.lines]
        if outcome.receipt and receipt:
            lines.append(tag("div", "receipt: ", tag("code", outcome.receipt), cls="note"))
        return tag("div", *lines, cls="notice " + ("done" if outcome.ok else "refused"), id="outcome")

    def result(self, title: str, outcome: Outcome, home: Any) -> Html:
        body = [self.outcome_box(outcome)]
        if outcome.steps:
            body += [tag("h2", "Next steps"), self.steps(list(outcome.steps), home)]
        body.append(tag("p", link(self.token, "/refusal", "latest refusal"), " · ",
                        link(self.token, "/generations", "generations"), " · ", link(self.token, "/plugins", "plugins")))
        return self.page(title, join(body))

    def error(self, title: str, message: str) -> Html:
        return self.page(title, tag("p", message, cls="bad", id="error"))


def _origin(origin: dict[str, Any]) -> Html:
    if origin.get("kind") == "core":
        return esc("core")
    return join([f"plugin {origin.get('plugin')}", tag("br"), tag("code", origin.get("file") or "")])


def _proof(proof: dict[str, Any]) -> Html:
    return tag("div", tag("h3", f"{proof['package']} ({proof['kind']})"),
               tag("ol", *(tag("li", s) for s in proof["steps"])), tag("p", tag("strong", proof["conclusion"])),
               cls="proof")


def _input(field: dict[str, Any], value: str, stored: bool) -> Html:
    name, ident = field["key"], f"f-{field['key']}"
    kind = field.get("type", "text")
    if field.get("secret"):
        hint = "stored in .env (leave empty to keep)" if stored else "not set"
        return tag("input", type="password", name=name, id=ident, value="", placeholder=hint, autocomplete="off")
    if field.get("choices"):
        options = [tag("option", "(default)", value="")]
        options += [tag("option", c, value=c, selected=str(c) == value) for c in field["choices"]]
        return tag("select", *options, name=name, id=ident)
    if kind == "boolean":
        options = [tag("option", label, value=v, selected=v == value) for v, label in
                   (("", "(default)"), ("yes", "yes"), ("no", "no"))]
        return tag("select", *options, name=name, id=ident)
    default = field.get("default")
    return tag("input", type="text", name=name, id=ident, value=value,
               placeholder="" if default is None else f"default {default}", inputmode="numeric" if kind in (
                   "integer", "number") else None)

"""The dashboard in a real headless Chromium over a real home (conftest): every page loads and is
photographed; a colliding plugin is refused with its partner; a provider's form writes what
`hermes memory setup` writes; a checked next step runs; a rollback selects the previous generation.
The tests share one home and run in file order, as an operator would click through."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pm.env import generations
from pm.testing.homes import tree_digest

from .conftest import Served, hermes

PAGES = {"plugins": "Plugins", "readiness": "Readiness", "generations": "Generations",
         "refusal": "Latest refusal", "graph": "Dependency graph", "providers": "Memory providers"}


def visit(browser: Any, url: str) -> Any:
    from selenium.webdriver.common.by import By

    browser.get(url)
    return lambda css: browser.find_elements(By.CSS_SELECTOR, css)


def text(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(browser.find_element(By.TAG_NAME, "body").text)


def shoot(browser: Any, folder: Path, name: str) -> None:
    """A screenshot of the whole page (the window is made as tall as the page, up to 2400 px)."""
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1280, max(700, min(int(height) + 140, 2400)))
    assert browser.save_screenshot(str(folder / f"{name}.png"))


def click(browser: Any, button: Any) -> None:
    """Click a form's button and wait until the answer's page has replaced this one: this document
    is marked first, and the wait ends when the loaded document no longer carries the mark. (Waiting
    for an element to go stale raced with the navigation: chromedriver may answer "node does not
    belong to the document" while the old page is torn down, an error the wait must sit out.)"""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    browser.execute_script("window.__before_click = true")
    button.click()
    WebDriverWait(browser, 60, ignored_exceptions=(WebDriverException,)).until(
        lambda b: b.execute_script("return document.readyState === 'complete' && !window.__before_click"))


def test_every_page_loads(served: Served, browser: Any, screenshots: Path) -> None:
    for path, title in PAGES.items():
        find = visit(browser, served.at(f"/{path}"))
        assert find("h1")[0].text == title, path
        assert "Traceback" not in browser.page_source
        shoot(browser, screenshots, path)
    find = visit(browser, served.at("/plugins"))
    rows = {r.find_elements("css selector", "td")[0].text: r.text for r in find("#plugins tr")[1:]}
    assert "sits out: disabled" in rows["old-tool"] and "member" in rows["calendar"]
    assert "notes-sync" in rows and "plugin.yaml" in rows["weather"]
    click(browser, find("#plugins a")[0])
    assert browser.find_element("css selector", "h1").text.startswith("Plugin ")
    find = visit(browser, served.at("/readiness"))
    assert "ready" in find("main p")[0].text and "calendar" in text(browser)
    find = visit(browser, served.at("/generations"))
    assert len(find("#generations tr")) == 3  # the header, the sync's generation, calendar's


def test_enabling_a_colliding_plugin_shows_the_refusal_and_its_partner(served: Served, browser: Any,
                                                                       screenshots: Path) -> None:
    config = (served.home / "config.yaml").read_bytes()
    selected = generations.read_state(served.home)["selected"]
    plugins = tree_digest(served.home / "plugins")
    find = visit(browser, served.at("/plugins/charts"))
    click(browser, find("form[action^='/actions/enable?'] button")[0])
    said = browser.find_element("css selector", "#outcome").text
    receipt = served.receipt()
    assert (receipt["kind"], receipt["outcome"], receipt["candidate"]) == ("admit", "conflict", "charts")
    partners = [p for p in receipt["conflict"]["plugins"] if p != "charts"]
    assert partners and all(p in said for p in partners)
    assert said.splitlines()[:2] == ["conflict: plugin 'charts' cannot be added", receipt["conflict"]["message"]]
    assert "config.yaml was not changed; the selected generation is unchanged" in said
    assert f"receipt: {receipt['receipt_path']}" in said
    assert (served.home / "config.yaml").read_bytes() == config
    assert generations.read_state(served.home)["selected"] == selected
    assert tree_digest(served.home / "plugins") == plugins

    find = visit(browser, served.at("/refusal"))
    facts = browser.find_element("css selector", "#refusal").text
    assert "plugin charts" in facts and f"partners {', '.join(partners)}" in facts
    causes = browser.find_element("css selector", "#causes").text
    assert all(c["requirement"] in causes for c in receipt["conflict"]["causes"])
    assert [p.text.splitlines()[0] for p in find(".proof")] == [
        f"{p['package']} ({p['kind']})" for p in receipt["conflict"]["proof"]]
    steps = browser.find_element("css selector", "#steps").text
    assert all(s["command"] in steps for s in receipt["next_steps"])
    shoot(browser, screenshots, "refusal")

    find = visit(browser, served.at("/graph"))
    colliding = {c["package"] for c in receipt["conflict"]["causes"]}
    boxes = [b.text for b in find("svg g")]
    drawn = {t.split()[0] for t, b in zip(boxes, find("svg g rect"), strict=True) if "collision" in b.get_attribute("class")}
    assert drawn == colliding
    assert find("svg path.clash.candidate")  # the refused candidate's requirement, dashed
    shoot(browser, screenshots, "graph")


def test_a_checked_next_step_runs_the_same_operation(served: Served, browser: Any) -> None:
    refused = served.receipt()
    step = next(s for s in refused["next_steps"] if s.get("checked") and " disable " in s["command"])
    find = visit(browser, served.at("/refusal"))
    row = next(r for r in find("#steps tr") if step["command"] in r.text)
    click(browser, row.find_element("css selector", "button"))
    said = browser.find_element("css selector", "#outcome").text
    receipt = served.receipt()
    assert (receipt["kind"], receipt["outcome"]) == ("disable", "ok")
    assert said.startswith(receipt["message"]) and receipt["receipt_path"] in said


def fill(browser: Any, values: dict[str, str]) -> None:
    from selenium.webdriver.support.ui import Select

    for key, value in values.items():
        element = browser.find_element("css selector", f"#f-{key}")
        if element.tag_name == "select":
            Select(element).select_by_value(value)
        else:
            element.clear()
            element.send_keys(value)
    click(browser, browser.find_element("css selector", "#settings button"))


SECRET = "s3cr3t-from-the-browser"


def settings_files(home: Path) -> dict[str, str]:
    """Everything in the home but pm's own folder (setup activates the generation: a lease there)."""
    return {k: v for k, v in tree_digest(home).items() if not k.startswith("pm/") and k != "pm"}


def test_a_wrong_type_shows_the_schema_error_and_writes_nothing(served: Served, browser: Any,
                                                               screenshots: Path) -> None:
    before = settings_files(served.home)
    visit(browser, served.at("/providers/vault"))
    shoot(browser, screenshots, "provider-settings")
    fill(browser, {"api_key": SECRET, "max_items": "many"})
    said = browser.find_element("css selector", "#outcome").text
    assert said == "error: setting 'max_items': expected integer, got 'many'"
    assert browser.find_element("css selector", "#f-max_items").get_attribute("value") == "many"
    assert browser.find_element("css selector", "#f-api_key").get_attribute("value") == ""  # never sent back
    assert settings_files(served.home) == before


def test_the_settings_form_writes_what_memory_setup_writes(served: Served, browser: Any, tmp_path: Path) -> None:
    twin = tmp_path / "twin"  # the CLI's run, on a copy of the home as it is now
    shutil.copytree(served.home, twin, symlinks=True, ignore=shutil.ignore_patterns("pm"))
    visit(browser, served.at("/providers/vault"))
    fill(browser, {"api_key": SECRET, "region": "us", "max_items": "7", "verbose": "yes"})
    said = browser.find_element("css selector", "#outcome").text
    hermes({**served.env, "HERMES_HOME": str(twin)}, "memory", "setup", "vault", "--set", f"api_key={SECRET}",
           "--set", "region=us", "--set", "max_items=7", "--set", "verbose=yes")
    for name in (".env", "config.yaml", "memory/vault.json"):
        assert (served.home / name).read_bytes() == (twin / name).read_bytes(), name
    assert f"VAULT_API_KEY={SECRET}" in (served.home / ".env").read_text()
    assert json.loads((served.home / "memory/vault.json").read_text()) == {
        "max_items": 7, "region": "us", "verbose": True}
    assert "memory provider 'vault' set up" in said and SECRET not in browser.page_source
    visit(browser, served.at("/providers/vault"))
    assert "stored in .env" in browser.find_element("css selector", "#f-api_key").get_attribute("placeholder")


def test_rollback_selects_the_previous_generation(served: Served, browser: Any) -> None:
    state = generations.read_state(served.home)
    find = visit(browser, served.at("/generations"))
    click(browser, find("form[action^='/actions/rollback?'] button")[0])
    said = browser.find_element("css selector", "#outcome").text
    after = generations.read_state(served.home)
    assert after["selected"] == state["previous"]
    receipt = served.receipt()
    assert (receipt["kind"], receipt["outcome"]) == ("rollback", "ok") and said.startswith(receipt["message"])
    # post/redirect/get: the page shown is a result to read, and reloading it rolls nothing back again
    assert "/results/" in browser.current_url
    browser.refresh()
    assert browser.find_element("css selector", "#outcome").text == said
    assert generations.read_state(served.home)["selected"] == after["selected"]
    assert served.receipt()["finished_at"] == receipt["finished_at"]
    find = visit(browser, served.at("/generations"))
    row = next(r.text for r in find("#generations tr") if after["selected"] in r.text)
    assert "selected" in row


@pytest.mark.parametrize("page", ["plugins", "refusal"])
def test_pages_after_the_actions_still_load(served: Served, browser: Any, page: str) -> None:
    visit(browser, served.at(f"/{page}"))
    assert browser.find_element("css selector", "h1").text == PAGES[page]

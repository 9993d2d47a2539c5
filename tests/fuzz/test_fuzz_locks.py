"""Generated locks: pins with odd names, URLs, hashes and sizes are either refused (Pin.defects)
or become exactly one requirement line each, naming that pin and nothing else — never a second
requirement smuggled into the text uv reads."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement

from pm.base.errors import PmError
from pm.env.build import requirements_text
from pm.records.sections import resolution_from_json
from pm.resolver.model import Resolution

_NAMES = st.one_of(st.sampled_from(["alpha", "beta-two", "gamma.x"]), st.text(min_size=1, max_size=12))
_URL_TAILS = st.one_of(
    st.just(""),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from([" --hash=sha256:" + "0" * 64, "\nother @ file:///tmp/other-6.6.6-py3-none-any.whl",
                     "#egg=x", "\r\n", "\x00", "%0Aother", "?x=1 y"]),
)
_SCHEMES = st.sampled_from(["https://files.example/", "http://127.0.0.1/", "file:///w/", "ftp://x/", "javascript:"])
_SHAS = st.one_of(st.just("ab" * 32), st.text(max_size=70))
_SIZES = st.one_of(st.none(), st.integers(min_value=-5, max_value=10**12))


def _pin_json(name: str, scheme: str, tail: str, sha: str, size: int | None) -> dict[str, Any]:
    filename = "alpha-1.0-py3-none-any.whl"
    return {"name": name, "version": "1.0", "required_by": [],
            "file": {"filename": filename, "url": f"{scheme}{filename}{tail}", "sha256": sha, "size": size}}


@settings(max_examples=300, deadline=None)
@given(_NAMES, _SCHEMES, _URL_TAILS, _SHAS, _SIZES)
def test_a_pin_is_refused_or_is_exactly_one_requirement(name: str, scheme: str, tail: str, sha: str,
                                                        size: int | None) -> None:
    try:
        resolution = resolution_from_json({"packages": [_pin_json(name, scheme, tail, sha, size)]})
    except (ValueError, TypeError, KeyError):
        return  # not even a pin (an invalid version or file name): nothing reaches uv
    (pin,) = resolution.pins
    if pin.defects():
        try:
            requirements_text(Resolution((pin,)))
        except PmError:
            return
        raise AssertionError(f"a pin with defects {pin.defects()} was written for uv")
    text = requirements_text(Resolution((pin,)))
    lines = text.splitlines()
    assert len(lines) == 1 and text.endswith("\n") and "\r" not in text, text
    requirement, _, hashes = lines[0].partition(" --hash=")
    parsed = Requirement(requirement)
    assert parsed.name == pin.name and parsed.url == pin.link.url
    assert hashes == f"sha256:{pin.link.sha256}"


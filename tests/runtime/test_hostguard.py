"""The one Host/Origin guard of the web UI and the NPC server: how it reads a Host and an Origin."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.hostguard import AllowedHosts

ANY_PORT = AllowedHosts.of(["localhost", "[::1]", "Game.Example."], origins=["https://ui.test/"])
ON_8080 = AllowedHosts.of(["localhost", "127.0.0.1"], 8080)


def test_a_name_is_served_on_any_port_or_on_its_own() -> None:
    assert ANY_PORT.allows_host("game.example:443") and ANY_PORT.allows_host("[::1]")
    assert ANY_PORT.allows_host("LOCALHOST.:9")
    assert not ANY_PORT.allows_host("rebind.attacker.example") and not ANY_PORT.allows_host(None)
    assert ON_8080.allows_host("localhost:8080") and not ON_8080.allows_host("localhost:8081")
    assert not ON_8080.allows_host("localhost")  # port 80
    assert AllowedHosts.of(["localhost"], 80).allows_host("localhost")


def test_an_origin_is_the_servers_own_only_under_its_names_on_the_port_asked() -> None:
    assert ANY_PORT.allows_origin(None, "localhost:9")
    assert ANY_PORT.allows_origin("https://UI.test", "localhost:9")
    assert ANY_PORT.allows_origin("http://localhost:9", "[::1]:9")
    assert not ANY_PORT.allows_origin("http://localhost:10", "localhost:9")
    assert not ANY_PORT.allows_origin(
        "http://rebind.attacker.example:9", "rebind.attacker.example:9"
    )
    assert not ANY_PORT.allows_origin("null", "localhost:9")
    assert ON_8080.allows_origin("http://127.0.0.1:8080", "localhost:8080")
    assert not ON_8080.allows_origin("https://localhost", "localhost:8080")


@given(st.text(max_size=40), st.text(max_size=40))
def test_any_header_text_gets_an_answer_never_an_error(host: str, origin: str) -> None:
    for hosts in (ANY_PORT, ON_8080):
        assert isinstance(hosts.allows_host(host), bool)
        assert isinstance(hosts.allows_origin(origin, host), bool)

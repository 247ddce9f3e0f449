"""Unit tests of the destination policy (newscrawl/algorithms/destination.py)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, strategies as st

from newscrawl.algorithms.destination import (AllowList, address_refusal, host_refusal,
                                              literal_address, literal_refusal,
                                              parse_ipv4_number, redirect_allowed)

ip = ipaddress.ip_address


@pytest.mark.parametrize("host, address", [
    ("167772161", "10.0.0.1"), ("0x7f.1", "127.0.0.1"), ("017700000001", "127.0.0.1"),
    ("127.1", "127.0.0.1"), ("0x7f.0.0.9", "127.0.0.9"), ("0177.0.0.011", "127.0.0.9"),
    ("0xA9.254.169.254", "169.254.169.254"), ("10.0.0.1.", "10.0.0.1"), ("0", "0.0.0.0"),
    ("4294967295", "255.255.255.255"),
])
def test_numeric_hosts_are_read_as_a_resolver_reads_them(host, address):
    assert parse_ipv4_number(host) == ip(address)


@pytest.mark.parametrize("host", ["news.example", "1.2.3.4.5", "256.0.0.1", "4294967296", "08.1",
                                  "1e3", "", "0x1g", "127.0.0.1a"])
def test_names_and_out_of_range_numbers_are_not_addresses(host):
    assert parse_ipv4_number(host) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_spelling_of_an_address_gives_the_address(value):
    address = ipaddress.IPv4Address(value)
    assert parse_ipv4_number(str(value)) == address
    assert parse_ipv4_number(hex(value)) == address
    assert parse_ipv4_number(".".join(oct(b).replace("0o", "0") for b in address.packed)) == address


@given(st.text(max_size=30))
def test_parsing_never_raises(text):
    parse_ipv4_number(text)
    literal_address(text)
    literal_refusal(text, AllowList())


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.9", "loopback"), ("::1", "loopback"), ("10.1.2.3", "private"),
    ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("169.254.169.254", "link_local"),
    ("fe80::1", "link_local"), ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("100.64.0.1", "non_global"),
    ("fc00::1", "private"), ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"),
    ("2002:a9fe:a9fe::", "link_local"), ("64:ff9b::a00:1", "private"),
    ("93.184.216.34", None), ("2606:2800:220:1::", None),
])
def test_address_refusals(address, reason):
    assert address_refusal(ip(address)) == reason


def test_allow_list_by_name_address_and_network():
    allow = AllowList.parse(" Intranet.Example. , 127.0.0.1, 10.1.0.0/16,[::1]")
    assert allow.names == {"intranet.example"}
    assert host_refusal("intranet.example", [ip("10.9.9.9")], allow) is None
    assert host_refusal("x", [ip("127.0.0.1")], allow) is None
    assert host_refusal("x", [ip("127.0.0.9")], allow) == "loopback"
    assert host_refusal("x", [ip("10.1.200.3")], allow) is None
    assert host_refusal("x", [ip("10.2.0.1")], allow) == "private"
    assert host_refusal("x", [ip("::1")], allow) is None
    assert host_refusal("x", [ip("::ffff:127.0.0.1")], allow) is None
    # every address of a name must pass
    assert host_refusal("x", [ip("93.184.216.34"), ip("10.2.0.1")], allow) == "private"
    with pytest.raises(ValueError, match="bad network"):
        AllowList.parse("10.0.0.0/33")


def test_literal_check_judges_numbers_and_localhost_only():
    allow = AllowList.parse("127.0.0.1")
    assert literal_refusal("0x7f.1", allow) is None
    assert literal_refusal("0x7f.0.0.2", allow) == "loopback"
    assert literal_refusal("167772161", allow) == "private"
    assert literal_refusal("[::1]", allow) == "loopback"
    assert literal_refusal("LOCALHOST", allow) == "loopback"
    assert literal_refusal("db.localhost", allow) == "loopback"
    assert literal_refusal("www.example.com", allow) is None
    assert literal_refusal("localhost", AllowList.parse("localhost")) is None


def test_redirects_stay_on_the_site_or_go_to_an_entry_site():
    assert redirect_allowed("www.zeit.de", "zeit.de", [])
    assert redirect_allowed("news.sina.com.cn", "finance.sina.com.cn", [])
    assert not redirect_allowed("news.sina.com.cn", "sohu.com", [])
    assert redirect_allowed("news.sina.com.cn", "www.sohu.com", ["sohu.com"])
    assert not redirect_allowed("127.0.0.1", "127.0.0.9", ["127.0.0.1"])

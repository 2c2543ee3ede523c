#!/usr/bin/env python3
"""The Python tools netops use today, driving netgw-lab's IOS simulator (scripts/bench.sh).

    peers.py TOOL --inventory INV.yml --concurrency N [--work DIR]

TOOL: scrapli, netmiko, nornir (IOS, SSH CLI); scrapli-nxos, netmiko-nxos (NX-OS, SSH CLI); pyeapi
(EOS, eAPI over HTTPS); ncclient (Junos, NETCONF over SSH); bigrest (F5 BIG-IP, iControl REST over HTTPS).

Every tool does, per device, what `netgw converge` does in substance (docs/bench.md):
  facts      show version, show vlan brief, show interfaces switchport  (parsed with TextFSM /
             ntc-templates, as these tools' users do: `use_textfsm=True`, `textfsm_parse_output()`)
  change     one VLAN (vlan 100 / name bench) and one interface description (Ethernet0/1)
  read-back  show vlan brief, show running-config interface Ethernet0/1, checked for the change
The other vendors' peers do the same per device in their platform's terms (see each runner below).
Host keys and certificates are NOT checked by these peers (scrapli auth_strict_key=False, Netmiko's
default AutoAddPolicy, ncclient hostkey_verify=False, pyeapi's unverified HTTPS context): accepted for
the benchmark and said so in docs/bench.md. netgw, the floors and bigrest (against the lab CA) check them.

Prints one JSON object: {"tool", "hosts", "ok", "failed", "wall_secs", "errors": [first 10]}.
"""
import argparse
import json
import sys
import time

import yaml

FACTS = ["show version", "show vlan brief", "show interfaces switchport"]
CONFIG = ["vlan 100", "name bench", "interface Ethernet0/1", "description bench uplink"]
READBACK = ["show vlan brief", "show running-config interface Ethernet0/1"]
# NX-OS: the same in its words (the NX-OS simulator's `show interface switchport`, port Ethernet1/1).
NXOS_FACTS = ["show version", "show vlan brief", "show interface switchport"]
NXOS_CONFIG = ["vlan 100", "name bench", "interface Ethernet1/1", "description bench uplink"]
NXOS_READBACK = ["show vlan brief", "show running-config interface Ethernet1/1"]


def check_readback(vlans: str, run_if: str) -> None:
    if not any(l.split()[:2] == ["100", "bench"] for l in vlans.splitlines() if l.strip()):
        raise RuntimeError("read-back: VLAN 100 'bench' missing")
    if "description bench uplink" not in run_if:
        raise RuntimeError("read-back: description missing")


def hosts_of(path, conn="ssh"):
    inv = yaml.safe_load(open(path))
    out = []
    for name, h in sorted(inv["hosts"].items()):
        opts = h.get("connection_options") or {}
        if conn not in opts:
            continue
        out.append((name, (opts[conn] or {}).get("port") or h["port"], h["username"], h["password"]))
    return out


# ---- scrapli (asyncio, asyncssh transport) ---------------------------------------------------
def run_scrapli(hosts, conc, nxos=False):
    import asyncio
    from scrapli.driver.core import AsyncIOSXEDriver, AsyncNXOSDriver

    facts, config, readback = (NXOS_FACTS, NXOS_CONFIG, NXOS_READBACK) if nxos else (FACTS, CONFIG, READBACK)
    driver = AsyncNXOSDriver if nxos else AsyncIOSXEDriver

    async def one(h, sem):
        name, port, user, pw = h
        async with sem:
            conn = driver(
                host="127.0.0.1",
                port=port,
                auth_username=user,
                auth_password=pw,
                auth_secondary=pw,
                auth_strict_key=False,
                transport="asyncssh",
                timeout_socket=60,
                timeout_transport=120,
                timeout_ops=60,
            )
            async with conn:
                got = await conn.send_commands(facts)
                for r in got:
                    r.raise_for_status()
                    r.textfsm_parse_output()
                cfg = await conn.send_configs(config)
                cfg.raise_for_status()
                rb = await conn.send_commands(readback)
                rb.raise_for_status()
                check_readback(rb[0].result, rb[1].result)

    async def main():
        sem = asyncio.Semaphore(conc)
        res = await asyncio.gather(*(one(h, sem) for h in hosts), return_exceptions=True)
        return [(h[0], r) for h, r in zip(hosts, res) if isinstance(r, BaseException)]

    return asyncio.run(main())


# ---- Netmiko with a thread pool ---------------------------------------------------------------
def netmiko_one(h, nxos=False):
    from netmiko import ConnectHandler

    facts, config, readback = (NXOS_FACTS, NXOS_CONFIG, NXOS_READBACK) if nxos else (FACTS, CONFIG, READBACK)
    name, port, user, pw = h
    conn = ConnectHandler(
        device_type="cisco_nxos" if nxos else "cisco_ios",
        host="127.0.0.1",
        port=port,
        username=user,
        password=pw,
        secret=pw,
        conn_timeout=60,
        auth_timeout=60,
        banner_timeout=60,
    )
    try:
        for c in facts:
            conn.send_command(c, use_textfsm=True)
        conn.send_config_set(config)
        vl = conn.send_command(readback[0])
        ri = conn.send_command(readback[1])
        check_readback(vl, ri)
    finally:
        conn.disconnect()


def run_pool(one, hosts, conc):
    """`one(host)` for every host in a pool of `conc` threads; the failures."""
    from concurrent.futures import ThreadPoolExecutor

    errs = []
    with ThreadPoolExecutor(max_workers=conc) as ex:
        futs = {ex.submit(one, h): h[0] for h in hosts}
        for f, name in futs.items():
            try:
                f.result()
            except Exception as e:  # noqa: BLE001 - a failed host never stops the others
                errs.append((name, e))
    return errs


def run_netmiko(hosts, conc, nxos=False):
    return run_pool(lambda h: netmiko_one(h, nxos), hosts, conc)


# ---- pyeapi (EOS eAPI over HTTPS), thread pool ----------------------------------------------------
def pyeapi_one(h):
    import pyeapi

    name, port, user, pw = h
    # pyeapi's HTTPS transport does not check the certificate (an unverified SSL context).
    node = pyeapi.connect(
        transport="https", host="127.0.0.1", port=port, username=user, password=pw, timeout=60,
        return_node=True,
    )
    # facts: what its users read (pyeapi's own parsers run `show running-config all`)
    node.enable(["show version", "show vlan", "show interfaces switchport"])
    node.api("vlans").getall()
    node.config(["vlan 100", "name bench", "interface Ethernet1", "description bench uplink"])
    vl = node.api("vlans").get("100")
    intf = node.api("interfaces").get("Ethernet1")
    if not vl or vl.get("name") != "bench":
        raise RuntimeError("read-back: VLAN 100 'bench' missing")
    if not intf or intf.get("description") != "bench uplink":
        raise RuntimeError("read-back: description missing")


# ---- ncclient (Junos NETCONF), thread pool -----------------------------------------------------------
JUNOS_CHANGE = """<config><configuration>
<vlans><vlan><name>bench</name><vlan-id>100</vlan-id></vlan></vlans>
<interfaces><interface><name>ge-0/0/1</name><description>bench uplink</description></interface></interfaces>
</configuration></config>"""


def ncclient_one(h):
    from ncclient import manager

    name, port, user, pw = h
    with manager.connect(
        host="127.0.0.1", port=port, username=user, password=pw, hostkey_verify=False,
        allow_agent=False, look_for_keys=False, device_params={"name": "junos"}, timeout=60,
    ) as m:
        # facts as PyEZ gathers them: software, chassis, interfaces, VLANs
        for rpc in ("get-software-information", "get-chassis-inventory", "get-vlan-information"):
            m.rpc(f"<{rpc}/>")
        m.rpc("<get-interface-information><terse/></get-interface-information>")
        m.lock(target="candidate")
        try:
            m.edit_config(target="candidate", config=JUNOS_CHANGE, default_operation="merge")
            m.commit()
        finally:
            m.unlock(target="candidate")
        cfg = m.get_config(source="running").data_xml
        if "<name>bench</name>" not in cfg or "bench uplink" not in cfg:
            raise RuntimeError("read-back: the VLAN or the description is missing")


# ---- bigrest (F5 BIG-IP iControl REST over HTTPS), thread pool ------------------------------------
def bigrest_one(h, ca):
    from bigrest.bigip import BIGIP

    name, port, user, pw = h
    # One token login (as netgw), one requests session (keep-alive); the certificate is checked against
    # the lab CA, as netgw checks it (`session_verify` is handed to requests' `verify`).
    dev = BIGIP(f"127.0.0.1:{port}", user, pw, request_token=True, session_verify=ca, timeout=60)
    # facts: what its users read (the version, interfaces and VLANs)
    for path in ("/mgmt/tm/sys/version", "/mgmt/tm/net/interface", "/mgmt/tm/net/vlan"):
        dev.load(path)
    # the change in one iControl transaction (bigrest's `with`: create, then commit at the end)
    with dev:
        dev.create("/mgmt/tm/net/vlan", {"name": "bench", "partition": "Common", "tag": 100})
        dev.modify("/mgmt/tm/net/interface/1.1", {"description": "bench uplink"})
    vl = dev.load("/mgmt/tm/net/vlan/~Common~bench")
    intf = dev.load("/mgmt/tm/net/interface/1.1")
    if vl.properties.get("tag") != 100:
        raise RuntimeError("read-back: VLAN 100 'bench' missing")
    if intf.properties.get("description") != "bench uplink":
        raise RuntimeError("read-back: description missing")


# ---- Nornir + nornir_netmiko ---------------------------------------------------------------------
def run_nornir(hosts, conc, work):
    import os

    from nornir import InitNornir
    from nornir.core.task import Result, Task
    from nornir_netmiko.tasks import netmiko_send_command, netmiko_send_config

    os.makedirs(work, exist_ok=True)
    hf = os.path.join(work, "nornir-hosts.yaml")
    with open(hf, "w") as f:
        yaml.safe_dump(
            {
                n: {
                    "hostname": "127.0.0.1",
                    "port": p,
                    "username": u,
                    "password": pw,
                    "platform": "cisco_ios",
                    "connection_options": {"netmiko": {"extras": {"secret": pw, "conn_timeout": 60, "auth_timeout": 60, "banner_timeout": 60}}},
                }
                for n, p, u, pw in hosts
            },
            f,
        )
    nr = InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": conc}},
        inventory={"plugin": "SimpleInventory", "options": {"host_file": hf}},
        logging={"enabled": False},
    )

    def job(task: Task) -> Result:
        for c in FACTS:
            task.run(task=netmiko_send_command, command_string=c, use_textfsm=True)
        task.run(task=netmiko_send_config, config_commands=CONFIG)
        vl = task.run(task=netmiko_send_command, command_string=READBACK[0]).result
        ri = task.run(task=netmiko_send_command, command_string=READBACK[1]).result
        check_readback(vl, ri)
        return Result(host=task.host, changed=True)

    res = nr.run(task=job)
    nr.close_connections()
    errs = []
    for name, mr in res.items():
        if mr.failed:
            exc = next((r.exception for r in mr if r.exception), None)
            errs.append((name, exc or "failed"))
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "tool",
        choices=["scrapli", "netmiko", "nornir", "scrapli-nxos", "netmiko-nxos", "pyeapi", "ncclient", "bigrest"],
    )
    ap.add_argument("--inventory", required=True)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--work", default=".")
    a = ap.parse_args()
    conn = {"pyeapi": "eapi", "ncclient": "netconf", "bigrest": "rest"}.get(a.tool, "ssh")
    hosts = hosts_of(a.inventory, conn)
    t0 = time.monotonic()
    if a.tool in ("scrapli", "scrapli-nxos"):
        errs = run_scrapli(hosts, a.concurrency, nxos=a.tool.endswith("-nxos"))
    elif a.tool in ("netmiko", "netmiko-nxos"):
        errs = run_netmiko(hosts, a.concurrency, nxos=a.tool.endswith("-nxos"))
    elif a.tool == "pyeapi":
        # node.api() imports its modules on first use: import them before the threads race to.
        import pyeapi.api.interfaces  # noqa: F401
        import pyeapi.api.vlans  # noqa: F401

        errs = run_pool(pyeapi_one, hosts, a.concurrency)
    elif a.tool == "ncclient":
        errs = run_pool(ncclient_one, hosts, a.concurrency)
    elif a.tool == "bigrest":
        import bigrest.bigip  # noqa: F401 - imported once, before the threads race to

        import os

        # requests lets these variables override a session's `verify` (psf/requests#3829): the lab CA
        # would be replaced by the system bundle.
        for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
            os.environ.pop(var, None)
        inv = yaml.safe_load(open(a.inventory))["hosts"]
        ca = {n: inv[n]["data"]["netgw"]["tls_ca"] for n, *_ in hosts}
        errs = run_pool(lambda h: bigrest_one(h, ca[h[0]]), hosts, a.concurrency)
    else:
        errs = run_nornir(hosts, a.concurrency, a.work)
    wall = time.monotonic() - t0
    print(
        json.dumps(
            {
                "tool": a.tool,
                "hosts": len(hosts),
                "ok": len(hosts) - len(errs),
                "failed": len(errs),
                "wall_secs": round(wall, 3),
                "errors": [f"{n}: {type(e).__name__}: {e}"[:300] for n, e in errs[:10]],
            }
        )
    )
    sys.exit(0 if not errs else 1)


if __name__ == "__main__":
    main()

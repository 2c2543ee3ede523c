"""Read a Junos device with Juniper's PyEZ (junos-eznc) over NETCONF and print what it found as JSON:
its facts (hostname, model, version, serialnumber), PhyPortTable (the physical ports, with PyEZ's own
interface-name pattern), LLDPNeighborTable and LacpPortTable (per LACP aggregate, each member's receive,
transmit and mux states).
Usage: pyez_read.py HOST PORT USERNAME PASSWORD (the host key is not checked, as PyEZ does by default)."""
import json
import sys

from jnpr.junos import Device
from jnpr.junos.op.lacp import LacpPortTable
from jnpr.junos.op.lldp import LLDPNeighborTable
from jnpr.junos.op.phyport import PhyPortTable

host, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
dev = Device(host=host, port=port, user=user, passwd=password, gather_facts=False, timeout=30)
dev.open()
try:
    facts = {k: dev.facts[k] for k in ("hostname", "model", "version", "serialnumber")}
    ports = {
        p.name: {
            "oper": p.oper,
            "admin": p.admin,
            "description": p.description,
            "mtu": p.mtu,
            "macaddr": p.macaddr,
        }
        for p in PhyPortTable(dev).get()
    }
    lldp = {
        n.local_int: {
            "remote_sysname": n.remote_sysname,
            "remote_port_id": n.remote_port_id,
            "remote_chassis_id": n.remote_chassis_id,
        }
        for n in LLDPNeighborTable(dev).get()
    }
    lacp = {
        a.name: {p.name: {"rx_state": p.rx_state, "tx_state": p.tx_state, "mx_state": p.mx_state} for p in a.proto}
        for a in LacpPortTable(dev).get()
    }
finally:
    dev.close()
print(json.dumps({"facts": facts, "ports": ports, "lldp": lldp, "lacp": lacp}, default=str))

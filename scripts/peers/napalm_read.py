"""Read a device with NAPALM and print what it found as JSON: {"interfaces_ip": get_interfaces_ip(),
"lag_members": {MEMBER: AGGREGATE}, "trunk_vlans": {INTERFACE: "100,110"}}. NAPALM has no getter for
aggregate members or trunks; they come from the driver's own session: IOS `show etherchannel summary` /
`show interfaces switchport` and NX-OS `show port-channel summary` / `show interface switchport` through
Netmiko with `use_textfsm` (ntc-templates; the bundled members only), names expanded by NAPALM's
`canonical_interface_name`; EOS, pyeapi's `interfaces` and `switchports` APIs (the active members, the
trunks' allowed VLANs); Junos, PyEZ's `LacpPortTable` (the members collecting and distributing) and
`get_config` of the interfaces and VLANs (unit 0's `ethernet-switching` VLAN members).
Usage: napalm_read.py DRIVER HOST PORT USERNAME PASSWORD (e.g. `junos 127.0.0.1 2830 admin admin`;
host keys and the eAPI certificate are not checked, as NAPALM's drivers do by default)."""
import json
import sys

from jnpr.junos.op.lacp import LacpPortTable
from napalm import get_network_driver
from napalm.base.helpers import canonical_interface_name

SUMMARY = {"ios": "show etherchannel summary", "nxos_ssh": "show port-channel summary"}
SWITCHPORT = {"ios": "show interfaces switchport", "nxos_ssh": "show interface switchport"}


def parsed(command):
    """`command`'s rows as ntc-templates parses them (Netmiko's `use_textfsm`)."""
    rows = device.device.send_command(command, use_textfsm=True)
    if not isinstance(rows, list):
        raise SystemExit(f"ntc-templates could not parse `{command}`:\n{rows}")
    return rows


def junos_trunk_vlans(interfaces):
    """The VLAN ids each Junos interface's unit 0 carries, its members resolved through `vlans`."""
    vlans = device.device.rpc.get_config(filter_xml="vlans")
    ids = {v.findtext("name"): v.findtext("vlan-id") for v in vlans.xpath("vlans/vlan")}
    out = {}
    for i in interfaces.xpath("interfaces/interface[unit/family/ethernet-switching]"):
        members = i.xpath("unit[name='0']/family/ethernet-switching/vlan/members/text()")
        out[i.findtext("name")] = ",".join(ids.get(m, m) for m in members)
    return out


driver, host, port, user, password = sys.argv[1:6]
optional = {"port": int(port)}
if driver == "eos":
    optional["transport"] = "https"
device = get_network_driver(driver)(host, user, password, timeout=60, optional_args=optional)
device.open()
try:
    out = {"interfaces_ip": device.get_interfaces_ip(), "lag_members": {}}
    if driver in SUMMARY:
        for r in parsed(SUMMARY[driver]):
            for m, flags in zip(r["member_interface"], r["member_interface_status"]):
                if "P" in flags:  # bundled in the port-channel
                    out["lag_members"][canonical_interface_name(m)] = canonical_interface_name(r["bundle_name"])
        out["trunk_vlans"] = {}
        for r in parsed(SWITCHPORT[driver]):
            vlans = r["trunking_vlans"]
            vlans = vlans if isinstance(vlans, str) else ",".join(vlans)
            out["trunk_vlans"][canonical_interface_name(r["interface"])] = vlans
    elif driver == "eos":
        # pyeapi, the eAPI client NAPALM's driver holds: its own parsers of the running configuration
        # and of `show port-channel N all-ports` (the active members).
        node = device.device
        for name, i in node.api("interfaces").getall().items():
            for m in i.get("members", []) if i.get("type") == "portchannel" else []:
                out["lag_members"][m] = name
        out["trunk_vlans"] = {
            name: sp["trunk_allowed_vlans"] for name, sp in node.api("switchports").getall().items()
        }
    elif driver == "junos":
        # PyEZ's LacpPortTable (`show lacp interfaces`): the members whose own (Actor) end collects
        # and distributes.
        for lag in LacpPortTable(device.device).get():
            for (member, role), state in lag.state.items():
                if role == "Actor" and dict(state)["distributing"]:
                    out["lag_members"][member] = lag.name
        config = device.device.rpc.get_config(filter_xml="interfaces")
        out["trunk_vlans"] = junos_trunk_vlans(config)
finally:
    device.close()
print(json.dumps(out))

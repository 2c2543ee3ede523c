"""Read a device with NAPALM and print what it found as JSON: {"interfaces_ip": get_interfaces_ip(),
"lag_members": {MEMBER: AGGREGATE}} and, for EOS, "trunk_vlans": {INTERFACE: "100,110"}. NAPALM has no
getter for aggregate members; they come from the driver's own session: IOS `show etherchannel summary`
and NX-OS `show port-channel summary` through Netmiko with `use_textfsm` (ntc-templates; the bundled
members only), names expanded by NAPALM's `canonical_interface_name`; EOS, pyeapi's `interfaces` and
`switchports` APIs (the active members, the trunks' allowed VLANs); Junos, PyEZ's `get_config` of the
interfaces (each member's `802.3ad` bundle).
Usage: napalm_read.py DRIVER HOST PORT USERNAME PASSWORD (e.g. `junos 127.0.0.1 2830 admin admin`;
host keys and the eAPI certificate are not checked, as NAPALM's drivers do by default)."""
import json
import sys

from napalm import get_network_driver
from napalm.base.helpers import canonical_interface_name

SUMMARY = {"ios": "show etherchannel summary", "nxos_ssh": "show port-channel summary"}

driver, host, port, user, password = sys.argv[1:6]
optional = {"port": int(port)}
if driver == "eos":
    optional["transport"] = "https"
device = get_network_driver(driver)(host, user, password, timeout=60, optional_args=optional)
device.open()
try:
    out = {"interfaces_ip": device.get_interfaces_ip(), "lag_members": {}}
    if driver in SUMMARY:
        rows = device.device.send_command(SUMMARY[driver], use_textfsm=True)
        if not isinstance(rows, list):
            raise SystemExit(f"ntc-templates could not parse `{SUMMARY[driver]}`:\n{rows}")
        for r in rows:
            for m, flags in zip(r["member_interface"], r["member_interface_status"]):
                if "P" in flags:  # bundled in the port-channel
                    out["lag_members"][canonical_interface_name(m)] = canonical_interface_name(r["bundle_name"])
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
        config = device.device.rpc.get_config(filter_xml="interfaces")
        for i in config.xpath("interfaces/interface[*/ieee-802.3ad/bundle]"):
            out["lag_members"][i.findtext("name")] = i.findtext("*/ieee-802.3ad/bundle")
finally:
    device.close()
print(json.dumps(out))

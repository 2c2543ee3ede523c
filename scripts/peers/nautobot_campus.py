"""Load a small campus into a running Nautobot through its REST API (pynautobot), for the tests.

    .peers/venv-nornir-nautobot/bin/python scripts/peers/nautobot_campus.py CAMPUS.json

NAUTOBOT_URL and NAUTOBOT_TOKEN (scripts/peers/nautobot.sh's nautobot.env) name the server. CAMPUS.json:

    {"context": {...},                       # config context for every device (e.g. the lab's trust)
     "secrets": {"username": "ENV", "password": "ENV", "secret": "ENV"},
     "vlans": [{"vid": 10, "name": "users", "location": "bldg-a"}],
     "vlan_groups": [{"name": "servers", "location": "campus-1",   # location optional
                      "vlans": [{"vid": 310, "name": "app"}]}],
     "devices": [{"name": "eos1", "network_driver": "arista_eos", "address": "127.0.0.1",
                  "port": 4431, "role": "access", "location": "bldg-a", "tags": ["lab"],
                  "context": {...},         # the device's local config context (optional)
                  "interfaces": [{"name": "Port-Channel10", "type": "lag", "lacp": "passive"},
                                 {"name": "Ethernet5", "lag": "Port-Channel10"},
                                 {"name": "Ethernet1", "mode": "access", "untagged_vlan": 10,
                                  "tagged_vlans": [], "description": "...", "mtu": 9000,
                                  "enabled": true,
                                  "addresses": ["10.0.4.1/24"]}]}]}   # IP addresses (optional)

Everything else a campus needs is made here: location types and locations (campus > buildings),
roles, manufacturers, device types, platforms (one per network_driver), the `netgw_port` (device)
and `netgw_lacp` (interface, set on LAGs) custom fields, tags, VLAN groups with their VLANs, a secrets group whose secrets use the environment-variable provider, and a config
context. Each device's address sits in a namespace of its own: every netgw-lab device answers on
127.0.0.1, and Nautobot keeps one IP address unique within a namespace. Prints {"devices": {name: id}}.
"""

import json
import os
import sys

import pynautobot

VENDORS = {
    "arista_eos": "Arista",
    "cisco_ios": "Cisco",
    "cisco_nxos": "Cisco",
    "juniper_junos": "Juniper",
    "bigip_f5": "F5",
}


def get_or_create(endpoint, lookup, **extra):
    obj = endpoint.get(**lookup)
    return obj if obj is not None else endpoint.create(**lookup, **extra)


def structure(nb, campus):
    active = nb.extras.statuses.get(name="Active")
    ct = ["dcim.device", "ipam.vlan", "ipam.vlangroup", "ipam.prefix"]
    campus_t = get_or_create(nb.dcim.location_types, {"name": "Campus"}, content_types=ct, nestable=False)
    bldg_t = get_or_create(nb.dcim.location_types, {"name": "Building"}, parent=campus_t.id, content_types=ct)
    top = get_or_create(nb.dcim.locations, {"name": "campus-1"}, location_type=campus_t.id, status=active.id)
    locations = {}
    for d in campus["devices"] + campus.get("vlans", []):
        name = d["location"]
        if name not in locations:
            locations[name] = get_or_create(
                nb.dcim.locations, {"name": name}, location_type=bldg_t.id, parent=top.id, status=active.id
            )
    roles = {}
    for d in campus["devices"]:
        if d["role"] not in roles:
            roles[d["role"]] = get_or_create(nb.extras.roles, {"name": d["role"]}, content_types=["dcim.device"])
    fields = {cf.key for cf in nb.extras.custom_fields.all()}
    if "netgw_port" not in fields:
        nb.extras.custom_fields.create(
        key="netgw_port",
        label="netgw port",
        type="integer",
        content_types=["dcim.device"],
        description="The management port netgw connects to (the driver's default when empty)",
        )
    if "netgw_lacp" not in fields:
        nb.extras.custom_fields.create(
            key="netgw_lacp",
            label="netgw LACP mode",
            type="text",
            content_types=["dcim.interface"],
            description="A LAG's LACP mode: active (when empty), passive or on",
        )
    return active, locations, roles


def secrets_group(nb, campus):
    group = get_or_create(nb.extras.secrets_groups, {"name": "lab-credentials"})
    for secret_type, variable in campus["secrets"].items():
        secret = get_or_create(
            nb.extras.secrets,
            {"name": f"lab-{secret_type}"},
            provider="environment-variable",
            parameters={"variable": variable},
        )
        found = nb.extras.secrets_groups_associations.get(
            secrets_group=group.id, access_type="Generic", secret_type=secret_type
        )
        if found is None:
            nb.extras.secrets_groups_associations.create(
                secrets_group=group.id, secret=secret.id, access_type="Generic", secret_type=secret_type
            )
    return group


def platform(nb, driver):
    maker = get_or_create(nb.dcim.manufacturers, {"name": VENDORS[driver]})
    plat = get_or_create(nb.dcim.platforms, {"name": driver}, manufacturer=maker.id, network_driver=driver)
    dtype = get_or_create(nb.dcim.device_types, {"model": f"lab-{driver}"}, manufacturer=maker.id)
    return plat, dtype


def vlans(nb, campus, active, locations):
    out = {}
    for v in campus.get("vlans", []):
        vlan = get_or_create(nb.ipam.vlans, {"vid": v["vid"], "name": v["name"]}, status=active.id)
        # A VLAN's locations are assignments of their own (the VLAN serializer ignores `locations`).
        loc = locations[v["location"]].id
        if nb.ipam.vlan_location_assignments.get(vlan=vlan.id, location=loc) is None:
            nb.ipam.vlan_location_assignments.create(vlan=vlan.id, location=loc)
        out[v["vid"]] = vlan
    for g in campus.get("vlan_groups", []):
        loc = nb.dcim.locations.get(name=g["location"]).id if g.get("location") else None
        group = get_or_create(nb.ipam.vlan_groups, {"name": g["name"]}, location=loc)
        for v in g["vlans"]:
            vlan = get_or_create(
                nb.ipam.vlans, {"vid": v["vid"], "name": v["name"]}, status=active.id, vlan_group=group.id
            )
            # Interfaces name VLANs by VID: a location's VLAN keeps it when a group has the same VID.
            out.setdefault(v["vid"], vlan)
    return out


def device(nb, d, ctx):
    active, locations, roles, group, vlan_ids = ctx
    plat, dtype = platform(nb, d["network_driver"])
    for t in d.get("tags", []):
        get_or_create(nb.extras.tags, {"name": t}, content_types=["dcim.device"])
    dev = nb.dcim.devices.create(
        name=d["name"],
        role=roles[d["role"]].id,
        location=locations[d["location"]].id,
        device_type=dtype.id,
        platform=plat.id,
        status=active.id,
        secrets_group=group.id,
        tags=[{"name": t} for t in d.get("tags", [])],
        custom_fields={"netgw_port": d.get("port")},
        local_config_context_data=d.get("context"),
    )
    ns = nb.ipam.namespaces.create(name=f"mgmt-{d['name']}")
    nb.ipam.prefixes.create(prefix="127.0.0.0/8", namespace=ns.id, status=active.id, type="network")
    ip = nb.ipam.ip_addresses.create(address=f"{d['address']}/32", namespace=ns.id, status=active.id)
    mgmt = nb.dcim.interfaces.create(device=dev.id, name="mgmt0", type="virtual", status=active.id, mgmt_only=True)
    nb.ipam.ip_address_to_interface.create(ip_address=ip.id, interface=mgmt.id)
    dev.update({"primary_ip4": ip.id})
    ifaces = {}
    for i in d.get("interfaces", []):
        body = {
            "device": dev.id,
            "name": i["name"],
            "type": i.get("type", "1000base-t"),
            "status": active.id,
            "enabled": i.get("enabled", True),
            "description": i.get("description", ""),
        }
        if i.get("mtu") is not None:
            body["mtu"] = i["mtu"]
        if i.get("mode"):
            body["mode"] = i["mode"]
        if i.get("untagged_vlan") is not None:
            body["untagged_vlan"] = vlan_ids[i["untagged_vlan"]].id
        if i.get("tagged_vlans"):
            body["tagged_vlans"] = [vlan_ids[v].id for v in i["tagged_vlans"]]
        if i.get("lag"):
            body["lag"] = ifaces[i["lag"]].id
        if i.get("lacp"):
            body["custom_fields"] = {"netgw_lacp": i["lacp"]}
        iface = nb.dcim.interfaces.create(**body)
        ifaces[i["name"]] = iface
        for a in i.get("addresses", []):
            ip = nb.ipam.ip_addresses.create(address=a, namespace=campus_ns(nb, active).id, status=active.id)
            nb.ipam.ip_address_to_interface.create(ip_address=ip.id, interface=iface.id)
    return dev


def campus_ns(nb, active):
    """The namespace of the campus' own addresses (10.0.0.0/8, 2001:db8::/32), made once."""
    ns = nb.ipam.namespaces.get(name="campus")
    if ns is None:
        ns = nb.ipam.namespaces.create(name="campus")
        for p in ("10.0.0.0/8", "2001:db8::/32"):
            nb.ipam.prefixes.create(prefix=p, namespace=ns.id, status=active.id, type="network")
    return ns


def main():
    campus = json.load(open(sys.argv[1]))
    nb = pynautobot.api(os.environ["NAUTOBOT_URL"], token=os.environ["NAUTOBOT_TOKEN"])
    active, locations, roles = structure(nb, campus)
    group = secrets_group(nb, campus)
    vlan_ids = vlans(nb, campus, active, locations)
    get_or_create(
        nb.extras.config_contexts,
        {"name": "netgw-lab"},
        weight=1000,
        data=campus.get("context", {}),
        locations=[locations[n].id for n in locations],
    )
    ids = {}
    for d in campus["devices"]:
        ids[d["name"]] = device(nb, d, (active, locations, roles, group, vlan_ids)).id
    print(json.dumps({"devices": ids}))


if __name__ == "__main__":
    main()

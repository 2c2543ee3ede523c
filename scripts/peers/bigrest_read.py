"""Read a BIG-IP's trunks, VLANs and self IPs with bigrest (iControl REST over HTTPS, one token login)
and print what it found as JSON: {"trunks": {NAME: {"interfaces", "lacp", "lacpMode"}}, "vlans": {NAME:
{"tag", "tagged", "untagged"}}, "selfips": {NAME: {"address", "vlan"}}}.
Usage: bigrest_read.py HOST PORT USERNAME PASSWORD CA_FILE (the certificate is checked against CA_FILE)."""
import json
import sys

from bigrest.bigip import BIGIP

host, port, user, password, ca = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
dev = BIGIP(f"{host}:{port}", user, password, request_token=True, session_verify=ca, timeout=60)


def members(vlan, tagged):
    """The VLAN's interfaces (its `interfacesReference` subcollection), tagged or untagged."""
    rows = dev.load(f"/mgmt/tm/net/vlan/{vlan.properties['fullPath'].replace('/', '~')}/interfaces")
    return sorted(r.properties["name"] for r in rows if bool(r.properties.get("tagged")) == tagged)


trunks = {
    t.properties["name"]: {
        "interfaces": t.properties.get("interfaces", []),
        "lacp": t.properties.get("lacp"),
        "lacpMode": t.properties.get("lacpMode"),
    }
    for t in dev.load("/mgmt/tm/net/trunk")
}
vlans = {
    v.properties["name"]: {
        "tag": v.properties.get("tag"),
        "tagged": members(v, True),
        "untagged": members(v, False),
    }
    for v in dev.load("/mgmt/tm/net/vlan")
}
selfips = {
    s.properties["name"]: {"address": s.properties.get("address"), "vlan": s.properties.get("vlan")}
    for s in dev.load("/mgmt/tm/net/self")
}
print(json.dumps({"trunks": trunks, "vlans": vlans, "selfips": selfips}))

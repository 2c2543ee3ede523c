"""Read an EOS device with pyeapi's own configuration parsers and print what they found as JSON.
Usage: pyeapi_read.py HOST PORT USERNAME PASSWORD (HTTPS; the lab's certificate is not checked, as
pyeapi does by default)."""
import json
import sys

import pyeapi

host, port, username, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
node = pyeapi.connect(
    transport="https", host=host, port=port, username=username, password=password, return_node=True
)
print(
    json.dumps(
        {
            "vlans": node.api("vlans").getall(),
            "switchports": node.api("switchports").getall(),
            "interfaces": node.api("interfaces").getall(),
        },
        default=str,
    )
)

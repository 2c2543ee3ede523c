"""Parse CLI text read from stdin with ntc-templates, as Netmiko's `use_textfsm` does, and print the
rows as JSON. Usage: textfsm_parse.py PLATFORM COMMAND (e.g. `cisco_ios "show vlan brief"`)."""
import json
import sys

from ntc_templates.parse import parse_output

platform, command = sys.argv[1], sys.argv[2]
print(json.dumps(parse_output(platform=platform, command=command, data=sys.stdin.read())))

#!/usr/bin/env python3
"""Start several fake-switches devices in one Twisted reactor, bound to 127.0.0.1.

Usage: fake_switches_launcher.py SPEC
  SPEC is a path to a JSON file, or the JSON text itself (starting with '['), holding a list of
  {"name": str, "model": str, "ssh_port": int, "http_port": int (optional, Arista eAPI)}.
  A port of 0 picks a free port.

Once every device listens, prints one line to stdout:
  READY {"NAME": {"ssh_port": P, "http_port": Q}, ...}
and runs the reactor until SIGTERM/SIGINT.

Why not fake-switches' own launcher: it passes the enable password as bytes, so `enable` with a password
fails (docs/peers.md). Credentials here: SSH user admin / admin, enable secret "enable".
"""

import json
import logging
import os
import sys

from twisted.internet import reactor
from twisted.web.server import Site

from fake_switches.switch_factory import SwitchFactory
from fake_switches.transports import SwitchSshService

HOST = "127.0.0.1"
SSH_USERS = {"admin": b"admin"}
ENABLE_PASSWORD = "enable"


def load_spec(arg):
    text = arg if arg.lstrip().startswith("[") else open(arg, encoding="utf-8").read()
    spec = json.loads(text)
    if not isinstance(spec, list) or not spec:
        raise SystemExit("spec must be a non-empty JSON list of {name, model, ssh_port[, http_port]}")
    for entry in spec:
        for key in ("name", "model", "ssh_port"):
            if key not in entry:
                raise SystemExit("spec entry %r lacks %r" % (entry, key))
    return spec


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    spec = load_spec(argv[1])
    factory = SwitchFactory()
    ports = {}
    for entry in spec:
        name = entry["name"]
        core = factory.get(entry["model"], hostname=name, password=ENABLE_PASSWORD)
        lport = SwitchSshService(HOST, port=int(entry["ssh_port"]), switch_core=core,
                                 users=SSH_USERS).hook_to_reactor(reactor)
        chosen = {"ssh_port": lport.getHost().port}
        if entry.get("http_port") is not None:
            # Same as fake_switches.transports.SwitchHttpService.hook_to_reactor, which does not return the
            # listening port (needed when port 0 is asked for).
            http = reactor.listenTCP(int(entry["http_port"]), Site(core.get_http_resource()),
                                     interface=HOST)
            chosen["http_port"] = http.getHost().port
        ports[name] = chosen
        logging.info("%s (%s): %s", name, entry["model"], chosen)

    sys.stdout.write("READY " + json.dumps(ports, sort_keys=True) + "\n")
    sys.stdout.flush()
    # Die with the parent when it closes our stdin pipe is not portable; tests kill us by PID.
    reactor.run()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main(sys.argv)

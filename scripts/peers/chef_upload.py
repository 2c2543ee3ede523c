#!/usr/bin/env python3
"""Upload a cookbook to a Chef server the way `knife cookbook upload` does it.

The steps and bodies follow chef's lib/chef/cookbook_uploader.rb and lib/chef/cookbook_version.rb:

  1. POST /sandboxes {"checksums": {MD5: null, ...}}    the server says which files it needs
  2. PUT each needed file to its sandbox url             content-type application/x-binary,
                                                         content-md5 = base64 of the MD5 bytes
  3. PUT the sandbox uri {"is_completed": true}          commit
  4. PUT /cookbooks/NAME/VERSION the cookbook version    manifest in segments (server API 1)

Requests are signed as mixlib-authentication protocol 1.3 (SHA-256, RSA PKCS#1 v1.5) with the
`cryptography` package; HTTP with `requests`. It is an independent client: it shares no code with
netgw. Installed by scripts/peers/chef-upload.sh (venv .peers/venv-chef-upload).

usage: chef_upload.py SERVER_URL CLIENT KEY_PEM COOKBOOK_DIR [--force]
       chef_upload.py SERVER_URL CLIENT KEY_PEM --data-bag BAG ITEM_JSON_FILE

The second form stores a data bag item as `knife data bag from file BAG FILE` does (chef's
lib/chef/knife/data_bag_from_file.rb and lib/chef/data_bag_item.rb `save`): the bag is created
(POST /data {"name": BAG}, 409 when it exists is fine), then PUT /data/BAG/ID, and POST /data/BAG
when the item does not exist yet (404).

COOKBOOK_DIR must hold metadata.json (knife compiles metadata.rb into it before uploading; this client
does not run Ruby). Every file below COOKBOOK_DIR is uploaded, metadata.json included, as knife does.
"""

import base64
import datetime
import hashlib
import json
import os
import sys
import urllib.parse

import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

API_VERSION = "1"
TIMEOUT = 30
SEGMENTS = [
    "attributes",
    "definitions",
    "files",
    "libraries",
    "providers",
    "recipes",
    "resources",
    "templates",
]


class Client:
    def __init__(self, url, name, key_path):
        self.base = url.rstrip("/")
        self.name = name
        with open(key_path, "rb") as f:
            self.key = serialization.load_pem_private_key(f.read(), password=None)

    def headers(self, method, path, body):
        ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        content_hash = base64.b64encode(hashlib.sha256(body).digest()).decode()
        canonical = "\n".join(
            [
                f"Method:{method}",
                f"Path:{path}",
                f"X-Ops-Content-Hash:{content_hash}",
                "X-Ops-Sign:version=1.3",
                f"X-Ops-Timestamp:{ts}",
                f"X-Ops-UserId:{self.name}",
                f"X-Ops-Server-API-Version:{API_VERSION}",
            ]
        )
        sig = self.key.sign(canonical.encode(), padding.PKCS1v15(), hashes.SHA256())
        b64 = base64.b64encode(sig).decode()
        h = {
            "Accept": "application/json",
            "X-Chef-Version": "18.0.0",
            "X-Ops-Server-API-Version": API_VERSION,
            "X-Ops-Sign": "algorithm=sha256;version=1.3;",
            "X-Ops-Userid": self.name,
            "X-Ops-Timestamp": ts,
            "X-Ops-Content-Hash": content_hash,
        }
        for i in range(0, len(b64), 60):
            h[f"X-Ops-Authorization-{i // 60 + 1}"] = b64[i : i + 60]
        return h

    def call(self, method, url, body=b"", extra=None, json_body=True, allow=()):
        if not url.startswith("http"):
            url = self.base + url
        path = urllib.parse.urlparse(url).path
        h = self.headers(method, path, body)
        if json_body and body:
            h["Content-Type"] = "application/json"
        h.update(extra or {})
        r = requests.request(method, url, data=body, headers=h, timeout=TIMEOUT)
        if r.status_code in allow:
            return None
        if r.status_code >= 300:
            raise SystemExit(f"{method} {url}: HTTP {r.status_code}: {r.text[:500]}")
        return r.json() if r.content else {}


def md5_hex(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def manifest(root):
    """Files by segment, as Chef's cookbook loader sorts them."""
    segments = {s: [] for s in SEGMENTS + ["root_files"]}
    paths = {}
    for dirpath, _dirs, files in os.walk(root):
        for fn in sorted(files):
            full = os.path.join(dirpath, fn)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            parts = rel.split("/")
            seg = parts[0] if len(parts) > 1 and parts[0] in SEGMENTS else "root_files"
            # files/ and templates/ carry a host/platform specificity directory; others are default.
            specificity = parts[1] if seg in ("files", "templates") and len(parts) > 2 else "default"
            checksum = md5_hex(full)
            segments[seg].append(
                {"name": fn, "path": rel, "checksum": checksum, "specificity": specificity}
            )
            paths[checksum] = full
    return segments, paths


def upload(client, root, force):
    with open(os.path.join(root, "metadata.json")) as f:
        metadata = json.load(f)
    name, version = metadata["name"], metadata["version"]
    metadata.setdefault("dependencies", {})
    segments, paths = manifest(root)

    sandbox = client.call(
        "POST", "/sandboxes", json.dumps({"checksums": {c: None for c in paths}}).encode()
    )
    for checksum, info in sandbox["checksums"].items():
        if not info.get("needs_upload"):
            continue
        with open(paths[checksum], "rb") as f:
            content = f.read()
        md5_b64 = base64.b64encode(bytes.fromhex(checksum)).decode()
        client.call(
            "PUT",
            info["url"],
            content,
            {"Content-Type": "application/x-binary", "Content-MD5": md5_b64},
            json_body=False,
        )
    client.call("PUT", sandbox["uri"], json.dumps({"is_completed": True}).encode())

    body = {
        "name": f"{name}-{version}",
        "cookbook_name": name,
        "version": version,
        "chef_type": "cookbook_version",
        "json_class": "Chef::CookbookVersion",
        "frozen?": False,
        "metadata": metadata,
    }
    body.update(segments)
    url = f"/cookbooks/{name}/{version}" + ("?force=true" if force else "")
    client.call("PUT", url, json.dumps(body).encode())
    print(f"Uploaded {name} {version} ({len(paths)} files)")


def upload_item(client, bag, path):
    with open(path) as f:
        item = json.load(f)
    client.call("POST", "/data", json.dumps({"name": bag}).encode(), allow=(409,))
    body = json.dumps(item).encode()
    if client.call("PUT", f"/data/{bag}/{item['id']}", body, allow=(404,)) is None:
        client.call("POST", f"/data/{bag}", body)
    print(f"Saved data_bag_item[{item['id']}] in {bag}")


def main(argv):
    if len(argv) < 5:
        raise SystemExit(__doc__)
    client = Client(argv[1], argv[2], argv[3])
    if argv[4] == "--data-bag" and len(argv) == 7:
        upload_item(client, argv[5], argv[6])
        return
    upload(client, argv[4], "--force" in argv[5:])


if __name__ == "__main__":
    main(sys.argv)

"""ANTA unit-test samples -> conformance cases (drivers/tests/fixtures/conformance/eos/facts/anta_*).

Usage: conformance-anta-extract.py ANTA_CHECKOUT OUT_DIR

Reads the `DATA` dictionaries of aristanetworks/anta's tests/units/anta_tests/*.py (Apache-2.0) with `ast`
(no import of ANTA), keeps the entries whose expected result is success or failure, and writes each
`eos_data` answer as `<command>.json` beside `anta_expected.json` (the entry's inputs and, for a failure,
ANTA's expected messages, which state the device's actual values; with the commit and entry named). The device-refresh case (`anta_device_refresh_7280cr3`) was copied by hand.
"""
import ast, json, os, re, sys, subprocess
REPO = sys.argv[1]
COMMIT = subprocess.check_output(["git", "-C", REPO, "rev-parse", "HEAD"], text=True).strip()
OUT = sys.argv[2]
WANT = {
    "tests/units/anta_tests/test_connectivity.py": {"VerifyLLDPNeighbors": ["show lldp neighbors detail"]},
    "tests/units/anta_tests/test_software.py": {"VerifyEOSVersion": ["show version"]},
    "tests/units/anta_tests/test_vlan.py": {"VerifyVlanStatus": ["show vlan"]},
    "tests/units/anta_tests/test_services.py": {"VerifyHostname": ["show hostname"]},
    "tests/units/anta_tests/test_interfaces.py": {"VerifyInterfacesSpeed": ["show interfaces"], "VerifyL3MTU": ["show interfaces"], "VerifyL2MTU": ["show interfaces"]},
}
def lit(node):
    # AntaTestStatus.SUCCESS etc. -> its name
    class T(ast.NodeTransformer):
        def visit_Attribute(self, n):
            return ast.Constant(n.attr.lower())
    return ast.literal_eval(T().visit(node))
n = 0
for path, tests in WANT.items():
    src = subprocess.check_output(["git", "-C", REPO, "show", f"HEAD:{path}"], text=True)
    tree = ast.parse(src)
    for st in tree.body:
        if isinstance(st, ast.AnnAssign) and getattr(st.target, "id", "") == "DATA":
            d = st.value
            for k, v in zip(d.keys, d.values):
                cls, name = k.elts[0].id, k.elts[1].value
                if cls not in tests:
                    continue
                case = lit(v)
                result = case["expected"]["result"]
                if result not in ("success", "failure"):
                    continue
                cmds = tests[cls]
                if len(case["eos_data"]) != len(cmds):
                    print("skip", cls, name, "eos_data count"); continue
                slug = re.sub(r"[^a-z0-9]+", "_", f"anta_{cls}_{name}".lower()).strip("_")
                dst = os.path.join(OUT, slug)
                os.makedirs(dst, exist_ok=True)
                for c, data in zip(cmds, case["eos_data"]):
                    with open(os.path.join(dst, c.replace(" ", "_") + ".json"), "w") as f:
                        json.dump(data, f, indent=2); f.write("\n")
                if result == "success":
                    why = "expected: success, so the device's answer satisfies these inputs"
                else:
                    why = "expected: failure with these messages, which state the device's actual values; inputs not named in a message are satisfied"
                exp = {"source": f"aristanetworks/anta {COMMIT} {path} DATA[({cls}, \"{name}\")] ({why})",
                       "test": cls, "inputs": case.get("inputs", {})}
                if result == "failure":
                    exp["messages"] = case["expected"].get("messages", [])
                with open(os.path.join(dst, "anta_expected.json"), "w") as f:
                    json.dump(exp, f, indent=2); f.write("\n")
                n += 1; print(slug)
print(n, "cases")

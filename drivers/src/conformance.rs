//! The shared driver conformance suite's entry point (in the spirit of NAPALM's getter tests): every
//! vendor's parsers run on recorded real outputs and are compared with expected results.
//!
//! Cases live in `drivers/tests/fixtures/conformance/<vendor>/<getter>/<case>/`: the recorded device
//! outputs (file names say which command or RPC they answer) and `expected.json`. The test runner
//! (`drivers/tests/conformance.rs`) reads a case and calls [`run`]; this function only dispatches, so
//! the parsing that runs is exactly the drivers' own. Getters: `facts` (DeviceFacts), `vlans`
//! (`[Vlan]`), `links` (`[Link]`).

use serde_json::Value;
use std::collections::BTreeMap;

/// Run `getter` of `vendor` on the files of one case (file name -> content).
#[allow(clippy::match_single_binding)] // until the first vendor arm lands
pub fn run(vendor: &str, getter: &str, files: &BTreeMap<String, String>) -> Result<Value, String> {
    match vendor {
        // One arm per vendor: "junos" => crate::junos::conformance::run(getter, files),
        "junos" => crate::junos::conformance::run(getter, files),
        "eos" => crate::eos::conformance::run(getter, files),
        "f5" => crate::f5::conformance::run(getter, files),
        "ios" => crate::ios::conformance::run(getter, files),
        "nxos" => crate::nxos::conformance::run(getter, files),
        other => {
            let _ = (getter, files);
            Err(format!("no driver registered for vendor {other:?}"))
        }
    }
}

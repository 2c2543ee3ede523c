//! netgw-labs: device simulators and lab topologies (binary `netgw-lab`).
//!
//! [`lab::Lab`] serves every node of a containerlab topology as a simulated device on 127.0.0.1 and
//! writes the inventory netgw reads; [`sim`] holds the simulators (EOS eAPI, Junos NETCONF, IOS and
//! NX-OS SSH CLI, F5 iControl REST, and an SNMP agent per device), their shared switch state and fault
//! injection.

pub mod bench;
pub mod clab;
pub mod floor;
pub mod lab;
pub mod private;
pub mod sim;

pub use lab::{Lab, LabError, LabOptions, Sim};

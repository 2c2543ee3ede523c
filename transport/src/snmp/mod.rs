//! SNMP v2c/v3 client (snmp2) and the standard-MIB fact collector.
//!
//! ```text
//! SnmpClient (client.rs)      get / get-next / get-bulk / walk, timeouts + retries, v2c + v3 USM
//!    └─ WalkState (walk.rs)   pure stopping rules of a bounded walk
//! collect_facts (collector.rs)  walks the fact columns, then
//!    └─ facts_from_varbinds      pure: varbinds -> netgw_models::facts::DeviceFacts
//! parse_snmprec (snmprec.rs)  snmpsim recordings -> varbinds, for tests on real device data
//! ```
//!
//! OIDs are numeric throughout: no MIB files are needed at run time.

pub mod client;
pub mod collector;
pub mod error;
pub mod oid;
pub mod snmprec;
pub mod walk;

pub use client::{
    AuthProtocol, PrivProtocol, SnmpClient, SnmpConfig, SnmpExtras, SnmpSecurity, V3Level,
};
pub use collector::{CollectedFacts, collect_facts, facts_from_varbinds};
pub use error::{SnmpError, SnmpOp, WalkLimit};
pub use oid::{Oid, SnmpValue, Varbind};
pub use snmprec::parse_snmprec;
pub use walk::WalkLimits;

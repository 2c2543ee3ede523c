//! Shared by the benchmark tools (`ssh-floor`) and the tests that keep them honest.

/// What `netgw converge` sends to one IOS device in a run that changes one VLAN and one interface
/// description (drivers/src/ios: on-open, facts, observe's one read facts did not make, the config
/// lines, verify's observe; the driver answers repeated reads of one session from its read cache, so
/// the pre-state read before the change sends nothing). `tests/bench_floor.rs` checks it against what
/// the simulator receives from a real converge, so the floor stays the same work as netgw.
pub const NETGW_IOS_CHANGE: &str = "\
terminal length 0
terminal width 511
show archive
show version
show inventory
show interfaces
show vlan brief
show lldp neighbors detail
show cdp neighbors detail
show running-config
configure terminal
vlan 100
name bench
exit
interface Ethernet0/1
description bench uplink
exit
end
show vlan brief
show running-config
show interfaces
";

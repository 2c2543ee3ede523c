//! SSH transport (russh): exec channels, subsystems (NETCONF) and interactive CLI shells.

//! Device simulators and lab topologies.

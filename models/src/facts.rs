//! Device facts: the automatic-attribute shape every driver and the SNMP collector produce (DESIGN.md §3 step 4).

//! SNMP v2c/v3 client (snmp2) and the standard-MIB fact collector.

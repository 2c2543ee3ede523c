//! A device's facts as a run gathers them: the driver's, with SNMP's filling the gaps.
//!
//! SNMP facts in a run (docs/design.md §3 step 4: facts are "gathered over the driver's transport, with SNMP
//! where configured").
//!
//! When an inventory host has `connection_options.snmp` (docs/design.md §6: `hostname`, `port`, `extras`
//! `{version, community, user, auth_proto, auth_key, priv_proto, priv_key, context}`, plus netgw's
//! `timeout` seconds per attempt and `retries`), the engine walks the standard MIBs
//! (`netgw_transport::snmp::collect_facts`) at the same time as the driver gathers its facts,
//! within the target's operation timeout, and merges:
//!
//! - `automatic.snmp` = the SNMPv2-MIB system group (`sys_descr`, `sys_object_id`, `sys_name`,
//!   `sys_contact`, `sys_location`, `sys_up_time` in hundredths of a second), which only SNMP gives;
//! - every other fact only where the driver left a gap ([`merge`]): a driver-gathered fact is never
//!   overwritten.
//!
//! SNMP is an extra: a dead agent, a wrong community or a bad setting never fails the run; it becomes a
//! warning naming the node and the cause. Credentials never appear in warnings: the community and keys
//! are `Secret`s, resolved here from literals, `${ENV}` or `file:PATH` like passwords.

use netgw_drivers::target::DeviceTarget;
use netgw_models::facts::DeviceFacts;
use netgw_models::resource::normalize_interface_name;
use netgw_transport::credentials;
use netgw_transport::snmp::{
    SnmpClient, SnmpConfig, SnmpError, SnmpExtras, WalkLimits, collect_facts,
};
use serde_json::Value;
use std::time::Duration;

/// Default per-attempt timeout and retries of the SNMP requests of a run.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
const DEFAULT_RETRIES: u32 = 1;

/// What in a target's `connection_options.snmp` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SnmpSettingError {
    #[error("in connection_options.snmp.extras.{key}: {source}")]
    Credential {
        key: &'static str,
        #[source]
        source: credentials::CredentialError,
    },
    #[error("in connection_options.snmp.extras.{key}: must be {what}")]
    Number {
        key: &'static str,
        what: &'static str,
    },
    #[error("in connection_options.snmp.extras: {0}")]
    Extras(#[source] serde_json::Error),
    #[error(transparent)]
    Security(#[from] SnmpError),
}

/// The SNMP session settings of `target`; `None` when it has no `connection_options.snmp`.
pub fn snmp_config(target: &DeviceTarget) -> Option<Result<SnmpConfig, SnmpSettingError>> {
    let co = target.connection_options.get("snmp")?;
    Some(build_config(target, co))
}

fn build_config(
    target: &DeviceTarget,
    co: &netgw_drivers::target::ConnectionOptions,
) -> Result<SnmpConfig, SnmpSettingError> {
    let mut extras = co.extras.clone();
    // Credential references (`${ENV}`, `file:PATH`) as for passwords; errors name the reference only.
    for key in ["community", "auth_key", "priv_key"] {
        // A secret YAML reads as a number is its text (as Nornir passes it on); never echoed in errors.
        if let Some(Value::Number(n)) = extras.get(key) {
            extras.insert(key.into(), Value::String(n.to_string()));
            continue;
        }
        if let Some(Value::String(r)) = extras.get(key) {
            let s = credentials::resolve(r)
                .map_err(|source| SnmpSettingError::Credential { key, source })?;
            extras.insert(key.into(), Value::String(s.expose().to_owned()));
        }
    }
    let number = |key: &'static str,
                  min: f64,
                  what: &'static str|
     -> Result<Option<f64>, SnmpSettingError> {
        match extras.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|n| *n >= min && n.is_finite())
                .map(Some)
                .ok_or(SnmpSettingError::Number { key, what }),
        }
    };
    let timeout = number("timeout", 0.001, "a number of seconds above zero")?
        .map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs_f64(s.min(3600.0)));
    let retries = number("retries", 0.0, "a number of retries (0 or more)")?
        .map_or(DEFAULT_RETRIES, |r| r.min(10.0) as u32);
    // `user` may also come from the block's Nornir `username`.
    if !extras.contains_key("user")
        && let Some(u) = &co.username
    {
        extras.insert("user".into(), Value::String(u.clone()));
    }
    let parsed: SnmpExtras =
        serde_json::from_value(Value::Object(extras)).map_err(SnmpSettingError::Extras)?;
    let security = parsed.to_security(&target.name)?;
    let host = co.hostname.clone().unwrap_or_else(|| target.host.clone());
    Ok(SnmpConfig::new(target.name.clone(), host, security)
        .with_port(co.port.unwrap_or(161))
        .with_timeout(timeout, retries))
}

/// What SNMP gave for one node: its facts (when it answered) and warnings.
#[derive(Debug, Default)]
pub struct SnmpOutcome {
    pub facts: Option<DeviceFacts>,
    pub warnings: Vec<String>,
}

/// Gather SNMP facts for `target` when it has `connection_options.snmp`, bounded by `limit`.
pub async fn gather(target: &DeviceTarget, limit: Duration) -> SnmpOutcome {
    let Some(cfg) = snmp_config(target) else {
        return SnmpOutcome::default();
    };
    let warn = |cause: String| SnmpOutcome {
        facts: None,
        warnings: vec![format!(
            "node {}: SNMP facts not gathered: {cause}",
            target.name
        )],
    };
    let cfg = match cfg {
        Ok(c) => c,
        Err(e) => return warn(e.to_string()),
    };
    let limits = WalkLimits {
        max_time: limit,
        ..WalkLimits::default()
    };
    let work = async {
        let mut client = SnmpClient::connect(cfg).await?;
        collect_facts(&mut client, limits).await
    };
    match tokio::time::timeout(limit, work).await {
        Err(_) => warn(format!(
            "no complete answer within {limit:?} (operation timeout)"
        )),
        Ok(Err(e)) => warn(e.to_string()),
        Ok(Ok(c)) => SnmpOutcome {
            facts: Some(c.facts),
            warnings: c
                .skipped
                .iter()
                .map(|e| format!("node {}: SNMP table skipped: {e}", target.name))
                .collect(),
        },
    }
}

/// Whether two interface names denote the same port (`Et0/1` and `Ethernet0/1`, `Eth1/1` and
/// `Ethernet1/1`: IF-MIB ifName is often the short form of the CLI name).
pub(crate) fn same_interface(a: &str, b: &str) -> bool {
    a == b || normalize_interface_name(a).eq_ignore_ascii_case(&normalize_interface_name(b))
}

/// Fill the facts the driver did not gather from SNMP's; never overwrite one it did.
///
/// - The system group (`snmp`) comes from SNMP; scalar facts (hostname, fqdn, vendor, platform,
///   platform_version, model, serial, uptime) fill gaps only.
/// - Interfaces the driver reported are completed field by field from the SNMP interface of the same
///   name (abbreviations matched: `Et0/1` is `Ethernet0/1`); SNMP-only interfaces are added only when the
///   driver reported none, so the driver's naming stays the only one.
/// - VLANs and LLDP neighbours come from SNMP only when the driver reported none (LLDP local ports
///   renamed to the driver's interface names).
pub fn merge(driver: &mut DeviceFacts, snmp: &DeviceFacts) {
    if snmp.lldp_unreadable.is_none() {
        // SNMP read the LLDP-MIB: what it found (nothing included) is the answer.
        driver.lldp_unreadable = None;
    }
    let mut gaps = snmp.clone();
    if !driver.interfaces.is_empty() {
        let rename = |n: &str| {
            driver
                .interfaces
                .keys()
                .find(|d| same_interface(d, n))
                .cloned()
        };
        gaps.interfaces = snmp
            .interfaces
            .iter()
            .filter_map(|(n, i)| Some((rename(n)?, i.clone())))
            .collect();
        gaps.lldp_neighbors = snmp
            .lldp_neighbors
            .iter()
            .map(|(n, v)| (rename(n).unwrap_or_else(|| n.clone()), v.clone()))
            .collect();
    }
    if !driver.vlans.is_empty() {
        gaps.vlans.clear();
    }
    if !driver.lldp_neighbors.is_empty() {
        gaps.lldp_neighbors.clear();
    }
    driver.fill_missing_from(&gaps);
}

/// Aggregate and address facts (`lags`, `interfaces_ip`) where the driver reads them, and each
/// aggregate member's bundling state (`lags.NAME.member_state`) where the platform reports one
/// (`netgw facts`, `netgw links`; a converge takes the rest from the planner's read instead,
/// [`lag_l3_attributes`], and reads no member states). A lost session fails the facts like any
/// other read; a read the device refuses only leaves them out.
pub async fn add_lag_l3(
    driver: &mut dyn netgw_drivers::driver::Driver,
    facts: &mut netgw_models::facts::DeviceFacts,
) -> Result<(), netgw_drivers::driver::DriverError> {
    use netgw_drivers::driver::ErrorKind;
    let lost = |e: &netgw_drivers::driver::DriverError| {
        matches!(e.kind(), ErrorKind::Transport | ErrorKind::Timeout)
    };
    if driver.applies_lag_l3() {
        match driver.observe_lag_l3().await {
            Ok(x) => facts.apply_lag_l3(&x.lags, &x.l3),
            Err(e) if lost(&e) => return Err(e),
            Err(e) => tracing::warn!(error = %e, "aggregate and address facts not gathered"),
        }
    }
    match driver.lag_members().await {
        Ok(lags) => {
            let lags: Vec<_> = lags.into_iter().map(|l| (l.name, l.members)).collect();
            facts.apply_lag_members(&lags);
            Ok(())
        }
        Err(e) if lost(&e) => Err(e),
        Err(e) => {
            tracing::warn!(error = %e, "aggregate members' states not gathered");
            Ok(())
        }
    }
}

/// A converge's `lags` and `interfaces_ip` automatic attributes, from what the planner read of a node
/// that declares aggregates or routed interfaces: a converge asks no more of the device than its
/// plan needs (docs/bench.md counts the round trips), so a node that declares none has them from
/// `netgw facts`.
pub fn lag_l3_attributes(
    facts: &mut netgw_models::facts::DeviceFacts,
    lags: &[netgw_models::plan::lag::Lag],
    l3: &[netgw_models::plan::l3::L3Interface],
    automatic: &mut serde_json::Map<String, serde_json::Value>,
) {
    facts.apply_lag_l3(lags, l3);
    if let serde_json::Value::Object(mut all) = facts.to_automatic() {
        for key in ["lags", "interfaces_ip"] {
            if let Some(v) = all.remove(key) {
                automatic.insert(key.to_owned(), v);
            }
        }
    }
}

/// A device's facts as a converge gathers them: the driver's, with SNMP's (where configured) filling
/// its gaps. SNMP's own failures are warnings: the driver's facts stand without them.
pub async fn device_facts(
    target: &netgw_drivers::target::DeviceTarget,
) -> Result<netgw_models::facts::DeviceFacts, netgw_drivers::driver::DriverError> {
    let mut driver = netgw_drivers::registry::connect(target).await?;
    let (facts, snmp) = tokio::join!(driver.facts(), gather(target, target.timeouts.operation));
    let facts = match facts {
        Ok(mut f) => add_lag_l3(driver.as_mut(), &mut f).await.map(|()| f),
        Err(e) => Err(e),
    };
    let _ = driver.close().await;
    let mut facts = facts?;
    if let Some(s) = &snmp.facts {
        merge(&mut facts, s);
    }
    for w in &snmp.warnings {
        tracing::warn!("{w}");
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_drivers::driver::Platform;
    use netgw_drivers::target::ConnectionOptions;
    use netgw_models::facts::{InterfaceFacts, SnmpSystem, VlanFacts};
    use netgw_transport::snmp::SnmpSecurity;

    fn target(extras: serde_json::Value) -> DeviceTarget {
        let mut t = DeviceTarget::new("sw1", Platform::Ios, "10.0.0.1");
        t.port = Some(22);
        t.connection_options.insert(
            "snmp".into(),
            Box::new(ConnectionOptions {
                extras: extras.as_object().cloned().unwrap_or_default(),
                ..Default::default()
            }),
        );
        t
    }

    #[test]
    fn config_from_connection_options() {
        assert!(snmp_config(&DeviceTarget::new("x", Platform::Eos, "h")).is_none());
        // A credential file, as for passwords (`${ENV}` works the same way).
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("community");
        std::fs::write(&file, "c0mm-from-file\n").unwrap();
        let c = snmp_config(&target(serde_json::json!({
            "version": "2c", "community": format!("file:{}", file.display()), "timeout": 0.5, "retries": 0
        })))
        .unwrap()
        .unwrap();
        assert_eq!(
            (c.host.as_str(), c.port),
            ("10.0.0.1", 161),
            "not the SSH port"
        );
        assert_eq!((c.timeout, c.retries), (Duration::from_millis(500), 0));
        match &c.security {
            SnmpSecurity::V2c { community } => assert_eq!(community.expose(), "c0mm-from-file"),
            other => panic!("{other:?}"),
        }
        assert!(!format!("{c:?}").contains("c0mm-from-file"));
        let e = snmp_config(&target(serde_json::json!({"version": "3"})))
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("user"), "{e}");
        let e = snmp_config(&target(
            serde_json::json!({"community": "${NETGW_SNMP_NOT_SET_X}"}),
        ))
        .unwrap()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("extras.community") && e.contains("NETGW_SNMP_NOT_SET_X"),
            "{e}"
        );
        let e = snmp_config(&target(
            serde_json::json!({"community": "c", "timeout": "x"}),
        ))
        .unwrap()
        .unwrap_err()
        .to_string();
        assert!(e.contains("timeout"), "{e}");
    }

    #[test]
    fn merge_fills_gaps_only() {
        let mut d = DeviceFacts {
            hostname: Some("sw1".into()),
            platform: Some("iosxe".into()),
            ..Default::default()
        };
        d.interfaces.insert(
            "Ethernet0/1".into(),
            InterfaceFacts {
                description: Some("driver says".into()),
                ..Default::default()
            },
        );
        d.vlans.insert(1, VlanFacts::named("default"));
        let mut s = DeviceFacts {
            hostname: Some("other".into()),
            platform: Some("ios".into()),
            model: Some("IOL-L2".into()),
            serial: Some("NGW1".into()),
            snmp: Some(SnmpSystem {
                sys_name: Some("other".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        s.interfaces.insert(
            "Et0/1".into(),
            InterfaceFacts {
                description: Some("snmp says".into()),
                mac: Some("02:00:00:00:00:01".into()),
                ifindex: Some(2),
                ..Default::default()
            },
        );
        s.interfaces
            .insert("Vl99".into(), InterfaceFacts::default());
        s.vlans.insert(99, VlanFacts::named("x"));
        merge(&mut d, &s);
        assert_eq!(d.hostname.as_deref(), Some("sw1"));
        assert_eq!(d.platform.as_deref(), Some("iosxe"));
        assert_eq!(d.model.as_deref(), Some("IOL-L2"));
        assert_eq!(d.serial.as_deref(), Some("NGW1"));
        assert_eq!(d.snmp.as_ref().unwrap().sys_name.as_deref(), Some("other"));
        assert_eq!(d.interfaces.len(), 1, "{:?}", d.interfaces.keys());
        let e = &d.interfaces["Ethernet0/1"];
        assert_eq!(e.description.as_deref(), Some("driver says"));
        assert_eq!(e.mac.as_deref(), Some("02:00:00:00:00:01"));
        assert_eq!(e.ifindex, Some(2));
        assert_eq!(d.vlans.len(), 1);
        // A driver with no interfaces takes SNMP's.
        let mut empty = DeviceFacts::default();
        merge(&mut empty, &s);
        assert_eq!(empty.interfaces.len(), 2);
        assert_eq!(empty.vlans.len(), 1);
    }
}

//! The one registration point: platform -> driver (docs/style.md habit 3).

use crate::driver::{Driver, DriverError, Platform};
use crate::target::DeviceTarget;

/// Whether netgw has a driver for a platform (Linux switches: not yet).
pub fn has_driver(platform: Platform) -> bool {
    !matches!(platform, Platform::Linux)
}

/// What [`connect`] would refuse in a target's settings, found without dialling: the transport, the
/// credentials the transport needs and the driver's options. `netgw validate`, `netgw inventory`
/// and every run refuse the same settings with the same words.
pub fn check(target: &DeviceTarget) -> Result<(), DriverError> {
    let transport = target.platform.transport();
    if let Some(t) = &target.transport
        && !t.eq_ignore_ascii_case(transport)
    {
        return Err(DriverError::Config {
            device: target.name.clone(),
            message: format!(
                "data.netgw.transport: {} devices are driven over {transport} only, not {t:?} (set \
                 {transport} or remove the key)",
                target.platform
            ),
        });
    }
    match target.platform {
        Platform::Junos => crate::junos::check(target),
        Platform::Eos => crate::eos::EapiSettings::from_target(target).map(drop),
        Platform::Ios | Platform::Nxos => crate::cli_conn::check(target),
        Platform::F5 => crate::f5::rest::RestSettings::from_target(target).map(drop),
        Platform::Linux => Ok(()),
    }
}

/// Open a driver session with a device.
#[rustfmt::skip]
pub async fn connect(target: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError> {
    check(target)?;
    match target.platform {
        Platform::Junos => Ok(Box::new(crate::junos::JunosDriver::connect(target).await?)),
        Platform::Eos => Ok(Box::new(crate::eos::EosDriver::connect(target).await?)),
        Platform::Ios => Ok(Box::new(crate::ios::IosDriver::connect(target).await?)),
        Platform::Nxos => Ok(Box::new(crate::nxos::NxosDriver::connect(target).await?)),
        Platform::F5 => Ok(Box::new(crate::f5::F5Driver::connect(target).await?)),
        p => Err(DriverError::Unsupported {
            device: target.name.clone(),
            platform: p,
            what: "a driver session (this platform has no driver yet)".into(),
        }),
    }
}

/// Open a driver session with a recorded device (`transport::replay`): the same driver as
/// [`connect`] would, on the recording instead of the network.
#[cfg(feature = "replay")]
#[rustfmt::skip]
pub async fn replay(
    target: &DeviceTarget,
    rec: crate::transport::replay::Recording,
) -> Result<Box<dyn Driver>, DriverError> {
    match target.platform {
        Platform::Junos => Ok(Box::new(crate::junos::JunosDriver::replay(target, rec).await?)),
        Platform::Eos => Ok(Box::new(crate::eos::EosDriver::replay(target, rec).await?)),
        Platform::Ios => Ok(Box::new(crate::ios::IosDriver::replay(target, rec)?)),
        Platform::Nxos => Ok(Box::new(crate::nxos::NxosDriver::replay(target, rec)?)),
        Platform::F5 => Ok(Box::new(crate::f5::F5Driver::replay(target, rec).await?)),
        p => Err(DriverError::Unsupported {
            device: target.name.clone(),
            platform: p,
            what: "a driver session (this platform has no driver yet)".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn target(platform: Platform) -> DeviceTarget {
        let mut t = DeviceTarget::new("sw1", platform, "127.0.0.1");
        t.username = "u".into();
        t.password = Some(netgw_models::secret::Secret::new("p"));
        t
    }

    #[test]
    fn check_refuses_what_connect_would_without_dialling() {
        for p in [
            Platform::Junos,
            Platform::Eos,
            Platform::Ios,
            Platform::Nxos,
            Platform::F5,
        ] {
            assert!(check(&target(p)).is_ok(), "{p}");
            let mut t = target(p);
            t.transport = Some(p.transport().to_ascii_uppercase());
            assert!(check(&t).is_ok(), "{p}: its own transport, any case");
            t.transport = Some("telnet".into());
            let e = check(&t).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "driven over {} only, not \"telnet\"",
                    p.transport()
                )),
                "{e}"
            );
            let mut t = target(p);
            t.options.insert("save_config".into(), json!("no"));
            let e = check(&t).unwrap_err().to_string();
            assert!(e.contains("save_config must be true or false"), "{p}: {e}");
        }
        let mut t = target(Platform::Ios);
        t.password = None;
        assert!(
            check(&t)
                .unwrap_err()
                .to_string()
                .contains("no password or key file")
        );
        let mut t = target(Platform::Junos);
        t.options.insert("netconf_pipelining".into(), json!("off"));
        assert!(
            check(&t)
                .unwrap_err()
                .to_string()
                .contains("netconf_pipelining")
        );
        let mut t = target(Platform::Nxos);
        t.options.insert("cli_batch".into(), json!(0));
        assert!(check(&t).unwrap_err().to_string().contains("cli_batch"));
    }
}

//! The one registration point: platform -> driver (docs/style.md habit 3).

use crate::driver::{Driver, DriverError, Platform};
use crate::target::DeviceTarget;

/// Whether netgw has a driver for a platform (Linux switches: not yet).
pub fn has_driver(platform: Platform) -> bool {
    !matches!(platform, Platform::Linux)
}

/// Open a driver session with a device.
#[rustfmt::skip]
pub async fn connect(target: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError> {
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

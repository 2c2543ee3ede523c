//! The one registration point: platform -> driver (STYLE.md habit 3).

use crate::driver::{Driver, DriverError};
use crate::target::DeviceTarget;

/// Open a driver session with a device.
#[allow(clippy::match_single_binding)] // until every platform has its arm
pub async fn connect(target: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError> {
    match target.platform {
        // One arm per vendor driver, e.g. Platform::Junos => Ok(Box::new(crate::junos::JunosDriver::connect(target).await?)),
        crate::driver::Platform::Junos => {
            Ok(Box::new(crate::junos::JunosDriver::connect(target).await?))
        }
        crate::driver::Platform::Eos => Ok(Box::new(crate::eos::EosDriver::connect(target).await?)),
            Ok(Box::new(crate::nxos::NxosDriver::connect(target).await?))
        }
        p => Err(DriverError::Unsupported {
            device: target.name.clone(),
            platform: p,
            what: "a driver session (this platform has no driver yet)".into(),
        }),
    }
}

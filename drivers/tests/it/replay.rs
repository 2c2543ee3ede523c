//! A change on a recorded session: the IOS driver stages, commits, reads back and rolls back on a
//! recording that holds the device's answers before the change, after it and after the rollback
//! (`netgw_drivers::transport::replay`), exactly as on the network. What it sends is checked, and a
//! rollback the device did not take (the recording still shows the VLAN) must fail verification.

use netgw_drivers::driver::{CommitOptions, ErrorKind, Platform};
use netgw_drivers::registry;
use netgw_drivers::target::DeviceTarget;
use netgw_drivers::transport::replay::Recording;
use netgw_models::plan::{Policy, plan};
use netgw_models::resource::{Vlan, VlanId};
use netgw_models::secret::Secret;

const VLANS_BEFORE: &str = "\
VLAN Name                             Status    Ports
---- -------------------------------- --------- -------------------------------
1    default                          active    Gi0/1, Gi0/2
1002 fddi-default                     act/unsup
";

const VLANS_AFTER: &str = "\
VLAN Name                             Status    Ports
---- -------------------------------- --------- -------------------------------
1    default                          active    Gi0/1, Gi0/2
30   web                              active
1002 fddi-default                     act/unsup
";

const RUNNING: &str = "\
hostname sw1
!
interface GigabitEthernet0/1
 switchport mode access
!
interface GigabitEthernet0/2
!
end
";

fn target() -> DeviceTarget {
    let mut t = DeviceTarget::new("sw1", Platform::Ios, "127.0.0.1");
    t.username = "replay".into();
    t.password = Some(Secret::new("replay"));
    t
}

/// The device before the change, after it, and after the rollback (`rolled_back` = what the device
/// shows then).
fn recording(rolled_back: &[&str]) -> Recording {
    let rec = Recording::new();
    for answer in [VLANS_BEFORE, VLANS_AFTER].iter().chain(rolled_back) {
        rec.add("show vlan brief", *answer);
    }
    rec.add("show running-config", RUNNING);
    rec
}

/// Stage and commit "VLAN 30 web", read it back, roll back; the driver and the rollback's result.
async fn change_and_roll_back(
    rec: &Recording,
) -> (
    Box<dyn netgw_drivers::driver::Driver>,
    Result<(), netgw_drivers::driver::DriverError>,
) {
    let mut d = registry::replay(&target(), rec.clone()).await.unwrap();
    let mut web = Vlan::new(VlanId::new(30).unwrap());
    web.name = Some("web".into());
    let before = d.observe().await.unwrap();
    let p = plan(
        &[web],
        &before.vlans,
        Policy::Merge,
        &[],
        &before.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    let staged = d.stage(&p).await.unwrap();
    assert!(rec.sent().is_empty(), "stage sends nothing on IOS");
    d.commit(&CommitOptions::default()).await.unwrap();
    assert!(
        rec.sent().iter().any(|l| l == "vlan 30"),
        "sent {:?} (staged {:?})",
        rec.sent(),
        staged.rendered
    );
    let after = d.observe().await.unwrap();
    assert!(
        after.vlans.iter().any(|v| v.id.get() == 30),
        "read back {:?}",
        after.vlans
    );
    let r = d.rollback().await;
    (d, r)
}

#[tokio::test]
async fn a_recorded_change_is_staged_committed_read_back_and_rolled_back() {
    let rec = recording(&[VLANS_BEFORE]);
    change_and_roll_back(&rec).await.1.unwrap();
    assert!(
        rec.sent().iter().any(|l| l == "no vlan 30"),
        "the rollback removes the VLAN: {:?}",
        rec.sent()
    );
    assert!(rec.asked().iter().all(|c| c.starts_with("show ")));
}

#[tokio::test]
async fn a_rollback_the_device_did_not_take_fails_verification() {
    let rec = recording(&[VLANS_AFTER]);
    let err = change_and_roll_back(&rec).await.1.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Verify, "{err}");
}

/// The driver declares `rollback_retry`, so the gateway calls `rollback` again after a failed one:
/// the second call still knows the pre-state and sends the inverse again.
#[tokio::test]
async fn a_failed_rollback_can_be_retried_as_the_driver_declares() {
    let rec = recording(&[VLANS_AFTER, VLANS_BEFORE]);
    let (mut d, first) = change_and_roll_back(&rec).await;
    assert_eq!(first.unwrap_err().kind(), ErrorKind::Verify);
    assert!(d.capabilities().rollback_retry);
    let sent = rec.sent().len();
    d.rollback().await.unwrap();
    assert!(
        rec.sent()[sent..].iter().any(|l| l == "no vlan 30"),
        "the retry removes the VLAN again: {:?}",
        rec.sent()
    );
}

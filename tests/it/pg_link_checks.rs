//! What gateways share through one PostgreSQL beside runs: the status page's link checks
//! (src/history/link_checks.rs: one gateway's check is the newest for every gateway, and only the
//! newest `KEPT` are kept), and signed requests accepted once across gateways. Needs PostgreSQL
//! (scripts/peers/postgres.sh install); fails loudly without it.

use crate::common;

use common::Postgres;
use netgw::history::link_checks::KEPT;
use netgw::history::{CheckOrigin, History, StoredLinkCheck};
use netgw::links::{Declared, End, LinkReport, Missing};

fn check(i: i64, origin: CheckOrigin) -> StoredLinkCheck {
    let end = |n: &str, p: &str| End {
        node: n.into(),
        port: p.into(),
    };
    let link = Declared {
        a: end("spine1", "Ethernet1"),
        b: end("leaf1", "Ethernet1"),
    };
    StoredLinkCheck {
        at: format!("2026-01-01T00:00:{:02}Z", i % 60),
        origin,
        report: LinkReport {
            up: vec![link.clone()],
            missing: vec![Missing {
                link,
                missing_on: vec![format!("leaf{i}")],
            }],
            unchecked: i as usize,
            ..LinkReport::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_gateways_link_check_is_every_gateways_newest() {
    let pg = Postgres::start();
    let url = || netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let now = "2026-01-01T00:00:00Z";
    let (a, _) = History::open_postgres(
        url(),
        100,
        now,
        "127.0.0.1:1",
        std::time::Duration::from_secs(10),
    )
    .await
    .unwrap();
    let (b, _) = History::open_postgres(
        url(),
        100,
        now,
        "127.0.0.1:2",
        std::time::Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(b.last_link_check().await.unwrap(), None);
    for i in 0..KEPT + 3 {
        let by = CheckOrigin::Page {
            by: format!("token:{i}"),
        };
        a.save_link_check(check(i, by)).await.unwrap();
    }
    let atomic = check(
        99,
        CheckOrigin::Atomic {
            run_id: "run-on-a".into(),
        },
    );
    a.save_link_check(atomic.clone()).await.unwrap();
    assert_eq!(b.last_link_check().await.unwrap(), Some(atomic));

    let c = netgw::pg::connect(&url()).await.unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM link_checks", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, KEPT, "older checks are dropped");
    for h in [a, b] {
        tokio::task::spawn_blocking(move || h.close())
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_request_is_accepted_by_one_gateway_only() {
    let pg = Postgres::start();
    let url = || netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let now = "2026-01-01T00:00:00Z";
    let open = |listen: &'static str| {
        History::open_postgres(url(), 100, now, listen, std::time::Duration::from_secs(10))
    };
    let (a, _) = open("127.0.0.1:1").await.unwrap();
    let (b, _) = open("127.0.0.1:2").await.unwrap();
    let t = 1_700_000_000;
    // Both gateways race for each of 20 signatures: exactly one wins each.
    for i in 0..20 {
        let digest = format!("{i:064x}");
        let (x, y) = tokio::join!(
            a.claim_signature(&digest, t + 900, "gateway-a", t),
            b.claim_signature(&digest, t + 900, "gateway-b", t)
        );
        let (x, y) = (x.unwrap(), y.unwrap());
        assert!(x ^ y, "signature {i}: a {x}, b {y}");
        // A replay to either is refused.
        assert!(
            !a.claim_signature(&digest, t + 900, "again", t)
                .await
                .unwrap()
        );
    }
    // Past its window a row is dropped (the signature's timestamp is refused by then anyway).
    let later = t + 901;
    assert!(
        a.claim_signature(&format!("{:064x}", 0), later + 900, "late", later)
            .await
            .unwrap(),
        "expired claims are forgotten"
    );
}

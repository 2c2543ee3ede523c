//! The gateway's integration tests, one binary with a module per feature: `cargo test -p netgw --test
//! it crash::` runs one of them. A filter matches anywhere in a test's path, so `serve::` also runs
//! `atomic_serve::` and `pg_serve::` (add `-- --skip atomic_serve:: --skip pg_serve::`), and `cli::`
//! also runs `atomic_cli::` and `links_cli::`.
//!
//! The tests share one process: none may set environment variables, change the working directory or
//! install a global subscriber (each passes what it needs to the processes it starts). `common` is
//! the harness they share (peers, fixtures, netgw-lab, the `netgw` binary); the in-memory device the
//! unit tests use too is `netgw::testing` (the `testing` feature).

mod common;

mod atomic;
mod atomic_cli;
mod atomic_links;
mod atomic_serve;
mod bad_input;
mod bench_floor;
mod chef_attrs;
mod chef_server;
mod clab_e2e;
mod clab_trust;
mod clab_walkthrough;
mod classifier;
mod cli;
mod containerlab_files;
mod cookbook_sync;
mod cookbooks;
mod crash;
mod demo;
mod docs;
mod dry_run;
mod e2e_chef;
mod e2e_converge;
mod faults;
mod fn_length;
mod kill_confirm;
mod lag;
mod lag_facts;
mod layers;
mod links_cli;
mod nautobot;
mod nornir_parity;
mod peer_kill;
mod pg_link_checks;
mod pg_lock_loss;
mod pg_serve;
mod plan;
mod races;
mod recovery_lock;
mod rollout;
mod secrets;
mod security;
mod serve;
mod snmp_converge;
mod soak;
mod test_layout;
mod trigger;
mod two_processes;
mod ui_browser;
mod ui_http;
mod upgrade;
mod validate;

//! Command-line interface (docs/design.md §6). Exit codes: 0 success, 1 a node failed, 2 usage or
//! configuration error, 3 a node failed because the gateway's own side broke (store, Chef server,
//! run lock, internal).

use crate::engine::{EngineOptions, Infra, Job, RegistryConnector};
use crate::inventory::Inventory;
use crate::report;
use crate::resolve::{self, ResolveError};
use crate::store::local::LocalRepo;
use clap::{Parser, Subcommand, ValueEnum};
use netgw_models::NodeName;
use netgw_models::attributes::parse_dotted_path;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

mod converge;
mod facts;
mod inventory;
mod links;
mod manual;
mod node;
mod plan;
mod render;
mod serve;
mod trigger;
mod validate;

use converge::*;
use facts::*;
use inventory::*;
use links::*;
use manual::*;
use node::*;
use plan::*;
use render::*;
use serve::*;
use trigger::*;
use validate::*;

#[derive(Debug, Parser)]
#[command(
    name = "netgw",
    version,
    about = "Converge network devices from Chef-style desired state"
)]
pub struct Cli {
    /// Local repo (ChefFS layout: nodes/, roles/, environments/, cookbooks/).
    #[arg(long, global = true, env = "NETGW_REPO", default_value = "repo")]
    pub repo: PathBuf,

    /// Log filter (tracing EnvFilter syntax), e.g. `info` or `netgw=debug`.
    #[arg(long, global = true, env = "NETGW_LOG", default_value = "warn")]
    pub log: String,

    /// Chef server URL (`https://chef/organizations/ORG`): desired state, roles, environments and
    /// (see --cookbooks) cookbooks come from it and current state is saved to it.
    #[arg(long, global = true, env = "NETGW_CHEF_SERVER")]
    pub server: Option<String>,

    /// Where cookbooks come from: `server` (the versions the Chef server resolves for each node,
    /// synchronized into the state directory) or `repo` (--repo's cookbooks/). Default: `server` with
    /// --server, else `repo`.
    #[arg(long, global = true, env = "NETGW_COOKBOOKS", value_enum)]
    pub cookbooks: Option<CookbookSource>,

    /// Chef client the gateway signs requests as (with --server).
    #[arg(long, global = true, env = "NETGW_CHEF_CLIENT")]
    pub client_name: Option<String>,

    /// That client's private key (PEM; with --server).
    #[arg(long, global = true, env = "NETGW_CHEF_KEY")]
    pub client_key: Option<PathBuf>,

    /// The secret file of encrypted data bag items (Chef's `encrypted_data_bag_secret`, the file
    /// `knife data bag ... --secret-file` encrypted them with); recipes' `data_bag_item` decrypts
    /// with it. Without it an encrypted item is refused.
    #[arg(long, global = true, env = "NETGW_ENCRYPTED_DATA_BAG_SECRET")]
    pub encrypted_data_bag_secret: Option<PathBuf>,

    /// External node classifier (Puppet ENC contract), run with each node's name.
    #[arg(long, global = true, env = "NETGW_CLASSIFIER")]
    pub classifier: Option<PathBuf>,

    /// The gateway's own state (run locks, intent journals), never inside the repo (default:
    /// $XDG_STATE_HOME/netgw, else ~/.local/state/netgw).
    #[arg(long, global = true, env = "NETGW_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Where runs save each node's current state: `state` (the state directory, so the repo can be a
    /// read-only or clean git checkout) or `repo` (the repo's nodes/current/).
    #[arg(
        long,
        global = true,
        env = "NETGW_CURRENT_STATE",
        value_enum,
        default_value = "state"
    )]
    pub current_state: CurrentStateAt,

    /// SSH known_hosts file for hosts whose inventory sets no `data.netgw.known_hosts`
    /// (default: ./known_hosts).
    #[arg(long, global = true, env = "NETGW_KNOWN_HOSTS")]
    pub known_hosts: Option<PathBuf>,

    /// Record the key of an SSH host not yet in known_hosts (trust on first use) for hosts whose
    /// inventory sets no `data.netgw.accept_new_host_keys`; a changed key is always refused.
    #[arg(long, global = true, env = "NETGW_ACCEPT_NEW_HOST_KEYS", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub accept_new_host_keys: bool,

    /// CA certificate(s) (PEM) that verify HTTPS devices (eAPI, iControl REST) whose inventory sets
    /// no `data.netgw.tls_ca` or `tls_verify`.
    #[arg(long, global = true, env = "NETGW_TLS_CA")]
    pub tls_ca: Option<PathBuf>,

    /// Do not verify HTTPS devices' certificates (hosts whose inventory sets no `tls_ca` or
    /// `tls_verify`); for labs only.
    #[arg(long, global = true, env = "NETGW_NO_TLS_VERIFY", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_tls_verify: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// `--current-state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CurrentStateAt {
    State,
    Repo,
}

/// `--cookbooks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CookbookSource {
    Server,
    Repo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Node objects.
    Node {
        #[command(subcommand)]
        command: NodeCommand,
    },
    /// Show a node's expanded run-list, roles, and attribute layers.
    Expand {
        /// Node name (`nodes/NAME.json` in the repo).
        name: String,
        /// Output: `human` (chef-client style) or `json`.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
    /// Converge devices to their desired state (all inventory hosts when no NODE is given).
    Converge {
        /// Hosts to converge: names, groups, globs, `!` exclusions and `&` intersections, as
        /// Ansible's --limit (`access,core`, 'acc*', 'all:!core'); all when none is given.
        #[arg(value_name = "SELECTION")]
        nodes: Vec<String>,
        #[command(flatten)]
        source: DeviceSource,
        /// Plan and stage on the device, show the device's diff, discard; change nothing, save nothing.
        #[arg(long)]
        why_run: bool,
        /// With --why-run: also write the plan to FILE (JSON: per node the observed state it was
        /// computed from and the exact changes), for `converge --plan FILE` to apply.
        #[arg(long, value_name = "FILE", requires = "why_run")]
        plan_out: Option<PathBuf>,
        /// Apply exactly the plan a `--why-run --plan-out` wrote, to the nodes it names only: each
        /// device is read again and refused, unchanged, when what the plan depends on moved.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["why_run", "atomic", "nodes"])]
        plan: Option<PathBuf>,
        /// Report only the nodes that changed (or would), failed or did not start; the others are
        /// counted in the summary line.
        #[arg(long)]
        changes_only: bool,
        /// Devices converged at once.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10000))]
        concurrency: u32,
        /// Seconds a device waits for confirmation before rolling a commit back by itself.
        #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(10..=3600))]
        confirm_timeout: u64,
        /// Seconds a node waits while another process converges it (its lock in --lock-dir) before
        /// failing; 0 fails at once.
        #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(0..=86400))]
        lock_timeout: u64,
        /// Directory of the per-node run locks shared by every netgw converging these nodes
        /// (default: STATE_DIR/repos/REPO-HASH/locks).
        #[arg(long, env = "NETGW_LOCK_DIR")]
        lock_dir: Option<PathBuf>,
        /// PostgreSQL of the gateways (`serve --database`): each node's run also takes its advisory
        /// lock there, so this run and the gateways never converge one node at once.
        #[arg(long, env = "NETGW_DATABASE_URL", hide_env_values = true)]
        database: Option<String>,
        /// Output: `human` (chef-client style) or `json`.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
        #[command(flatten)]
        reporting: Reporting,
        /// One all-or-nothing transaction over every selected node (docs/atomic.md): stage everywhere,
        /// then commit, verify and confirm everywhere; any failure leaves every device as it was.
        #[arg(long)]
        atomic: bool,
        /// With --atomic: seconds each phase (stage everywhere; commit + verify everywhere) may take
        /// for all its nodes together before the transaction is abandoned and undone.
        #[arg(long, default_value_t = 300, requires = "atomic", value_parser = clap::value_parser!(u64).range(5..=86400))]
        phase_timeout: u64,
        /// With --atomic: after every device verified and before any confirms, compare the LLDP
        /// neighbours of every driven node of the topology with its declared links (as `netgw
        /// links`); a missing or undeclared link rolls the whole transaction back.
        #[arg(long, requires = "atomic")]
        check_links: bool,
        /// The containerlab topology whose links --check-links compares (default: --topology).
        #[arg(long, requires = "check_links")]
        links_topology: Option<PathBuf>,
        #[command(flatten)]
        rollout: RolloutArgs,
    },
    /// Gather and print a device's facts (its automatic attributes).
    Facts {
        /// Hosts to ask (a selection, as for converge): one host prints its facts, several print
        /// each host's (JSON: one object keyed by host).
        #[arg(value_name = "SELECTION", required = true)]
        nodes: Vec<String>,
        #[command(flatten)]
        source: DeviceSource,
        /// Output: `json` or `human` (one `key: value` per line).
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
    },
    /// HTTP trigger API (docs/design.md §7): converge on request, with run history; see docs/serve.md.
    Serve {
        /// Address to listen on (`127.0.0.1:0` picks a free port; the bound address is printed).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// Nornir SimpleInventory of the devices the API may converge.
        #[arg(long, env = "NETGW_INVENTORY")]
        inventory: Option<PathBuf>,
        /// Configuration file (YAML): tokens, Chef clients, limits; flags win over it.
        #[arg(long, env = "NETGW_SERVE_CONFIG")]
        config: Option<PathBuf>,
        /// SQLite run history (default: the state directory's history-ADDR-PORT.db for this repo and
        /// the address listened on).
        #[arg(long)]
        db: Option<PathBuf>,
        /// PostgreSQL shared by several gateways (postgres://USER:PASSWORD@HOST:PORT/DB) instead of
        /// the SQLite history; better in NETGW_DATABASE_URL or serve.yml than on the command line.
        #[arg(
            long,
            env = "NETGW_DATABASE_URL",
            hide_env_values = true,
            conflicts_with = "db"
        )]
        database: Option<String>,
        /// Node runs that may wait before triggers get 429.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        max_queue: Option<u32>,
        /// Node runs at once.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10000))]
        concurrency: Option<u32>,
    },
    /// Ask a `netgw serve` gateway to converge (the CI client): a selection, why-run or atomic;
    /// with --wait, follow the run to its end and exit with its outcome as `converge` would.
    Trigger(TriggerArgs),
    /// Print the resolved inventory hosts (like `ansible-inventory --list`): address, platform, driver
    /// or why not driven, credentials (passwords and every other secret redacted), groups, data,
    /// connection options, trust, and the layer each value came from.
    Inventory {
        /// Hosts to print (a selection, as for converge); all when none is given.
        #[arg(value_name = "SELECTION")]
        hosts: Vec<String>,
        #[command(flatten)]
        source: DeviceSource,
        /// Output: `human` or `json`.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
    /// Compare the links a containerlab topology declares with the LLDP neighbours the devices
    /// report: declared links seen on both ends, declared links missing (and from which end),
    /// undeclared adjacencies. Exit 0 when they agree, 1 when they differ (or a device did not
    /// answer), 2 on bad input.
    Links {
        /// Nodes whose LLDP is read and whose links between them are compared (a selection, as
        /// for converge); every driven node of the topology when none is given.
        #[arg(value_name = "SELECTION")]
        nodes: Vec<String>,
        /// The topology (`*.clab.yml`) whose `links:` are compared; without --inventory its nodes
        /// are reached as for `--topology` elsewhere.
        #[arg(long, env = "NETGW_TOPOLOGY")]
        topology: PathBuf,
        /// Nornir inventory saying how to reach the topology's nodes (host names = node names).
        #[arg(long)]
        inventory: Option<PathBuf>,
        /// Devices read at once.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10000))]
        concurrency: u32,
        /// Seconds one device may take to answer.
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
        /// Output: `human` or `json`.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
    /// Check the repo and the selected nodes without contacting a device: every role and
    /// environment file, each node with its roles, environment and cookbooks, every resource
    /// compiled. Exit 0 when nothing is wrong (warnings allowed), 1 when something is, 2 on usage.
    Validate {
        /// Nodes to check (a selection, as for converge); without --inventory or --topology, every
        /// node file of the repo.
        #[arg(value_name = "SELECTION")]
        nodes: Vec<String>,
        #[command(flatten)]
        source: DeviceSource,
        /// Output: `human` (FILE:LINE: error: ...), `json`, or `github` (annotations GitHub Actions
        /// shows on the pull request).
        #[arg(long, value_enum, default_value = "human")]
        format: ValidateFormat,
    },
    /// Compare devices with their desired state; change nothing (exit 1 when something drifted).
    Drift {
        /// Hosts to compare (a selection, as for converge); all when none is given.
        #[arg(value_name = "SELECTION")]
        nodes: Vec<String>,
        #[command(flatten)]
        source: DeviceSource,
        /// Devices compared at once.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10000))]
        concurrency: u32,
        /// Directory of the per-node run locks (as for converge).
        #[arg(long, env = "NETGW_LOCK_DIR")]
        lock_dir: Option<PathBuf>,
        /// Output: `human` (chef-client style) or `json`.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
        /// Report only the nodes that drifted or could not be compared; the others are counted in
        /// the summary line.
        #[arg(long)]
        changes_only: bool,
    },
    /// Print the completion script for SHELL, generated from this binary's commands and options
    /// (e.g. `netgw completions bash > ~/.local/share/bash-completion/completions/netgw`).
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the netgw(1) man page (roff); with --out-dir, write netgw.1 and a page per command
    /// (netgw-converge.1, ...) there (e.g. `netgw man --out-dir ~/.local/share/man/man1`).
    Man {
        /// Write every page into DIR (created if missing) instead of netgw(1) on stdout.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

/// How a converge rolls out (`crate::engine::rollout`; docs/usage.md "Rolling out").
#[derive(Debug, Default, clap::Args)]
pub struct RolloutArgs {
    /// Converge in batches, the next only once the previous finished: a count, a percentage of the
    /// selected nodes, or a list whose last size repeats (`1,5,25%`: one canary, then 5, then a
    /// quarter at a time), as Ansible's `serial`. A batch whose every node failed stops the run.
    #[arg(long, value_name = "N|P%[,...]", conflicts_with = "atomic")]
    pub serial: Option<crate::engine::rollout::Serial>,
    /// Start no more nodes once N have failed, or once more than P% of the selected nodes failed
    /// (Ansible's max_fail_percentage; 0% stops at the first failure). Nodes in flight finish; the
    /// others are reported `not started`.
    #[arg(long, value_name = "N|P%", conflicts_with = "atomic")]
    pub max_fail: Option<crate::engine::rollout::Amount>,
    /// Keep trying nodes whose login credentials another device already rejected (by default they
    /// are not started, to keep clear of an AAA lockout).
    #[arg(long)]
    pub continue_on_rejected_login: bool,
}

impl RolloutArgs {
    fn rollout(&self) -> crate::engine::rollout::Rollout {
        crate::engine::rollout::Rollout {
            serial: self.serial.clone().unwrap_or_default(),
            max_fail: self.max_fail,
            stop_on_rejected_login: !self.continue_on_rejected_login,
        }
    }
}

/// Where run reports go besides stdout.
#[derive(Debug, Default, clap::Args)]
pub struct Reporting {
    /// Post Chef data-collector messages (run_start, run_converge) to this URL.
    #[arg(long, env = "NETGW_DATA_COLLECTOR_URL")]
    pub data_collector: Option<String>,
    /// Token for the data collector: a literal, `${ENV_VAR}` or `file:PATH`.
    #[arg(long, env = "NETGW_DATA_COLLECTOR_TOKEN", hide_env_values = true)]
    pub data_collector_token: Option<String>,
}

/// Where devices come from.
#[derive(Debug, clap::Args)]
pub struct DeviceSource {
    /// Nornir SimpleInventory (one file with hosts/groups/defaults, a hosts file, or a directory), or a
    /// Nautobot server (`nautobot+https://HOST/?location=L&role=R`, or a file with a `nautobot:` key).
    #[arg(long, env = "NETGW_INVENTORY", conflicts_with = "topology")]
    pub inventory: Option<PathBuf>,
    /// containerlab topology (`*.clab.yml`): nodes of kinds netgw drives, by management address.
    #[arg(long, env = "NETGW_TOPOLOGY")]
    pub topology: Option<PathBuf>,
    /// Chef search query (with `--server`) selecting the nodes to run, e.g. `role:leaf` or
    /// `chef_environment:prod`; the inventory still says how to reach them.
    #[arg(long)]
    pub search: Option<String>,
}

impl DeviceSource {
    /// `netgw links`: the topology's nodes, reached through `inventory` when one is given.
    fn of_topology(topology: &std::path::Path, inventory: &Option<PathBuf>) -> Self {
        DeviceSource {
            inventory: inventory.clone(),
            topology: Some(topology.to_path_buf()),
            search: None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum NodeCommand {
    /// Desired, current and merged view of a node, or one attribute with the precedence that won.
    Show {
        /// Node name (`nodes/NAME.json` in the repo).
        name: String,
        /// Dotted attribute path, e.g. `netdev.vlans.100.name`.
        #[arg(long)]
        attribute: Option<String>,
        /// Output: `human` (chef-client style) or `json`.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
}

/// Exit status with its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    NodeFailed = 1,
    Usage = 2,
    GatewayFailed = 3,
    /// The output's reader went away (`netgw ... | head`): 128 + SIGPIPE, what a shell reports for a
    /// command a closed pipe ended, so `set -o pipefail` still sees the output was not all read.
    ReaderGone = 141,
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> Self {
        ExitCode::from(s as u8)
    }
}

/// The command line; `serve` runs the HTTP front-end the binary passes in.
pub fn main(serve: crate::gateway::Serve) -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                Status::Usage
            } else {
                Status::Ok
            };
            let _ = e.print();
            return code.into();
        }
    };
    init_tracing(&cli.log);
    let mut out = SafeStdout::new(output_format(&cli.command));
    let result = run(&cli, &mut out, serve);
    let _ = out.flush();
    match result {
        Ok(status) => status.into(),
        Err(Failure { status, message }) if message.is_empty() => status.into(),
        Err(Failure { status, message }) => {
            let _ = out.flush();
            eprintln!("netgw: error: {}", crate::terminal::terminal_safe(&message));
            status.into()
        }
    }
}

fn init_tracing(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // No colours: every log line goes through `crate::terminal::terminal_safe`, which would show them escaped.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(|| SafeStderr)
        .try_init();
}

/// An error that ends the command, with the exit status it maps to.
#[derive(Debug)]
pub struct Failure {
    pub status: Status,
    pub message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Failure {
            status: Status::Usage,
            message: message.into(),
        }
    }
}

impl From<ResolveError> for Failure {
    fn from(e: ResolveError) -> Self {
        let status = if e.is_node_failure() {
            Status::NodeFailed
        } else {
            Status::Usage
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

impl From<crate::store::StoreError> for Failure {
    fn from(e: crate::store::StoreError) -> Self {
        ResolveError::from(e).into()
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        // The reader went away (`netgw node show sw1 | head -3`): nothing to say to anyone, as
        // `cat` and `grep` end on SIGPIPE without a word.
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Failure {
                status: Status::ReaderGone,
                message: String::new(),
            };
        }
        Failure {
            status: Status::Usage,
            message: format!("writing output: {e}"),
        }
    }
}

/// Run a parsed command, writing its output to `out`.
pub fn run(
    cli: &Cli,
    out: &mut dyn Write,
    serve: crate::gateway::Serve,
) -> Result<Status, Failure> {
    match &cli.command {
        Command::Node {
            command:
                NodeCommand::Show {
                    name,
                    attribute,
                    format,
                },
        } => {
            let repo = open_repo(cli)?;
            node_show(cli, &repo, name, attribute.as_deref(), *format, out)
        }
        Command::Expand { name, format } => {
            let repo = LocalRepo::open(&cli.repo)?
                .with_data_bag_secret(cli.encrypted_data_bag_secret.clone());
            if cli.server.is_some() {
                return expand_from_server(cli, &repo, name, *format, out);
            }
            expand_cmd(&repo, name, *format, out)
        }
        cmd @ Command::Converge { .. } => converge_args(cli, cmd, out),
        Command::Drift {
            nodes,
            source,
            concurrency,
            lock_dir,
            format,
            changes_only,
        } => {
            let opts = EngineOptions {
                why_run: true,
                compare_only: true,
                concurrency: *concurrency as usize,
                ..Default::default()
            };
            let coordination = crate::coordination::Settings {
                state_dir: cli.state_dir.clone(),
                lock_dir: lock_dir.clone(),
                database: None,
            };
            let run = Run {
                opts,
                coordination,
                reporting: &Reporting::default(),
                plan_out: None,
                plan_file: None,
                changes_only: *changes_only,
            };
            converge_cmd(cli, nodes, source, run, *format, out)
        }
        Command::Facts {
            nodes,
            source,
            format,
        } => facts_cmd(cli, nodes, source, *format, out),
        Command::Links {
            nodes,
            topology,
            inventory,
            concurrency,
            timeout,
            format,
        } => {
            let source = DeviceSource::of_topology(topology, inventory);
            let wait = std::time::Duration::from_secs(*timeout);
            links_cmd(
                cli,
                &source,
                nodes,
                *concurrency as usize,
                wait,
                *format,
                out,
            )
        }
        Command::Inventory {
            hosts,
            source,
            format,
        } => inventory_cmd(cli, hosts, source, *format, out),
        cmd @ Command::Serve { .. } => serve_cmd(cli, cmd, serve),
        Command::Trigger(args) => trigger_cmd(cli, args, out),
        Command::Validate {
            nodes,
            source,
            format,
        } => validate_cmd(cli, nodes, source, *format, out),
        Command::Completions { shell } => completions_cmd(*shell, out),
        Command::Man { out_dir } => man_cmd(out_dir.as_deref(), out),
    }
}

/// The repo `--repo` names, its current state kept where `--current-state` says (a warning when
/// the state directory keeps it but the repo still holds some).
pub(super) fn open_repo(cli: &Cli) -> Result<LocalRepo, Failure> {
    let repo =
        LocalRepo::open(&cli.repo)?.with_data_bag_secret(cli.encrypted_data_bag_secret.clone());
    let at = current_at(cli.current_state, cli.state_dir.as_deref(), repo.root());
    let repo = repo.with_current(at);
    if let Some(note) = repo.repo_current_note() {
        tracing::warn!("{note}");
    }
    Ok(repo)
}

/// `--current-state` for the repo at `repo`, the state directory `state_dir` (or its default).
pub fn current_at(
    at: CurrentStateAt,
    state_dir: Option<&std::path::Path>,
    repo: &std::path::Path,
) -> crate::store::local::CurrentAt {
    match at {
        CurrentStateAt::Repo => crate::store::local::CurrentAt::Repo,
        CurrentStateAt::State => {
            let root = state_dir
                .map(|d| d.to_owned())
                .unwrap_or_else(crate::state::default_root);
            crate::store::local::CurrentAt::State(crate::state::current_dir(&root, repo))
        }
    }
}

/// `--database URL` parsed; its error never repeats the password.
fn database_url(text: &Option<String>) -> Result<Option<crate::pg::DatabaseUrl>, Failure> {
    text.as_deref()
        .map(crate::pg::DatabaseUrl::parse)
        .transpose()
        .map_err(|e| Failure::usage(format!("--database: {e}")))
}

/// The command line's trust settings.
fn trust(cli: &Cli) -> crate::inventory::Trust {
    crate::inventory::Trust {
        known_hosts: cli.known_hosts.clone(),
        accept_new_host_keys: cli.accept_new_host_keys,
        tls_ca: cli.tls_ca.clone(),
        no_tls_verify: cli.no_tls_verify,
    }
}

fn load_inventory(cli: &Cli, source: &DeviceSource) -> Result<Inventory, Failure> {
    let (path, inv) = match (&source.inventory, &source.topology) {
        (Some(p), _) => (p, Inventory::load(p)),
        (None, Some(p)) => (p, Inventory::from_topology(p)),
        (None, None) => {
            return Err(Failure::usage(
                "no devices: give --inventory FILE or --topology FILE.clab.yml (or set NETGW_INVENTORY)",
            ));
        }
    };
    let mut inv = inv.map_err(|e| Failure::usage(e.to_string()))?;
    inv.trust = trust(cli);
    for w in &inv.warnings {
        tracing::warn!(inventory = %path.display(), "{w}");
    }
    Ok(inv)
}

/// The hosts a selection names (`crate::inventory::select`): all when it is empty.
fn select(inv: &Inventory, selection: &[String]) -> Result<Vec<String>, Failure> {
    crate::inventory::select::select(inv, selection).map_err(|e| Failure::usage(e.to_string()))
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("starting the async runtime: {e}")))
}

/// The Chef server store when `--server` is given (docs/design.md §5).
fn chef_store(cli: &Cli) -> Result<Option<crate::store::chef::ChefServer>, Failure> {
    let Some(url) = &cli.server else {
        return Ok(None);
    };
    let (Some(client), Some(key)) = (&cli.client_name, &cli.client_key) else {
        return Err(Failure::usage(
            "--server needs --client-name and --client-key (or NETGW_CHEF_CLIENT and NETGW_CHEF_KEY)",
        ));
    };
    let config = crate::store::chef::ChefConfig::new(url.as_str(), client.as_str(), key);
    crate::store::chef::ChefServer::new(config)
        .map(Some)
        .map_err(|e| Failure::usage(e.to_string()))
}

/// `--cookbooks`, or its default: `server` with `--server`, else `repo`.
fn cookbook_source(
    cli: &Cli,
    server: Option<&crate::store::chef::ChefServer>,
) -> Result<CookbookSource, Failure> {
    match (cli.cookbooks, server) {
        (Some(CookbookSource::Server), None) => Err(Failure::usage(
            "--cookbooks server needs --server (a Chef server to synchronize cookbooks from)",
        )),
        (Some(source), _) => Ok(source),
        (None, Some(_)) => Ok(CookbookSource::Server),
        (None, None) => Ok(CookbookSource::Repo),
    }
}

fn node_name(name: &str) -> Result<NodeName, Failure> {
    NodeName::new(name).map_err(|e| Failure::usage(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::NodeErrorKind;
    use crate::report::{NodeReport, NodeStatus, RunReport, summarize};

    fn report(kinds: &[Option<NodeErrorKind>]) -> RunReport {
        let nodes: Vec<NodeReport> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let mut n = NodeReport::new(&format!("n{i}"), false);
                if k.is_some() {
                    n.status = NodeStatus::Failed;
                    n.error_kind = *k;
                }
                n
            })
            .collect();
        RunReport {
            run_id: "r".into(),
            why_run: false,
            started_at: String::new(),
            duration_secs: 0.0,
            summary: summarize(&nodes),
            nodes,
            cookbooks: None,
            transaction: None,
        }
    }

    #[test]
    fn drift_says_which_nodes_differ_and_which_could_not_be_compared() {
        let mut r = report(&[None, None, Some(NodeErrorKind::Transport)]);
        assert_eq!(
            drift_verdict(&r),
            "No drift: every node compared matches its desired state; 1 node(s) could not be compared: n2"
        );
        r.nodes[1].updated = 3;
        r.summary = summarize(&r.nodes);
        assert_eq!(
            drift_verdict(&r),
            "Drift: 1 node(s) differ from their desired state (3 resource(s)): n1; 1 node(s) could not be compared: n2"
        );
    }

    #[test]
    fn cookbooks_come_from_the_server_by_default_only_with_one() {
        let cli = |args: &[&str]| {
            Cli::try_parse_from([&["netgw"], args, &["node", "show", "sw1"]].concat()).unwrap()
        };
        assert!(cookbook_sync(&cli(&[]), None).unwrap().is_none());
        let e = cookbook_sync(&cli(&["--cookbooks", "server"]), None).unwrap_err();
        assert!(
            e.message.contains("--cookbooks server needs --server"),
            "{}",
            e.message
        );
        let key = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/chef/mixlib-authentication/spec_private_key.pem"
        );
        let server = crate::store::chef::ChefServer::new(crate::store::chef::ChefConfig::new(
            "http://127.0.0.1:1",
            "admin",
            key,
        ))
        .unwrap();
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().to_str().unwrap();
        let sync = cookbook_sync(&cli(&["--state-dir", dir]), Some(&server)).unwrap();
        assert!(sync.unwrap().cache_dir().starts_with(state.path()));
        let repo = cookbook_sync(&cli(&["--cookbooks", "repo"]), Some(&server)).unwrap();
        assert!(repo.is_none());
    }

    #[test]
    fn exit_codes_follow_the_error_kinds() {
        use NodeErrorKind as K;
        assert_eq!(exit_status(&report(&[None]), false), Status::Ok);
        assert_eq!(exit_status(&report(&[None]), true), Status::NodeFailed);
        for k in [
            K::Device,
            K::Transport,
            K::Timeout,
            K::Auth,
            K::Config,
            K::Cancelled,
            K::Transaction,
        ] {
            assert_eq!(
                exit_status(&report(&[None, Some(k)]), false),
                Status::NodeFailed,
                "{k}"
            );
        }
        for k in [K::Store, K::Server, K::Lock, K::Internal] {
            assert_eq!(
                exit_status(&report(&[Some(K::Device), Some(k)]), false),
                Status::GatewayFailed,
                "{k}"
            );
        }
    }

    use clap::CommandFactory;

    /// Every argument of every command says what it is (`--help`).
    #[test]
    fn every_argument_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {} (command)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "netgw", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }
}

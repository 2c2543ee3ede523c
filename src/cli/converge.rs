//! `netgw converge` and `netgw drift`: the selection, the run through `crate::gateway`, progress,
//! the data collector, the report and the exit status.

use super::*;

/// `--check-links`: the declared links to compare after verify (`--links-topology`, else
/// `--topology`), read before any device is contacted.
pub(super) fn link_check(
    cli: &Cli,
    source: &DeviceSource,
    check_links: bool,
    links_topology: &Option<std::path::PathBuf>,
    concurrency: u32,
    phase_timeout: u64,
) -> Result<Option<Arc<crate::links::LinkCheck>>, Failure> {
    if !check_links {
        return Ok(None);
    }
    let Some(path) = links_topology.as_ref().or(source.topology.as_ref()) else {
        return Err(Failure::usage(
            "--check-links needs the declared links: --topology FILE or --links-topology FILE",
        ));
    };
    let topo =
        crate::inventory::Inventory::topology(path).map_err(|e| Failure::usage(e.to_string()))?;
    let inv = Arc::new(load_inventory(cli, source)?);
    let wait = std::time::Duration::from_secs(phase_timeout);
    Ok(Some(Arc::new(crate::links::LinkCheck::new(
        &topo,
        inv,
        concurrency as usize,
        wait,
    ))))
}

/// `netgw converge`: its options into the run's options and coordination settings, then the run.
pub(super) fn converge_args(
    cli: &Cli,
    cmd: &Command,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let Command::Converge {
        nodes,
        source,
        why_run,
        plan_out,
        plan,
        changes_only,
        concurrency,
        confirm_timeout,
        lock_timeout,
        lock_dir,
        database,
        reporting,
        format,
        atomic,
        phase_timeout,
        check_links,
        links_topology,
        rollout,
    } = cmd
    else {
        return Err(Failure::usage("converge: not a converge command"));
    };
    let check_links = link_check(
        cli,
        source,
        *check_links,
        links_topology,
        *concurrency,
        *phase_timeout,
    )?;
    let opts = EngineOptions {
        check_links,
        atomic: atomic.then(|| std::time::Duration::from_secs(*phase_timeout)),
        why_run: *why_run,
        concurrency: *concurrency as usize,
        confirm_timeout: std::time::Duration::from_secs(*confirm_timeout),
        lock_timeout: std::time::Duration::from_secs(*lock_timeout),
        rollout: rollout.rollout(),
        plan_out: plan_out.is_some(),
        plan: plan.as_deref().map(load_plan).transpose()?.map(Arc::new),
        ..Default::default()
    };
    let coordination = crate::coordination::Settings {
        state_dir: cli.state_dir.clone(),
        lock_dir: lock_dir.clone(),
        database: database_url(database)?,
    };
    let run = Run {
        opts,
        coordination,
        reporting,
        plan_out: plan_out.as_deref(),
        plan_file: plan.as_deref(),
        changes_only: *changes_only,
    };
    converge_cmd(cli, nodes, source, run, *format, out)
}

/// One converge or drift run of the command line: what it does, where it coordinates, what it
/// reports besides its output.
pub(super) struct Run<'a> {
    pub(super) opts: EngineOptions,
    pub(super) coordination: crate::coordination::Settings,
    pub(super) reporting: &'a Reporting,
    /// `--plan-out`: where to write the why-run's plan.
    pub(super) plan_out: Option<&'a std::path::Path>,
    /// `--plan`: the plan file `opts.plan` was read from.
    pub(super) plan_file: Option<&'a std::path::Path>,
    /// `--changes-only`: report only the nodes that changed, drifted or failed.
    pub(super) changes_only: bool,
}

pub(super) fn converge_cmd(
    cli: &Cli,
    nodes: &[String],
    source: &DeviceSource,
    run: Run<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let Run {
        mut opts,
        coordination,
        reporting,
        plan_out,
        plan_file,
        changes_only,
    } = run;
    let repo = open_repo(cli)?;
    let inv = load_inventory(cli, source)?;
    let mut names = match (&opts.plan, plan_file) {
        (Some(plan), Some(path)) => plan_nodes(plan, path, &inv)?,
        _ => select(&inv, nodes)?,
    };
    search_filter(cli, source, &inv, &mut names)?;
    // Hosts netgw does not drive: one warning line each, reported `skipped`, never run.
    let mut skipped = Vec::new();
    names.retain(|n| match inv.not_driven(n) {
        Some(reason) => {
            tracing::warn!("{n}: skipped: not driven by netgw: {reason}");
            skipped.push(report::NodeReport::skipped(n, opts.why_run, &reason));
            false
        }
        None => true,
    });
    let jobs: Vec<Job> = names
        .iter()
        .map(|n| Job {
            name: n.clone(),
            target: inv.target(n).map_err(|e| e.to_string()),
        })
        .collect();
    let compare_only = opts.compare_only;
    let rt = runtime()?;
    let mut sinks: Vec<crate::report::EventSink> = Vec::new();
    let progress = progress_bar(jobs.len());
    if let Some(pb) = &progress {
        let pb = pb.clone();
        sinks.push(Arc::new(move |e| {
            if let crate::report::RunEvent::NodeFinished { node, .. } = e {
                pb.set_message(crate::terminal::terminal_safe(&node).into_owned());
                pb.inc(1);
            }
        }));
    }
    let collector_task = start_collector(cli, reporting, &rt, &mut sinks)?;
    if !sinks.is_empty() {
        opts.events = Some(Arc::new(move |e: crate::report::RunEvent| {
            for s in &sinks {
                s(e.clone());
            }
        }));
    }
    let server = chef_store(cli)?;
    opts.cookbook_sync = cookbook_sync(cli, server.as_ref())?;
    let store: Arc<dyn crate::store::NodeStore> = match server {
        Some(server) => Arc::new(server),
        None => Arc::new(repo.clone()),
    };
    let infra = Infra::open(store, repo, Arc::new(RegistryConnector), &coordination)
        .with_classifier(cli.classifier.clone())
        .with_intent(&inv);
    let results_to = inv.results.clone();
    let report = rt.block_on(async move {
        // Open transactions this run touches are recovered whole first (crate::gateway).
        let report = crate::gateway::converge(&infra, jobs, &inv, opts).await;
        if let Some(task) = collector_task {
            // The engine's sink (and so the channel) is dropped with the options: the poster drains and ends.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(30), task).await;
        }
        report
    });
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    let mut report = report;
    report.nodes.extend(skipped);
    report.summary = report::summarize(&report.nodes);
    let plan_note = plan_out.map(|p| write_plan(p, &report)).transpose()?;
    let shown = Shown {
        drift: compare_only,
        hidden: if changes_only {
            let before = report.nodes.len();
            report.nodes.retain(report::has_news);
            Some(before - report.nodes.len())
        } else {
            None
        },
    };
    // Recorded before the report is written: a reader that went away changes nothing on the server.
    if let Some(to) = results_to {
        record_results(&to, &report, compare_only);
    }
    write_report(&report, format, shown, out)?;
    if let (Some(note), Format::Human) = (plan_note, format) {
        write!(out, "{note}")?;
    }
    let drifted = compare_only && report.summary.updated > 0;
    if compare_only && matches!(format, Format::Human) {
        // The summary above says "would be updated"; say in words what the exit status says.
        writeln!(out, "{}", drift_verdict(&report))?;
    }
    Ok(exit_status(&report, drifted))
}

/// Each node's outcome back to the inventory's source (Nautobot): `converged`, `up to date`,
/// `drifted`, `in sync`, `failed` (why-run records nothing), with the run id and start time. A
/// failure to record is a warning: the devices' outcome stands.
fn record_results(
    to: &crate::inventory::nautobot::Results,
    report: &report::RunReport,
    compare_only: bool,
) {
    if report.why_run && !compare_only {
        return;
    }
    let notes: Vec<(String, String)> = report
        .nodes
        .iter()
        .filter_map(|n| {
            report::outcome_note(n, &report.run_id, &report.started_at, compare_only)
                .map(|text| (n.name.clone(), text))
        })
        .collect();
    if let Err(e) = to.record(&notes) {
        tracing::warn!("recording the run's results in the inventory's source: {e}");
    }
}

/// With `--search`, only the selected nodes the Chef server's search also finds.
pub(super) fn search_filter(
    cli: &Cli,
    source: &DeviceSource,
    inv: &Inventory,
    names: &mut Vec<String>,
) -> Result<(), Failure> {
    let Some(query) = &source.search else {
        return Ok(());
    };
    let Some(server) = chef_store(cli)? else {
        return Err(Failure::usage(
            "--search needs --server (a Chef server to search)",
        ));
    };
    let found = runtime()?
        .block_on(server.search_nodes(query))
        .map_err(|e| Failure::usage(format!("--search {query:?}: {e}")))?;
    let missing: Vec<&String> = found
        .iter()
        .filter(|n| !inv.hosts.contains_key(*n))
        .collect();
    if !missing.is_empty() {
        tracing::warn!(
            ?missing,
            "search found nodes the inventory cannot reach; skipped"
        );
    }
    names.retain(|n| found.contains(n));
    Ok(())
}

/// With `--data-collector`, the task that posts run events to it (its sink joins `sinks`).
pub(super) fn start_collector(
    cli: &Cli,
    reporting: &Reporting,
    rt: &tokio::runtime::Runtime,
    sinks: &mut Vec<crate::report::EventSink>,
) -> Result<Option<tokio::task::JoinHandle<()>>, Failure> {
    let Some(url) = &reporting.data_collector else {
        return Ok(None);
    };
    let token = match &reporting.data_collector_token {
        Some(r) => Some(
            netgw_transport::credentials::resolve(r)
                .map_err(|e| Failure::usage(format!("--data-collector-token: {e}")))?,
        ),
        None => None,
    };
    let cfg = crate::collector::CollectorConfig {
        url: url.clone(),
        token,
        organization: "netgw".into(),
        server_fqdn: cli.repo.display().to_string(),
        timeout: std::time::Duration::from_secs(10),
    };
    let _guard = rt.enter();
    let (sink, task) = crate::collector::start(cfg).map_err(|e| Failure::usage(e.to_string()))?;
    sinks.push(sink);
    Ok(Some(task))
}

/// 3 when the gateway's own side failed a node (store, server, lock, internal: retrying elsewhere or
/// fixing the gateway helps, the device and the input are not to blame), else 1 when a node failed or
/// drifted.
pub(super) fn exit_status(report: &report::RunReport, drifted: bool) -> Status {
    let kinds = || report.nodes.iter().filter_map(|n| n.error_kind);
    if kinds().any(|k| k.is_gateway()) {
        Status::GatewayFailed
    } else if report.any_failed() || drifted {
        Status::NodeFailed
    } else {
        Status::Ok
    }
}

/// Cookbook synchronization from the Chef server when `--cookbooks` (or its default with `--server`)
/// says so.
pub(super) fn cookbook_sync(
    cli: &Cli,
    server: Option<&crate::store::chef::ChefServer>,
) -> Result<Option<Arc<crate::cookbook::sync::CookbookSync>>, Failure> {
    match (cookbook_source(cli, server)?, server) {
        (CookbookSource::Server, Some(server)) => {
            let root = cli
                .state_dir
                .clone()
                .unwrap_or_else(crate::state::default_root);
            Ok(Some(Arc::new(crate::cookbook::sync::CookbookSync::new(
                server.clone(),
                &root,
                crate::cookbook::sync::DEFAULT_TIMEOUT,
                crate::cookbook::sync::DEFAULT_DOWNLOADS,
            ))))
        }
        _ => Ok(None),
    }
}

/// A progress bar on stderr when it is a terminal; none otherwise (logs and pipes stay clean).
pub(super) fn progress_bar(len: usize) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() || len < 2 {
        return None;
    }
    let pb = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} nodes  {msg}")
    {
        pb.set_style(style);
    }
    Some(pb)
}

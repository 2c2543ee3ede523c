//! `netgw serve`: the store and cookbook source from the command line, then the HTTP front-end the
//! binary passed in (`crate::gateway::Serve`).

use super::*;

/// `netgw serve`: the store and cookbook source from the command line, then the API until stopped.
pub(super) fn serve_cmd(
    cli: &Cli,
    cmd: &Command,
    serve: crate::gateway::Serve,
) -> Result<Status, Failure> {
    let Command::Serve {
        listen,
        inventory,
        config,
        db,
        database,
        max_queue,
        concurrency,
    } = cmd
    else {
        return Err(Failure::usage("serve: not a serve command"));
    };
    let (listen, max_queue, concurrency) = (*listen, *max_queue, *concurrency);
    let database = database_url(database)?;
    let args = crate::gateway::ServeArgs {
        listen,
        config: config.clone(),
        inventory: inventory.clone(),
        db: db.clone(),
        database,
        max_queue: max_queue.map(|n| n as usize),
        concurrency: concurrency.map(|n| n as usize),
        repo: cli.repo.clone(),
        classifier: cli.classifier.clone(),
        data_bag_secret: cli.encrypted_data_bag_secret.clone(),
        state_dir: cli.state_dir.clone(),
        current_in_repo: cli.current_state == CurrentStateAt::Repo,
        trust: trust(cli),
    };
    let server = chef_store(cli)?;
    let cookbook_server = match cookbook_source(cli, server.as_ref())? {
        CookbookSource::Server => server.clone(),
        CookbookSource::Repo => None,
    };
    let store: Option<Arc<dyn crate::store::NodeStore>> = match server {
        Some(server) => Some(Arc::new(server)),
        None => None,
    };
    serve(args, store, cookbook_server).map_err(Failure::usage)?;
    Ok(Status::Ok)
}

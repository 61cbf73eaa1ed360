//! The schedule applied: each step on a thread of its own at its time ([`run_schedule`]), each
//! fault applied, held and healed on the single-region world ([`apply`]) or the multi-region one
//! ([`apply_regional`]), and what a step leaves in the events.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::operator::{bounded, operate, operate_by, region_add};
use crate::support::galera::Galera;
use crate::support::nemesis::{Fault, Silence, Slot, Step, TAGS};
use crate::support::{Sandbox, wait_until};
use crate::world::{Events, RegionWorld, Served, World, identity};

/// Runs a schedule: each step on a thread of its own at its time (`offset` after `started`), once
/// its slot is free (steps of one slot never overlap; a client's request waits for nothing).
/// Returns what the steps that panicked said.
pub fn run_schedule(
    steps: &[Step],
    started: Instant,
    offset: Duration,
    apply: impl Fn(&Step) + Sync,
) -> Vec<String> {
    let mut slots: Vec<(Slot, Arc<Mutex<()>>)> = Vec::new();
    for s in steps {
        if !slots.iter().any(|(k, _)| *k == s.fault.slot()) {
            slots.push((s.fault.slot(), Arc::new(Mutex::new(()))));
        }
    }
    let apply = &apply;
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for step in steps {
            let due = offset + step.at;
            std::thread::sleep(due.saturating_sub(started.elapsed()));
            let lock = slots
                .iter()
                .find(|(k, _)| *k == step.fault.slot())
                .map(|(_, l)| l.clone())
                .expect("a slot");
            handles.push(scope.spawn(move || {
                let _held = (step.fault.slot() != Slot::Free)
                    .then(|| lock.lock().unwrap_or_else(|p| p.into_inner()));
                apply(step);
            }));
        }
        handles
            .into_iter()
            .filter_map(|h| h.join().err())
            .map(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            })
            .collect::<Vec<String>>()
    })
}

/// Applies `fault`, holds it, heals it; records both and any silence of a server.
pub fn apply(step: &Step, w: &World<'_>) {
    let World {
        servers,
        galera,
        ensemble,
        db_hosts,
        ev,
        ops,
        url,
    } = *w;
    let began = ev.now();
    ev.note(format!("start {}", step.fault));
    let hold = || std::thread::sleep(step.hold);
    if server_step(step.fault, servers, ev, &hold) {
        return after_step(step, began, ev);
    }
    match step.fault {
        Fault::KillDb(i) => {
            galera.nodes[i].kill();
            hold();
            rejoin(galera, i, ev);
        }
        Fault::LeaveDb(i) => {
            galera.nodes[i].stop();
            hold();
            rejoin(galera, i, ev);
        }
        Fault::PauseDb(i) => {
            galera.nodes[i].pause();
            hold();
            galera.nodes[i].resume();
            wait_for_galera(galera, i);
        }
        Fault::KillRegistry(i) => {
            ensemble.kill(i);
            hold();
            ensemble.restart(i);
        }
        Fault::PauseRegistry(i) => {
            ensemble.pause(i);
            hold();
            ensemble.resume(i);
        }
        Fault::CutDbHost(i) => {
            db_hosts[i].cut();
            hold();
            db_hosts[i].heal();
            wait_for_galera(galera, i);
        }
        Fault::Tag { tag, op } => operate(ops, url, TAGS[tag], op, ev),
        other => panic!("not a fault of the single-region nemesis: {other}"),
    }
    after_step(step, began, ev);
}

/// Applies a step that needs only the servers (a fault of one server's process, link or clock;
/// a client's batch; a restart), holding it with `hold`: false for any other step.
fn server_step(fault: Fault, servers: &[Served], ev: &Events, hold: &dyn Fn()) -> bool {
    match fault {
        Fault::KillServer(i) => {
            servers[i].kill();
            hold();
            servers[i].start(ev);
        }
        Fault::PauseServer(i) => {
            servers[i].signal(libc::SIGSTOP);
            hold();
            servers[i].signal(libc::SIGCONT);
        }
        Fault::CutServer(i) => {
            servers[i].host.cut();
            hold();
            servers[i].host.heal();
        }
        Fault::LossyServer {
            server,
            loss,
            delay_ms,
        } => {
            servers[server]
                .host
                .degrade(loss, Duration::from_millis(delay_ms));
            hold();
            servers[server].host.restore();
        }
        Fault::SlowServer { server, delay_ms } => {
            servers[server]
                .host
                .degrade_inbound(0, Duration::from_millis(delay_ms));
            hold();
            servers[server].host.restore();
        }
        Fault::ClockStep { server, ms } => {
            servers[server].clock.set_ms(ms);
            hold();
            servers[server].clock.set_ms(0);
        }
        Fault::Batch {
            server, tag, count, ..
        } => {
            if let Some(r) = servers[server].ask(TAGS[tag], count, None) {
                ev.note(format!("  {r}"));
                ev.records.lock().unwrap().push(r);
            }
        }
        Fault::DropBatch {
            server,
            tag,
            count,
            after_bytes,
        } => {
            if let Some(r) = servers[server].ask(TAGS[tag], count, Some(after_bytes)) {
                ev.records.lock().unwrap().push(r);
            }
        }
        Fault::Restart {
            server,
            new_identity,
        } => {
            let s = &servers[server];
            if let Some(Err(e)) = s.stop_gracefully() {
                ev.problems.lock().unwrap().push(e);
            }
            if new_identity {
                let n = ev.identities.fetch_add(1, Ordering::SeqCst);
                *s.identity.lock().unwrap() = identity(n);
            }
            s.start(ev);
        }
        _ => return false,
    }
    true
}

/// Records a step that ended: its heal, and the span a server was silent or its lease disturbed
/// or the registry touched.
fn after_step(step: &Step, began: Duration, ev: &Events) {
    if !step.fault.is_action() {
        ev.note(format!("healed {}", step.fault));
    }
    let span = Silence {
        server: 0,
        from: began,
        to: ev.now(),
    };
    if let Some(server) = step.fault.silences() {
        ev.silences.lock().unwrap().push(Silence { server, ..span });
    }
    if let Some(server) = step.fault.disturbs_lease() {
        ev.disturbed
            .lock()
            .unwrap()
            .push(Silence { server, ..span });
    }
    if step.fault.touches_registry() {
        ev.registry_faults
            .lock()
            .unwrap()
            .push((span.from, span.to));
    }
}

/// Starts Galera node `i` again until it joins (a failed state transfer makes the joiner exit:
/// started again, as an operator would, up to three times).
fn rejoin(galera: &Galera, i: usize, ev: &Events) {
    if let Err(log) = galera.rejoin(i, 3) {
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "galera node {i} did not rejoin in three tries:\n{}",
            tail.join("\n")
        );
    }
    ev.note(format!("galera node {i} Synced again"));
}

/// Waits (bounded) until Galera node `i` is back in the primary component and Synced, so the
/// next fault on the database side does not take a second node from a cluster missing one.
fn wait_for_galera(galera: &Galera, i: usize) {
    let whole = wait_until(Duration::from_secs(90), || {
        galera.status(i, "wsrep_local_state_comment") == "Synced" && galera.size_seen_by(i) == 3
    });
    assert!(whole, "galera node {i} did not rejoin within 90 s");
}

/// Applies a step of the multi-region schedule, holds it, heals it.
pub fn apply_regional(step: &Step, w: &RegionWorld<'_>) {
    let RegionWorld {
        servers,
        deployment,
        ev,
    } = *w;
    let began = ev.now();
    ev.note(format!("start {}", step.fault));
    let hold = || std::thread::sleep(step.hold);
    if !server_step(step.fault, servers, ev, &hold) {
        match step.fault {
            Fault::PauseDb(r) => {
                deployment.sites[r].db.pause();
                hold();
                deployment.sites[r].db.resume();
            }
            Fault::PauseRegistry(r) => {
                deployment.sites[r].registry.pause();
                hold();
                deployment.sites[r].registry.resume();
            }
            Fault::KillDb(r) => {
                deployment.sites[r].db.kill();
                hold();
                deployment.sites[r].db.restart();
            }
            Fault::KillRegistry(r) => {
                deployment.sites[r].registry.kill();
                hold();
                deployment.sites[r].registry.restart();
            }
            Fault::CutRegion(r) => {
                deployment.cut(r);
                hold();
                deployment.heal(r);
            }
            Fault::RegionTag { region, tag, op } => {
                let site = &deployment.sites[region];
                let home = Sandbox::new();
                let leafctl = |args: &[&str]| {
                    let mut c = site.leafctl(&home);
                    c.args(args);
                    bounded(site.db_host.wrap(&c))
                };
                operate_by(&leafctl, TAGS[tag], op, ev, true);
            }
            Fault::RegionAdd { region } => region_add(deployment, region, ev),
            other => panic!("not a fault of the multi-region nemesis: {other}"),
        }
    }
    after_step(step, began, ev);
}

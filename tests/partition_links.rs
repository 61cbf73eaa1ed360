//! Network partitions on a real network (issue 17), part 2: segment mode cut off from its
//! database, a Galera node cut off, a bad link (loss and delay) between servers and their stores,
//! and the clients' host cut off rather than the server's. Every process runs on a host of a
//! private network of namespaces (`support::netns`); see RELIABILITY.md, "Network partitions".

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use support::netns::Net;

/// The harness itself: two hosts talk; a cut stops it and a heal restores it; a degraded link
/// drops and delays; dropping the net removes every namespace it made.
#[test]
fn a_private_network_cuts_heals_degrades_and_cleans_up() {
    let net = Net::new();
    let a = net.host();
    let b = net.impaired_host();
    let names: Vec<String> = [a.ns(), b.ns()].iter().map(|s| s.to_string()).collect();
    let listener = b.within(|| TcpListener::bind(b.addr(7000)).expect("bind"));
    // Echoes 4 bytes per connection; ends with the test process (it blocks in accept).
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4];
            if s.read_exact(&mut buf).is_ok() {
                let _ = s.write_all(&buf);
            }
        }
    });
    let target = b.addr(7000);
    let echo = || {
        a.within(|| {
            let started = Instant::now();
            let mut s = TcpStream::connect_timeout(&target, Duration::from_secs(2))?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            s.write_all(b"ping")?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf)?;
            assert_eq!(&buf, b"ping");
            Ok::<Duration, std::io::Error>(started.elapsed())
        })
    };
    let fast = echo().expect("the hosts talk");
    b.cut();
    assert!(echo().is_err(), "a cut host is unreachable");
    b.heal();
    assert!(
        support::wait_until(Duration::from_secs(10), || echo().is_ok()),
        "a healed host is reachable again"
    );
    b.degrade(0, Duration::from_millis(200));
    let slow = echo().expect("a slow link still works");
    // A connect and an exchange: at least two round trips of 2 x 200 ms.
    assert!(slow >= Duration::from_millis(800), "{slow:?}");
    b.restore();
    let (forwarded, _) = b.link_counts();
    assert!(forwarded > 0);
    b.degrade(100, Duration::ZERO);
    assert!(echo().is_err(), "a link losing everything is cut");
    b.restore();
    assert!(support::wait_until(Duration::from_secs(10), || echo().is_ok()));
    let (_, dropped) = b.link_counts();
    assert!(dropped > 0);
    eprintln!("echo {fast:?} on a clean link, {slow:?} with 200 ms each way");
    drop(net);
    for ns in names {
        assert!(
            !std::path::Path::new("/run/netns").join(&ns).exists(),
            "{ns} is left behind"
        );
    }
}

//! A TCP proxy on loopback between a client and a database server, for what the network does
//! to a claim: it counts round trips (each time the client speaks again after the server
//! answered) and can delay every chunk in each direction, as a database in another zone or
//! region is far away. Its threads stop when the handle is dropped.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// A running proxy.
pub struct Proxy {
    pub port: u16,
    state: Arc<State>,
}

struct State {
    stop: AtomicBool,
    /// Client turns: a client chunk after a server chunk (or the first) on a connection.
    round_trips: AtomicU64,
    /// Delay of each chunk in each direction, in microseconds.
    delay_us: AtomicU64,
}

impl Proxy {
    /// Forwards 127.0.0.1:<port> to `target`.
    pub fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy bind");
        let port = listener.local_addr().expect("proxy addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let state = Arc::new(State {
            stop: AtomicBool::new(false),
            round_trips: AtomicU64::new(0),
            delay_us: AtomicU64::new(0),
        });
        let st = state.clone();
        std::thread::spawn(move || {
            while !st.stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let Ok(server) = TcpStream::connect(target) else {
                            continue;
                        };
                        connect_pair(client, server, st.clone());
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy { port, state }
    }

    /// The address clients connect to.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Round trips counted so far, over every connection.
    pub fn round_trips(&self) -> u64 {
        self.state.round_trips.load(Ordering::SeqCst)
    }

    /// Delays every chunk by `each_way` in both directions from now on (a round trip of twice
    /// that).
    pub fn set_delay(&self, each_way: Duration) {
        self.state
            .delay_us
            .store(each_way.as_micros() as u64, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
    }
}

/// Which side spoke last on a connection: a client chunk after the server's is a new turn.
struct Turns {
    server_spoke: AtomicBool,
}

fn connect_pair(client: TcpStream, server: TcpStream, st: Arc<State>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let turns = Arc::new(Turns {
        server_spoke: AtomicBool::new(true),
    });
    let pipe = |from: TcpStream, to: TcpStream, from_client: bool| {
        let (st, turns) = (st.clone(), turns.clone());
        std::thread::spawn(move || copy(from, to, from_client, &st, &turns));
    };
    match (client.try_clone(), server.try_clone()) {
        (Ok(c2), Ok(s2)) => {
            pipe(client, server, true);
            pipe(s2, c2, false);
        }
        _ => {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
    }
}

fn copy(mut from: TcpStream, mut to: TcpStream, from_client: bool, st: &State, turns: &Turns) {
    let _ = from.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if st.stop.load(Ordering::Relaxed) {
            break;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => break,
        };
        if from_client {
            if turns.server_spoke.swap(false, Ordering::SeqCst) {
                st.round_trips.fetch_add(1, Ordering::SeqCst);
            }
        } else {
            turns.server_spoke.store(true, Ordering::SeqCst);
        }
        let delay = st.delay_us.load(Ordering::Relaxed);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay));
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

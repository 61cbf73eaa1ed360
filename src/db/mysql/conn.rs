//! The store's pooled connections, checked before use and shut down after a failure.

/// A pooled connection whose socket can be shut down after a connection-level failure (a read
/// that timed out, a broken stream). The driver keeps such a connection and may hand it out
/// again; a late reply to the abandoned statement would then be read as the answer to the next
/// one. Shut down, every further use fails at once (the transaction's rollback included) and
/// the pool discards it when it comes back.
pub(super) struct Checked {
    pub(super) conn: mysql::PooledConn,
    pub(super) poison: Poison,
    /// The host of the list it is connected to.
    pub(super) host: usize,
}

/// The socket of a [`Checked`] connection, to shut down while the connection is borrowed.
#[derive(Clone, Copy)]
pub(super) struct Poison {
    #[cfg(unix)]
    fd: std::os::unix::io::RawFd,
}

impl Poison {
    /// Whether the socket is still open with nothing unread: a peek that would block. A socket
    /// shut down here, closed by the server, or holding bytes nobody asked for is not (one
    /// system call, no round trip).
    pub(super) fn alive(&self) -> bool {
        #[cfg(unix)]
        {
            let mut byte = 0u8;
            // SAFETY: recv(2) with MSG_PEEK into a one-byte buffer on a socket the pooled
            // connection owns and keeps open; it reads nothing out of the stream.
            let n = unsafe {
                libc::recv(
                    self.fd,
                    (&mut byte as *mut u8).cast(),
                    1,
                    libc::MSG_PEEK | libc::MSG_DONTWAIT,
                )
            };
            n < 0
                && matches!(
                    std::io::Error::last_os_error().kind(),
                    std::io::ErrorKind::WouldBlock
                )
        }
        #[cfg(not(unix))]
        true
    }

    pub(super) fn poison(&self) {
        #[cfg(unix)]
        // SAFETY: shutdown(2) on the descriptor of a socket the pooled connection owns and
        // keeps open; it only ends the connection, the descriptor stays valid until the
        // driver closes it.
        unsafe {
            libc::shutdown(self.fd, libc::SHUT_RDWR);
        }
    }
}

impl Checked {
    /// Drops the connection for good: shut down, and reset when it goes back, which fails, so
    /// the pool lets it go.
    pub(super) fn discard(mut self) {
        self.conn.reset_connection(true);
        self.poison.poison();
    }

    pub(super) fn new(conn: mysql::PooledConn, host: usize) -> Checked {
        #[cfg(unix)]
        let poison = Poison {
            fd: std::os::unix::io::AsRawFd::as_raw_fd(&*conn),
        };
        #[cfg(not(unix))]
        let poison = Poison {};
        Checked { conn, poison, host }
    }
}
